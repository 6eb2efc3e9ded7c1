"""What ran: every record made by the same code (the digest of the package and workflow), no job
made with an import hook or compiled code that is not its source
(:mod:`tailgate.runtime.fingerprint`), the run ledger's chain of lines, and no artifact made by an
exploratory run.

**Run results** (:func:`check_results`): each run's ledger line records the SHA-256 of every
artifact when the run ended (:func:`tailgate.runs.ledger.run_results`), and the line is hash-chained
and vouched for by its receipt. The folder must be as the newest successful run left it: a file
whose recorded SHA-256 (the artifact check holds each file to its record) is not the one that run
recorded, a file it recorded that is gone, or one it did not record, fails, naming the file. And
every run is deterministic (the same registration, data, code and versions give the same bytes,
whatever the cores), so two successful runs of the same code digest, lock entry (which pins the
inputs) and numeric versions, with no run of other ones between them, that recorded different
digests for one file mean that one of them was not made by that procedure: a failure naming the
file and both runs. Runs of other code, after an amendment, in other versions, exploratory,
failed or interrupted ones are not compared; a partial re-run keeps the digests of what it did not
re-make. A study that computes with models (the transformers backend, registered models, a
Detoxify scorer) is the exception: float32 model arithmetic rounds with the device and batch
shape, which the registration leaves free, so its disagreements are notes, and ``--reproduce``
compares its model outputs within tolerance. A line written by an older tailgate records no
digests: a note, not a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tailgate.code import code_digest
from tailgate.files.safe_read import load_json
from tailgate.prereg.committed import CONFIRMATORY, EXPLORATORY
from tailgate.prereg.lock import Lock
from tailgate.runs.ledger import LEDGER, missing_heads, read_ledger, run_results, verify_ledger
from tailgate.runtime.environment import NUMERIC_PACKAGES
from tailgate.runtime.provenance import record_path

from .findings import Check


def check_ledger(rd: Path, lock: Lock | None) -> Check:
    """The run ledger's lines follow each other (its bytes are checked with every artifact),
    and it still holds the run each amendment recorded as its head."""
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
    try:
        content = load_json(record_path(artifact, rd))
    except (OSError, ValueError):
        return CONFIRMATORY  # a missing or damaged record fails the artifact check
    return str(content.get("mode", CONFIRMATORY)) if isinstance(content, dict) else CONFIRMATORY


def check_code(records: list[Any]) -> Check:
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
    from tailgate.runtime.fingerprint import check_runtime

    fails, notes = check_runtime(records)
    detail = "modules loaded, compiled files and import hooks of every job"
    return Check("runtime", detail, fails, notes)


#: how many files a failure lists by name before it counts the rest
_NAMED = 20


def _numerics(run: dict[str, Any]) -> dict[str, set[str]]:
    """Per package that can change a number or a byte, the versions the run's jobs ran with."""
    out: dict[str, set[str]] = {}
    envs = run.get("environments")
    for env in envs if isinstance(envs, list) else []:
        for name, version in env.items() if isinstance(env, dict) else []:
            if name in NUMERIC_PACKAGES:
                out.setdefault(str(name), set()).add(str(version))
    return out


