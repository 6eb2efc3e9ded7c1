"""The files of a results folder against their provenance records: every file has a record and
every record a file of the recorded size (compared first, from the file's metadata) with the
recorded SHA-256 (tables: which rows changed); recorded inputs still have their hashes and pinned
inputs were the pinned ones; each record's lock entry was the chain head when it was made, under
the plan whose folder holds it.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from tailgate.plans.entries import BRANCH_DIR, HEAD, REGISTERED
from tailgate.prereg.canonical import sha256_file
from tailgate.prereg.lock import Lock, parse_time
from tailgate.prereg.pins import project_root
from tailgate.prereg.study import prereg_for
from tailgate.runtime.provenance import (
    PROVENANCE_DIR,
    RowsDigest,
    iter_records,
    record_path,
    rows_digest,
)

from .findings import Check

SKIP_DIRS = {"provenance", "logs", ".snakemake"}


#: the one kind of file ``logs/`` may hold: the rules' logs (read by people, not audited)
LOG_SUFFIX = ".log"


def _named(record: Path, rd: Path) -> str:
    """A record file by its path inside the provenance folder."""
    return record.relative_to(rd / PROVENANCE_DIR).as_posix()


def read_records(rd: Path, checks: list[Check]) -> list[Any] | None:
    try:
        return iter_records(rd)
    except ValueError as exc:
        checks.append(Check("artifacts", str(rd / PROVENANCE_DIR), [str(exc)]))
        return None


def result_files(rd: Path) -> list[str]:
    """Every file (and link) under ``rd`` outside the skipped folders, relative, sorted. Every
    one must have a provenance record: a file nothing recorded (a report written beside the
    results, Snakemake's own ``--report``) fails the audit, so that nothing under the results
    folder reads as the study's output without being one."""
    out = []
    for dirpath, dirnames, filenames in os.walk(rd, followlinks=False):
        rel_dir = Path(dirpath).relative_to(rd)
        if rel_dir.parts and rel_dir.parts[0] in SKIP_DIRS:
            continue
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in [*filenames, *links]:
            rel = (rel_dir / name).as_posix()
            if rel.split("/")[0] not in SKIP_DIRS:
                out.append(rel)
    return sorted(out)


def stray_logs(rd: Path) -> list[str]:
    """Files under ``logs/`` that are not rule logs (``*.log`` plain files): logs are not
    audited, so nothing else may hide there."""
    out = []
    for dirpath, dirnames, filenames in os.walk(rd / "logs", followlinks=False):
        for name in [
            *filenames,
            *(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))),
        ]:
            path = Path(dirpath) / name
            if path.is_symlink() or not name.endswith(LOG_SUFFIX):
                out.append(
                    f"{path}: not a rule log; logs/ is not audited and may hold only the rules' "
                    f"*{LOG_SUFFIX} files. Fix: move it out of the results folder (write "
                    "Snakemake's --report outside results/)"
                )
    return sorted(out)


def check_artifacts(
    rd: Path,
    records: list[Any],
    lock: Lock | None,
    lock_path: Path,
    first: tuple[datetime, str] | None,
) -> list[Check]:
    by_path: dict[str, Any] = {}
    fails: list[str] = []
    for rec in records:
        rel = str(rec.content.get("path", ""))
        expected_record = record_path(rd / rel, rd)
        if expected_record != Path(rec.record_file):
            fails.append(
                f"{rec.record_file}: record describes '{rel}', which belongs in "
                f"{_named(expected_record, rd)} (record moved or swapped)"
            )
        by_path[rel] = rec
    files = result_files(rd)
    fails.extend(stray_logs(rd))
    hashes: dict[str, str] = {}
    for rel in files:
        rec = by_path.get(rel)
        f = rd / rel
        if f.is_symlink():
            continue  # reported by the results-folder check
        if rec is None:
            fails.append(
                f"{f}: no provenance record ({_named(record_path(f, rd), rd)} is missing or was "
                "deleted)"
            )
            continue
        problem = size_problem(f, rec.content.get("bytes"))
        if problem:  # the cheap comparison first: a file of another size is not hashed
            fails.append(f"{f}: {problem} (edited or replaced after it was recorded)")
            continue
        digest = sha256_file(f)
        hashes[rel] = digest
        if digest != rec.sha256:
            where = ""
            if "rows_digest" in rec.content:
                try:
                    old = RowsDigest(**rec.content["rows_digest"])
                    where = "; " + old.changed_rows(rows_digest(f))
                except Exception as exc:  # unreadable table: say so
                    where = f"; the table cannot be read ({type(exc).__name__})"
            fails.append(
                f"{f}: SHA-256 differs from its provenance record (edited or replaced after it "
                f"was recorded){where}"
            )
    for rel, rec in by_path.items():
        if rel not in hashes and not (rd / rel).is_file():
            fails.append(f"{rd / rel}: recorded in {_named(Path(rec.record_file), rd)} but missing")
    detail = f"first artifact {first[1]}" if first else "no artifacts recorded"
    return [
        Check(
            "artifacts",
            f"{len(files)} file(s) hashed against {len(records)} record(s) (the rules' "
            "*.log files under logs/ are not audited)",
            fails,
        ),
        check_inputs(rd, by_path, hashes, lock),
        check_heads(rd, by_path, lock, lock_path),
        Check("first artifact", detail),
    ]


