"""An honest study audits clean on a reviewer's machine with other versions of the dependencies.

The study is run with this environment's versions; the audit runs in a second environment with
the lowest versions ``pyproject.toml`` declares (a resolver's lowest-direct mode, packages from
PyPI), plain and ``--reproduce``: both pass, listing the environment differences. The same study
with one plotted number and one table value changed (their records re-hashed, as an attacker
would) fails there, naming both values.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from attack_project import REPO_ROOT, Project

pytestmark = pytest.mark.slow

AUDIT_FAILED = 4
INDEX = "https://pypi.org/simple/"


def _index_reachable() -> str | None:
    """Why the package index cannot be reached, or None when it can."""
    try:
        with urllib.request.urlopen(INDEX + "uv/", timeout=60) as res:
            res.read(1)
    except OSError as exc:
        return f"{INDEX} unreachable ({exc})"
    return None


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)


def _lowest_environment(where: Path) -> Path:
    """A virtual environment with the lowest versions pyproject.toml allows; its python."""
    why = _index_reachable()
    if why is not None:
        pytest.skip(f"needs the package index to build the lowest-version environment: {why}")
    uv = shutil.which("uv")
    if uv is None:  # the resolver itself, from the index
        tool = where / "resolver"
        assert _run([sys.executable, "-m", "venv", str(tool)]).returncode == 0
        res = _run([str(tool / "bin" / "python"), "-m", "pip", "install", "-q", "uv"])
        assert res.returncode == 0, res.stderr[-2000:]
        uv = str(tool / "bin" / "uv")
    env = where / "lowest"
    res = _run([uv, "venv", "-q", "-p", sys.executable, str(env)])
    assert res.returncode == 0, res.stderr[-2000:]
    python = env / "bin" / "python"
    install = ["pip", "install", "-q", "-p", str(python), "--resolution", "lowest-direct"]
    source = ["--index-url", INDEX, "-r", str(REPO_ROOT / "pyproject.toml")]
    res = _run([uv, *install, *source])
    assert res.returncode == 0, res.stderr[-3000:]
    return python


def _audit(python: Path, proj: Project, *args: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "workflow")}
    env.pop("VIRTUAL_ENV", None)
    res = _run(
        [str(python), "-m", "tailgate.cli", "audit", f"results/{proj.name}", *args],
        cwd=proj.root,
        env=env,
    )
    return res.returncode, res.stdout + res.stderr


def _version(python: Path, package: str) -> str:
    res = _run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"]
    )
    return res.stdout.strip()


def _rehash(proj: Project, rel: str) -> None:
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path, rows_digest

    f = proj.results / rel
    rec_file = record_path(f, proj.results)
    rec = json.loads(rec_file.read_text())
    rec["sha256"], rec["bytes"] = sha256_file(f), f.stat().st_size
    if "rows_digest" in rec:
        rec["rows_digest"] = rows_digest(f).to_json()
    rec_file.write_text(json.dumps(rec))


def test_an_honest_study_audits_clean_with_the_lowest_declared_versions(
    bundled_run: Project, tmp_path: Path
) -> None:
    """The attack study with fewer bootstrap resamples, as the review bundle's tests run it
    (a copy of that run), audited in the lowest-version environment."""
    python = _lowest_environment(tmp_path)
    proj = bundled_run.copy(tmp_path / "study")
    mine, theirs = _version(Path(sys.executable), "numpy"), _version(python, "numpy")
    assert mine and theirs and mine != theirs, (mine, theirs)

    code, out = _audit(python, proj)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[1].startswith("[ok] environment: tolerant"), lines[:3]  # printed first
    assert f"numpy {mine} → {theirs}" in out
    assert "[ok] outcome: 3 document(s) (gates, sensitivity, analyses, verdict.json) and the" in out
    assert (
        "[ok] report: re-rendered from the re-made verdict and stored statistics, compared by"
        in out
    )
    assert "pictures by their pixels" in out  # every picture drawn again and compared

    scratch = tmp_path / "reproduction"  # kept: the forged copy below is compared with it too
    code, out = _audit(python, proj, "--reproduce", "--keep", str(scratch))
    assert code == 0, out
    assert "reproduce:" in out and "compared with a re-run from the data, by content" in out

    # one plotted number (ξ̂ at the first scanned threshold) and one table value changed
    forged = proj.copy(tmp_path / "forged")
    fit = forged.results / "fits" / "tox" / "logit" / "base.json"
    doc = json.loads(fit.read_text())
    doc["stability"]["xi"][0] += 0.05
    fit.write_text(json.dumps(doc))
    _rehash(forged, "fits/tox/logit/base.json")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from tailgate.files.atomic import write_parquet

    rel = "scores/tox/heavy/shard-0.parquet"
    table = pq.read_table(forged.results / rel)
    scores = table.column("score").to_pylist()
    scores[7] = min(scores[7] + 0.01, 1.0)
    table = table.set_column(1, "score", pc.cast(scores, table.schema.field("score").type))
    write_parquet(forged.results / rel, table)
    _rehash(forged, rel)

    code, out = _audit(python, forged)
    assert code == AUDIT_FAILED, out
    assert "figures/stability.json: differs from the report re-rendered" in out
    assert "$.content.plots.scans.base.xi[0]" in out

    code, out = _audit(python, forged, "--reproduce", "--keep", str(scratch))
    assert code == AUDIT_FAILED, out
    assert f"{rel}: differs from its reproduction: column 'score', row 7" in out
    assert f"numpy {mine} → {theirs}" in out  # the versions named beside the value
