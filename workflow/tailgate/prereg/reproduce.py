"""``tailgate audit --reproduce``: re-run every derived stage from the data, compare every file.

The audit re-derives verdicts from stored statistics; this re-derives the statistics themselves.
A scratch project receives the registration, its lock and the files it pins; the study's data
enters it as follows, and then the project's own Snakemake DAG (the auditor's ``Snakefile`` and
``tailgate`` package — the same stage functions, not a second implementation) runs to the end:

* ``simulate`` and ``import`` backends: nothing is copied — the data is made again from the
  registered seed, or from the pinned import file;
* ``transformers`` backend: the recorded prompts, generations and scores are copied as they are
  (re-generating needs the models and their hardware), and everything after them is re-run.

Every file of the study (``logs/``, ``provenance/`` and the run ledger aside, whose times differ
by nature) is then compared with its reproduction (:mod:`tailgate.prereg.compare`): byte for byte
when the versions recorded with the file are the auditor's (runs are byte-identical across cores
and reruns, so any difference means the stored results were not made by this code from this data
under this registration); by decoded value otherwise — tables and statistics with floats within
a few ULP, the report by its text and what its figures plot — since other versions of pyarrow or
matplotlib write other bytes for the same values. Each differing, missing or extra file is a
failure naming it, and a differing value names itself and the versions.
``tailgate env RESULTS`` writes the recorded versions as a requirements file, to audit in the
recorded environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tailgate.errors import TailgateError
from tailgate.ledger import LEDGER
from tailgate.prereg.audit import AuditReport, Check, _files, _prereg_of
from tailgate.prereg.committed import commit_registration
from tailgate.prereg.compare import compare_made
from tailgate.prereg.pins import project_root, registered_paths
from tailgate.prereg.study import load, lock_path_for

__all__ = ["reproduce", "snakefile"]

#: Where recorded data is copied from for the transformers backend (relative to results/<study>).
_RECORDED_DATA = ("prompts.parquet", "prompts.digest.json", "generations", "scores")


def snakefile() -> Path:
    """The ``Snakefile`` beside the imported ``tailgate`` package (the auditor's workflow)."""
    import tailgate

    return Path(tailgate.__file__).resolve().parent.parent.parent / "Snakefile"


def _copy_pinned(study: object, src_root: Path, dst_root: Path) -> None:
    for text, _ in registered_paths(study).values():
        p = Path(os.path.expanduser(text))
        if p.is_absolute():
            continue  # outside the project: the scratch project reads it where it is
        src, dst = src_root / p, dst_root / p
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        elif src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)


def _copy_recorded(rd: Path, dst: Path) -> list[str]:
    """Copy the recorded data (and its records) of a transformers study; return what."""
    from tailgate.provenance import record_path

    copied = []
    stamp = time.time() - 3600  # older than anything the run writes
    for rel in _files(rd):
        if rel.split("/")[0] not in _RECORDED_DATA:
            continue
        for src in (rd / rel, record_path(rd / rel, rd)):
            target = dst / src.relative_to(rd)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
            os.utime(target, (stamp, stamp))
        copied.append(rel)
    return copied


def _write_config(prereg: Path, dest: Path, name: str) -> None:
    """Default operational settings with ``study`` set to this study: the re-run never reads
    the project's ``config/config.yaml``, so no operational setting there can shape the
    results it is compared with (every result is independent of them)."""
    import yaml

    del prereg  # the project's own settings are deliberately not read
    dest.write_text(yaml.safe_dump({"study": name}, sort_keys=False), encoding="utf-8")


def reproduce(
    report: AuditReport, *, cores: int = 2, keep: str | Path | None = None
) -> AuditReport:
    """``report`` plus a ``reproduce`` check (module docstring)."""
    rd = report.results_dir
    prereg = _prereg_of(rd)
    try:
        study = load(prereg)
    except TailgateError as exc:
        return AuditReport(rd, [*report.checks, Check("reproduce", "not run", [str(exc)])])
    scratch = Path(keep) if keep is not None else Path(tempfile.mkdtemp(prefix="tailgate-repro-"))
    try:
        check = _run(rd, study, prereg, scratch, cores)
    finally:
        if keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return AuditReport(rd, [*report.checks, check])


def _run(rd: Path, study: object, prereg: Path, root: Path, cores: int) -> Check:
    name = rd.name
    (root / "preregistrations").mkdir(parents=True, exist_ok=True)
    (root / "config").mkdir(exist_ok=True)
    shutil.copy2(prereg, root / "preregistrations" / prereg.name)
    shutil.copy2(lock_path_for(prereg), root / "preregistrations" / lock_path_for(prereg).name)
    _write_config(prereg, root / "config" / "config.yaml", name)
    _copy_pinned(study, project_root(prereg), root)
    commit_registration(root, ["preregistrations"])  # a confirmatory re-run
    notes = []
    out = root / "results" / name
    if study.data["data"]["backend"] == "transformers":  # type: ignore[attr-defined]
        copied = _copy_recorded(rd, out)
        notes.append(
            f"{len(copied)} recorded data file(s) (prompts, generations, scores) taken as they "
            "are; every later stage re-run"
        )
    else:
        notes.append("data regenerated from the registration (seed or pinned import file)")
    log = root / "reproduce.log"
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(snakefile()), "-d", str(root),
        "--cores", str(cores), "--rerun-triggers", "mtime", "--quiet", "rules",
    ]  # fmt: skip
    print(
        f"tailgate audit --reproduce: re-running every stage of study {name} in {root} "
        f"(a few minutes; follow it in {log}) …",
        file=sys.stderr,
    )
    started = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        res = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=False, cwd=root)
    wall = time.perf_counter() - started
    if res.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-1500:]
        return Check(
            "reproduce",
            f"the workflow failed in the scratch project (exit {res.returncode})",
            [f"{rd}: the results cannot be reproduced from the data; last lines:\n{tail}"],
            notes,
        )
    fails = []
    own = {LEDGER}  # each run keeps its own history
    mine, theirs = set(_files(rd)) - own, set(_files(out)) - own
    for rel in sorted(mine | theirs):
        if rel not in theirs:
            fails.append(f"{rd / rel}: not produced when the workflow is re-run")
        elif rel not in mine:
            fails.append(f"{rd / rel}: missing from the results (the re-run produces it)")
    both = sorted(mine & theirs)
    found = compare_made(
        rd, [(rel, out / rel) for rel in both], "differs from its reproduction", rerun=True
    )
    notes.append(f"re-run took {wall:.0f} s on {cores} core(s)")
    return Check(
        "reproduce",
        f"{len(mine)} file(s) compared with a re-run from the data, {found.mode}",
        [*fails, *found.failures],
        notes,
    )