def size_problem(path: Path, recorded: Any) -> str | None:
    """Why ``path`` cannot be the file its record describes by size alone (``recorded``, the
    record's ``bytes``), read from the file's metadata; None when the sizes agree. A record
    without a size is refused too, so that no file is hashed whose size nothing vouches for (a
    sparse file of a terabyte costs no disk and hours of hashing)."""
    if isinstance(recorded, bool) or not isinstance(recorded, int):
        return (
            f"its provenance record gives no size ('bytes': {recorded!r:.40}), so it was not hashed"
        )
    size = os.stat(path).st_size
    if size != recorded:
        return f"{size} bytes, where its provenance record says {recorded}; the file was not hashed"
    return None


def check_inputs(
    rd: Path, by_path: dict[str, Any], hashes: dict[str, str], lock: Lock | None
) -> Check:
    root = project_root(prereg_for(rd))
    fails = []
    for rel, rec in sorted(by_path.items()):
        entry = None
        if lock is not None:
            head = rec.content.get("prereg", {}).get("lock_head", {})
            plan = rec.content.get("plan")
            if isinstance(plan, dict) and plan.get("name") == "registered":
                head = plan  # computed under entry 0: its inputs are the files entry 0 pinned
            entry = lock.entry_by_hash(str(head.get("entry_hash")))
        pinned = {}
        for p in (entry or {}).get("pins", {}).values():
            q = Path(os.path.expanduser(p["path"]))
            pinned[os.path.realpath(q if q.is_absolute() else root / q)] = p
        for inp in rec.content.get("inputs", []):
            irel = inp.get("artifact")
            if irel is None:
                q = Path(str(inp.get("path")))
                pin = pinned.get(os.path.realpath(q if q.is_absolute() else root / q))
                if pin is not None and pin.get("sha256") != inp.get("sha256"):
                    fails.append(
                        f"{rd / rel}: made from {inp.get('path')} with SHA-256 "
                        f"{str(inp.get('sha256'))[:12]}…, but the registration pins "
                        f"{pin['sha256'][:12]}… (the input file was not the registered one)"
                    )
                continue
            now = hashes.get(irel)
            if now is None:
                if not (rd / irel).is_file():
                    fails.append(f"{rd / rel}: its input {rd / irel} is missing")
            elif now != inp["sha256"]:
                fails.append(
                    f"{rd / rel}: its input {rd / irel} changed after it was produced "
                    f"(recorded {inp['sha256'][:12]}…, now {now[:12]}…)"
                )
    return Check("inputs", "recorded inputs: artifacts and pinned files", fails)


def check_heads(rd: Path, by_path: dict[str, Any], lock: Lock | None, lock_path: Path) -> Check:
    fails: list[str] = []
    notes: list[str] = []
    if lock is None:
        fails.append(f"{lock_path}: no verified lock, so no artifact can be tied to a registration")
        return Check("chain head at production", "each record's lock entry and time", fails)
    times = [parse_time(e["time"]) for e in lock.chain]
    for rel, rec in sorted(by_path.items()):
        pre = rec.content.get("prereg", {})
        head = pre.get("lock_head", {})
        entry = lock.entry_by_hash(str(head.get("entry_hash")))
        f = rd / rel
        if entry is None:
            fails.append(
                f"{f}: produced under lock entry {head.get('seq')} "
                f"({str(head.get('entry_hash'))[:12]}…), which is not in the chain of "
                f"{lock_path.name} (truncated or replaced chain)"
            )
            continue
        if entry["canonical_hash"] != pre.get("canonical_hash"):
            fails.append(f"{f}: recorded pre-registration hash is not that of its lock entry")
            continue
        problem = plan_problem(rel, rec.content.get("plan"), pre, lock)
        if problem:
            fails.append(f"{f}: {problem}")
            continue
        try:
            created = parse_time(str(rec.content.get("created")))
        except ValueError:
            fails.append(f"{f}: its record has no readable creation time")
            continue
        seq = entry["seq"]
        if created < times[seq] or (seq + 1 < len(times) and created >= times[seq + 1]):
            fails.append(
                f"{f}: created {rec.content.get('created')}, when entry {seq} was not the "
                "chain head"
            )
        elif seq < len(lock.chain) - 1:
            notes.append(f"{f}: produced under entry {seq}, before a later amendment")
    return Check("chain head at production", "each record's lock entry and time", fails, notes[:10])


def plan_problem(rel: str, plan: Any, pre: dict[str, Any], lock: Lock) -> str | None:
    """Why a record's ``plan`` (:mod:`tailgate.plans.entries`) does not fit where its artifact
    lies: the registered plan's folder holds what was computed under entry 0 of the lock, the
    rest what was computed under the chain head the record names (None: it fits)."""
    if rel.split("/")[0] == BRANCH_DIR:
        first = lock.chain[0]
        ok = (
            isinstance(plan, dict)
            and plan.get("name") == REGISTERED
            and plan.get("entry_hash") == first["entry_hash"]
            and plan.get("canonical_hash") == first["canonical_hash"]
        )
        if ok and len(lock.chain) > 1:
            return None
        return (
            "lies in the registered plan's folder, but its record does not say it was computed "
            "under entry 0 of the lock (moved there from the main results, or written by hand)"
        )
    if plan is None:  # a record made before records named their plan
        return None
    if (
        not isinstance(plan, dict)
        or plan.get("name") != HEAD
        or plan.get("canonical_hash") != pre.get("canonical_hash")
    ):
        return (
            f"its record says it was computed under plan {plan!r:.80}, not the chain head it "
            f"names (a registered-plan artifact belongs in {BRANCH_DIR}/)"
        )
    return None
