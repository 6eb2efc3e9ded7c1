"""The registration's checks: the lock chain, the pre-registration and its pinned inputs against
the chain head, a published hash, git history read as a skeptical reviewer
(:mod:`tailgate.prereg.gitreview`) and trusted timestamps (:mod:`tailgate.prereg.timestamp`).
"""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from tailgate.errors import TailgateError
from tailgate.plans.registration import load
from tailgate.prereg.gitinfo import repo_root
from tailgate.prereg.gitreview import linked_registration, review
from tailgate.prereg.lock import Lock, LockIntegrityError, amendment_changes, parse_time, read_lock
from tailgate.prereg.pins import pin_changes, pins_of
from tailgate.prereg.study import Study
from tailgate.prereg.timestamp import verify_tokens

from .findings import Check


def check_lock(lock_path: Path, checks: list[Check]) -> Lock | None:
    try:
        lock = read_lock(lock_path)
    except TailgateError as exc:
        checks.append(Check("lock chain", str(lock_path), [str(exc)]))
        return None
    if lock is None:
        checks.append(Check("lock chain", str(lock_path), [f"{lock_path}: no lock file"]))
        return None
    try:
        lock.verify()
    except LockIntegrityError as exc:
        checks.append(Check("lock chain", str(lock_path), [f"{lock_path}: {exc}"]))
        return None
    checks.append(
        Check(
            "lock chain",
            f"{lock_path}: {len(lock.chain)} chain entries, hashes and links verified",
            notes=amendment_notes(lock),
        )
    )
    return lock


def check_prereg(prereg_path: Path, lock: Lock | None, checks: list[Check]) -> Study | None:
    try:
        study = load(prereg_path)
    except TailgateError as exc:
        checks.append(Check("pre-registration", str(prereg_path), [str(exc)]))
        return None
    fails = []
    if lock is not None:
        if study.canonical_hash != lock.head_hash:
            fails.append(
                f"{prereg_path}: differs from the lock's chain head (entry {lock.head['seq']}); "
                f"run 'tailgate verify {prereg_path}' for the field diff"
            )
        try:
            now = pins_of(study, registered=lock.head_entry.get("pins", {}))
        except TailgateError as exc:
            fails.append(str(exc))
        else:
            for f in pin_changes(lock.head_entry.get("pins", {}), now):
                fails.append(
                    f"{prereg_path}: the input file of {f} differs from its pin in "
                    f"{lock.path.name} (edited, replaced or removed after it was registered)"
                )
    checks.append(
        Check("pre-registration", f"{prereg_path} hashes to {study.canonical_hash}", fails)
    )
    return study


def check_published(expected: str, lock: Lock | None, lock_path: Path) -> Check:
    h = expected.strip().lower()
    entry = None
    if lock is not None:
        entry = next((e for e in lock.chain if h in (e["entry_hash"], e["canonical_hash"])), None)
    if entry is None:
        return Check(
            "published hash",
            f"expected {expected}",
            [
                f"{lock_path}: no chain entry has the published hash {expected} (the registration "
                "was replaced or rewritten after the receipt was published)"
            ],
        )
    return Check(
        "published hash",
        f"{expected} is entry {entry['seq']}; it and the {entry['seq']} entr"
        f"{'y' if entry['seq'] == 1 else 'ies'} before it verified",
    )


def first_artifact(records: list[Any] | None) -> tuple[datetime, str] | None:
    """The earliest recorded artifact of any kind (a record's ``kind`` is not trusted)."""
    times = []
    for r in records or []:
        try:
            times.append((parse_time(str(r.content.get("created"))), str(r.path)))
        except (ValueError, TypeError):
            continue
    return min(times) if times else None


def check_git(
    prereg_path: Path,
    lock_path: Path,
    lock: Lock | None,
    first: tuple[datetime, str] | None,
    no_git: bool,
) -> Check:
    fails: list[str] = []
    notes: list[str] = []
    if lock is not None and first is not None:
        first_time, first_path = first
        frozen = parse_time(lock.chain[0]["time"])
        if frozen > first_time:
            fails.append(
                f"{lock_path}: frozen at {lock.chain[0]['time']}, after the first artifact "
                f"{first_path} ({first_time.isoformat()})"
            )
        for e in lock.chain[1:]:
            if parse_time(e["time"]) > first_time and not e.get("data_existed"):
                fails.append(
                    f"{lock_path}: amendment {e['seq']} was made at {e['time']}, after the first "
                    f"artifact {first_path}, but records that no data existed"
                )

    fails.extend(linked_registration(prereg_path, lock_path))
    if no_git:
        notes.append(
            "git not consulted (--no-git): when the registration was committed relative to the "
            "data is unverified"
        )
        return Check("git", "skipped (--no-git): timing unverified", fails, notes)
    if repo_root(prereg_path) is None:
        fails.append(
            f"{prereg_path}: not in a git work tree, so nothing shows when it was registered. "
            "Fix: commit the pre-registration and its lock before collecting data (or audit with "
            "--no-git, which reports the timing as unverified)"
        )
        return Check("git", "no git work tree", fails, notes)
    reviewed = review(prereg_path, lock_path, lock)
    fails.extend(reviewed.failures)
    notes.extend(reviewed.notes)
    history = reviewed.history
    if history is None or lock is None:
        return Check("git", "the registration's git history", fails, notes)
    for e in lock.chain:
        found = history.introduced.get(e["entry_hash"])
        if found is None:
            continue
        commit, when = found
        notes.append(f"entry {e['seq']} first committed in {commit[:12]} at {when.isoformat()}")
        if first is None:
            continue
        if e["seq"] == 0 and when > first[0]:
            fails.append(
                f"{lock_path}: entry 0 was first committed in {commit[:12]} at "
                f"{when.isoformat()}, after the first artifact {first[1]} "
                f"({first[0].isoformat()}): the registration does not predate the data"
            )
        elif e["seq"] > 0 and when > first[0] and not e.get("data_existed"):
            fails.append(
                f"{lock_path}: amendment {e['seq']} was first committed in {commit[:12]} after "
                f"the first artifact {first[1]}, but records that no data existed"
            )
    detail = f"{len(history.versions)} committed version(s) of the lock (every branch and tag)"
    return Check("git", detail, fails, notes)


def check_timestamps(
    lock: Lock, tsa_cert: str | Path | None, first: tuple[datetime, str] | None
) -> Check:
    found = verify_tokens(lock, None if tsa_cert is None else Path(tsa_cert), first)
    detail = (
        f"tokens verified against {tsa_cert}"
        if tsa_cert is not None
        else "tokens listed, not verified (no --tsa-cert)"
    )
    return Check("trusted timestamps", detail, found.failures, found.notes)


def amendment_notes(lock: Lock) -> list[str]:
    """One note per amendment, its changes derived from the snapshots (never its own list)."""
    notes = []
    for previous, e in pairwise(lock.chain):
        changes = amendment_changes(previous, e)
        loosen = [c.field for c in changes if c.direction == "loosening"]
        decision = [c.field for c in changes if c.decision]
        notes.append(
            f"amendment {e['seq']} at {e['time']}"
            + (" after data existed" if e.get("data_existed") else " before any data was found")
            + f": {e.get('reason')!r}; decision fields changed: {', '.join(decision) or 'none'}"
            + (f"; loosening: {', '.join(loosen)}" if loosen else "")
            + ("; a deviation from the registered plan" if decision else "")
        )
    return notes
