"""What ran: every record made by the same code (the digest of the package and workflow), no job
made with an import hook or compiled code that is not its source
(:mod:`tailgate.prereg.runtime`), the run ledger's chain of lines, and no artifact made by an
exploratory run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tailgate.prereg.lock import Lock
from tailgate.safe_read import load_json

from .findings import Check


def check_ledger(rd: Path, lock: Lock | None) -> Check:
    """The run ledger's lines follow each other (its bytes are checked with every artifact),
    and it still holds the run each amendment recorded as its head."""
    from tailgate.ledger import missing_heads, read_ledger, verify_ledger

    problems = verify_ledger(rd)
    problems += missing_heads(rd, lock.chain if lock is not None else [])
    runs = 0 if problems else len(read_ledger(rd))
    return Check(
        "run ledger",
        f"{runs} run(s) in a chain of line hashes, holding every amendment's recorded head",
        problems,
    )


def check_confirmatory(rd: Path, records: list[Any]) -> Check:
    """No artifact was made by an exploratory run, and no exploratory run of the study came
    before its confirmatory ones (its data were seen before the registration was committed;
    :mod:`tailgate.prereg.committed`)."""
    from tailgate.ledger import LEDGER, read_ledger
    from tailgate.prereg.committed import EXPLORATORY

    fails: list[str] = []
    made = [str(r.path) for r in records if r.content.get("mode") == EXPLORATORY]
    if made:
        fails.append(
            f"{rd}: {len(made)} artifact(s) were made by an exploratory run (e.g. "
            f"{', '.join(made[:3])}): the registration was not required to be committed, so "
            "they are not a confirmatory result. Fix: commit the registration and run the "
            "workflow again (it re-runs every job)"
        )
    runs = [
        line.get("run")
        for line in read_ledger(rd)
        if isinstance(line, dict) and line.get("mode") == EXPLORATORY
    ]
    if runs and not made:
        fails.append(
            f"{rd / LEDGER}: run(s) {', '.join(map(str, runs))} of this study were exploratory: "
            "its data were seen before the registration was committed, so a later run is not a "
            "confirmatory test of the registered plan"
        )
    detail = "every artifact made by a run of the committed registration"
    return Check("confirmatory", detail, fails)


def mode_of(rd: Path, artifact: Path) -> str:
    """The run mode an artifact's provenance record names (confirmatory when it names none)."""
    from tailgate.prereg.committed import CONFIRMATORY
    from tailgate.provenance import record_path

    try:
        content = load_json(record_path(artifact, rd))
    except (OSError, ValueError):
        return CONFIRMATORY  # a missing or damaged record fails the artifact check
    return str(content.get("mode", CONFIRMATORY)) if isinstance(content, dict) else CONFIRMATORY


def check_code(records: list[Any]) -> Check:
    from tailgate.code import code_digest
    from tailgate.ledger import LEDGER

    groups: dict[str | None, list[str]] = {}
    for r in records:
        if str(r.path) == LEDGER:  # re-recorded by every run, whatever code ran its jobs
            continue
        digest = (r.content.get("code") or {}).get("digest")
        groups.setdefault(digest, []).append(str(r.path))
    fails, notes = [], []
    if None in groups:
        paths = groups.pop(None)
        fails.append(
            f"{len(paths)} record(s) carry no code digest, e.g. {paths[0]} (made by an older "
            "tailgate or written by hand); re-run the workflow"
        )
    if len(groups) > 1:
        parts = [
            f"{d[:12]}… ({len(p)} file(s), e.g. {p[0]})"
            for d, p in sorted(groups.items(), key=lambda kv: -len(kv[1]))
        ]
        fails.append(
            "the study's artifacts were made by different code: " + "; ".join(parts) + ". Re-run "
            "the whole workflow with one version ('snakemake --forceall'), or compare with "
            "'tailgate audit --reproduce'"
        )
    mine = code_digest()
    if groups and set(groups) != {mine}:
        notes.append(
            f"made by code {', '.join(d[:12] + '…' for d in groups if d)}, not the auditor's "
            f"{mine[:12]}…; 'tailgate audit --reproduce' re-runs the stages with the auditor's code"
        )
    detail = f"{len(records)} record(s), {len(groups)} code digest(s)"
    return Check("code", detail, fails, notes)


def check_runtime(records: list[Any]) -> Check:
    from tailgate.prereg.runtime import check_runtime

    fails, notes = check_runtime(records)
    detail = "modules loaded, compiled files and import hooks of every job"
    return Check("runtime", detail, fails, notes)