def _same_procedure(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two runs ran one procedure: the same mode, code digest, lock entry (the
    registration and the inputs it pins) and, in every package both name, numeric versions."""
    head_a, head_b = a.get("lock_head"), b.get("lock_head")
    if not (isinstance(head_a, dict) and isinstance(head_b, dict)):
        return False
    if a.get("code_digest") is None or head_a.get("entry_hash") is None:
        return False
    if (a.get("mode"), a.get("code_digest"), head_a.get("entry_hash")) != (
        b.get("mode"),
        b.get("code_digest"),
        head_b.get("entry_hash"),
    ):
        return False
    va, vb = _numerics(a), _numerics(b)
    return all(va[k] == vb[k] for k in va.keys() & vb.keys())


def _with_models(lock: Lock | None, entry_hash: Any) -> bool:
    """Whether the registration at that lock entry computes with models (module docstring)."""
    entry = next(
        (e for e in (lock.chain if lock is not None else []) if e.get("entry_hash") == entry_hash),
        None,
    )
    data = entry.get("prereg") if isinstance(entry, dict) else None
    if not isinstance(data, dict):
        return False
    backend = (data.get("data") or {}).get("backend")
    scorers = data.get("scorers") or []
    return bool(
        data.get("models")
        or backend == "transformers"
        or any(isinstance(s, dict) and s.get("kind") == "detoxify" for s in scorers)
    )


def _named(lines: list[str]) -> list[str]:
    if len(lines) <= _NAMED:
        return lines
    return [*lines[:_NAMED], f"… and {len(lines) - _NAMED} more file(s)"]


def _unbound(
    rd: Path, runs: list[Any], bound: list[Any], last: int, now: dict[str, str]
) -> list[str]:
    """Each file whose digest now is not the one run ``last`` recorded when it ended."""
    recorded = bound[last]
    n = last + 1
    out = []
    for path in sorted(recorded.keys() | now.keys()):
        was, is_ = recorded.get(path), now.get(path)
        if was == is_:
            continue
        later = next(
            (
                j + 1
                for j in range(len(runs) - 1, last, -1)
                if bound[j] is not None and bound[j].get(path) == is_
            ),
            None,
        )
        why = (
            f" (run {later}, which ended '{runs[later - 1].get('outcome')}', left it so: run "
            "the workflow to the end)"
            if later is not None
            else " (changed after the run, or made by a run the ledger does not hold)"
        )
        if was is None:
            out.append(f"{rd / path}: not among the files run {n} recorded when it ended{why}")
        elif is_ is None:
            out.append(f"{rd / path}: recorded by run {n} when it ended, and gone now{why}")
        else:
            out.append(
                f"{rd / path}: its SHA-256 {is_[:12]}… is not the {was[:12]}… run {n} recorded "
                f"when it ended{why}"
            )
    return _named(out)


def check_results(rd: Path, records: list[Any], lock: Lock | None) -> Check:
    """The files are the newest successful run's, and two successful runs of one procedure
    agree on every file (module docstring)."""
    runs = read_ledger(rd)
    bound, problems = run_results(runs)
    fails = [f"{rd / LEDGER}: {p}" for p in problems]
    notes: list[str] = []
    older = [i + 1 for i, r in enumerate(runs) if "results" not in r]
    newer = [i + 1 for i, r in enumerate(runs) if "results" in r]
    if older and newer and max(older) > min(newer):
        fails.append(
            f"{rd / LEDGER}: run(s) {', '.join(map(str, (i for i in older if i > min(newer))))} "
            f"record no digests of their results after run {min(newer)} did (every run since "
            "records them): the line was written or edited by hand"
        )
    elif older:
        notes.append(
            f"run(s) {', '.join(map(str, older))} of {rd / LEDGER} record no digests of their "
            "results (written by an older tailgate): the results are bound from the next run on"
        )
    for i, r in enumerate(runs):
        if "results" in r and r["results"] is None:
            fails.append(
                f"{rd / LEDGER}: run {i + 1} recorded no digests of its results (a provenance "
                "record could not be read when it ended). Fix: run the workflow again"
            )
    success = [i for i, r in enumerate(runs) if r.get("outcome") == "success"]
    last = success[-1] if success else None
    if last is not None and bound[last] is not None:
        now = {str(r.path): str(r.content.get("sha256")) for r in records if str(r.path) != LEDGER}
        fails += _unbound(rd, runs, bound, last, now)
    # successive successful runs of one procedure, no run of another between them
    start = 0
    for i in range(1, len(runs)):
        if not _same_procedure(runs[i - 1], runs[i]):
            start = i
            continue
        if runs[i].get("outcome") != "success" or bound[i] is None:
            continue
        prev = next(
            (j for j in range(i - 1, start - 1, -1) if runs[j].get("outcome") == "success"), None
        )
        if prev is None or bound[prev] is None:
            continue
        a, b = bound[prev], bound[i]
        differ = sorted(p for p in a.keys() & b.keys() if a[p] != b[p])
        if not differ:
            continue
        said = [
            f"{rd / p}: run {prev + 1} recorded {a[p][:12]}…, run {i + 1} {b[p][:12]}…, with the "
            "same code, lock entry and versions"
            for p in differ
        ]
        if _with_models(lock, runs[i]["lock_head"].get("entry_hash")):
            notes.append(
                f"runs {prev + 1} and {i + 1} of one procedure made {len(differ)} file(s) "
                f"differently (e.g. {rd / differ[0]}); the study computes with models, whose "
                "float32 arithmetic rounds with the device and batch shape: 'tailgate audit "
                "--reproduce' compares them within tolerance"
            )
            continue
        fails += _named(said)
        fails.append(
            f"{rd / LEDGER}: runs {prev + 1} and {i + 1} ran one deterministic procedure (code "
            f"{str(runs[i].get('code_digest'))[:12]}…, lock entry "
            f"{runs[i]['lock_head'].get('seq')}) and disagree on {len(differ)} file(s): one of "
            "them was not made by it (results forged, or a non-deterministic job); 'tailgate "
            "audit --reproduce' shows which of them the data give"
        )
    n = sum(b is not None for b in bound)
    detail = (
        f"{n} run(s) recording their results' digests; the files are the newest successful "
        "run's, and runs of one procedure agree"
    )
    return Check("run results", detail, fails, notes)
