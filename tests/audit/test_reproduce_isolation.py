"""``audit --reproduce`` runs nothing the audited repository chose.

The study pins an import file named ``snakemake.py`` that is a valid CSV and valid Python whose
code writes a marker file; the project also commits a ``numpy.py``, a ``sitecustomize.py`` (the
same polyglot, each with its own marker) and a ``matplotlibrc``. The reviewer's re-run starts in
a scratch folder that already holds a ``numpy.py`` and a ``sitecustomize.py`` beside the pinned
file, where pinned files of those names would lie. No marker may appear, nothing but the
registration, its lock and the pinned file may be taken from the project, and the honest study
must still reproduce.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from attack_project import IMPORT_STUDY, Project, make_project
from git_repo import GIT_ENV
from tailgate.audit.reproduce import _snakemake, _unplaceable

TAILGATE = str(Path(sys.executable).with_name("tailgate"))
STUDY = (
    IMPORT_STUDY.replace("study: imported", "study: polyglot")
    .replace("- name: a", "- name: all")
    .replace("- name: b", "- name: any")
    .replace("pairs: [[a, b]]", "pairs: [[all, any]]")
    .replace("path: data/scores.csv", "path: snakemake.py\n    format: csv")
    .replace(
        "{prompt_id: id, condition: cond, completion: text, score: tox}",
        "{prompt_id: id, condition: type, completion: str, score: abs}",
    )
)


def polyglot(marker: Path) -> str:
    """A CSV of the import study that is also Python: its header and rows are tuples of
    builtins, and one completion calls ``exec`` on code (hex-encoded, no comma) that writes
    ``marker``."""
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')".encode().hex()
    rng = np.random.default_rng(5)
    lines = ["id,type,str,abs"]
    for cond, n in (("all", 3000), ("any", 300)):
        scores = 1.0 / (1.0 + np.exp(-rng.logistic(-4.0, 1.0, n)))
        lines += [f"{i},{cond},repr,{s:.12f}" for i, s in enumerate(scores)]
    lines[5] = lines[5].replace(",repr,", f',exec(bytes.fromhex("{code}").decode()),')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def polyglot_run(tmp_path_factory) -> tuple[Project, Path]:
    """The study registered, committed with its project's polyglots and ``matplotlibrc``, run."""
    root = tmp_path_factory.mktemp("polyglot")
    markers = tmp_path_factory.mktemp("markers")
    proj = make_project(root, "polyglot", STUDY)
    for name in ("snakemake", "numpy", "sitecustomize"):
        (root / f"{name}.py").write_text(polyglot(markers / name))
    (root / "matplotlibrc").write_text("lines.linewidth: 9\nfont.size: 30\n")
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    extra = ("snakemake.py", "numpy.py", "sitecustomize.py", "matplotlibrc")
    proj.commit("Pre-register the study", "preregistrations", *extra)
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj, markers


def test_pinned_python_named_files_never_run_and_the_study_reproduces(polyglot_run, tmp_path):
    proj, markers = polyglot_run
    for marker in markers.iterdir():
        marker.unlink()  # the researcher's own run is the researcher's
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    for name in ("numpy", "sitecustomize"):  # where pinned files of these names would lie
        (scratch / f"{name}.py").write_text(polyglot(markers / f"scratch-{name}"))
    # the installed console script, as a reviewer runs it (``python -m`` would put the
    # project's own folder, with its numpy.py, first on the reviewer's import path)
    res = subprocess.run(
        [TAILGATE, "audit", proj.results, "--reproduce", "--keep", scratch, "--json"],
        cwd=proj.root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    out = res.stdout + res.stderr
    assert sorted(p.name for p in markers.iterdir()) == [], out[-3000:]
    doc = json.JSONDecoder().raw_decode(out, out.index("{"))[0]
    check = next(c for c in doc["checks"] if c["name"] == "reproduce")
    assert check["failures"] == [], check
    assert "compared with a re-run from the data" in check["detail"], check
    assert any(n.startswith("isolated re-run:") for n in check["notes"]), check
    assert "isolated re-run:" in out
    # nothing of the project but the registration, its lock and the pinned file came along
    assert not (scratch / "matplotlibrc").exists()
    assert (scratch / "snakemake.py").read_bytes() == (proj.root / "snakemake.py").read_bytes()
    assert sorted(p.name for p in (scratch / "preregistrations").iterdir()) == [
        "polyglot.lock.json",
        "polyglot.yaml",
    ]


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("data/scores.csv", False),
        ("snakemake.py", False),
        ("sitecustomize.py", False),
        ("matplotlibrc", True),
        (".numba_config.yaml", True),
        (".snakemake/pip-deployments/numpy.py", True),
        (".git/config", True),
        ("results/polyglot/verdict.json", True),
        ("config/config.yaml", True),
        ("../elsewhere.csv", True),
    ],
)
def test_a_pinned_path_where_a_tool_reads_settings_is_refused(path, refused):
    assert (_unplaceable(path) is not None) is refused


def test_the_rerun_reads_no_workflow_profile_the_project_holds(tmp_path):
    """Snakemake reads a workflow profile from ``profiles/default/`` of the folder it runs in,
    where a pinned folder can lie, and a profile sets its options (the study, and resource
    expressions it evaluates as Python): the re-run reads none."""
    (tmp_path / "profiles" / "default").mkdir(parents=True)
    (tmp_path / "profiles" / "default" / "config.yaml").write_text("config: [study=planted]\n")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("study: registered\n")
    code, tail, _ = _snakemake(tmp_path, 1, tmp_path / "rerun.log")
    assert code != 0  # no such study here: what matters is which one it looked for
    assert "preregistrations/registered.yaml" in tail, tail
    assert "planted" not in tail, tail
