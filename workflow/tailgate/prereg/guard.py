"""Refusal: nothing produces results unless the pre-registration matches its lock's chain head.

:func:`require_frozen` is called at every entry point that can write results — the Snakefile at
parse time (before any job), the CLI, and every stage function. It refuses
(:class:`RefusalError`, exit 3) when the lock is missing or broken, when the file differs from the
chain head (naming each changed field, old → new, with its class), when a pinned input file
(:mod:`tailgate.prereg.pins`) differs from its pin, or when the study's results folder is or holds
a link; and it says the ways forward: restore the registered file, or record an amendment.
:func:`require_runnable` adds, for a confirmatory run, that the registration is committed as it
is on disk (:mod:`tailgate.prereg.committed`). :func:`verify_study` re-hashes a study *object*
against the lock, so a study changed in memory cannot write records under the registered hash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailgate.errors import RefusalError
from tailgate.prereg.canonical import canonical_hash
from tailgate.prereg.committed import require_committed
from tailgate.prereg.diff import Change, diff, format_changes
from tailgate.prereg.lock import Lock, LockIntegrityError, read_lock
from tailgate.prereg.pins import pin_changes, pins_of
from tailgate.prereg.study import Study, load, lock_path_for, results_dir_for

__all__ = [
    "FrozenState",
    "check_frozen",
    "links_in",
    "require_frozen",
    "require_runnable",
    "results_dir_for",
    "verify_study",
]


@dataclass(frozen=True)
class FrozenState:
    """The comparison of a pre-registration (and its pinned inputs) with its lock."""

    study: Study
    lock: Lock | None
    changes: list[Change]
    problem: str | None  # why it is not frozen, or None when it matches the chain head
    pin_changes: list[str] = field(default_factory=list)
    pins: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.problem is None


def check_frozen(prereg_path: str | Path, *, pins: bool = True) -> FrozenState:
    """Load ``prereg_path`` (``PreregError`` if invalid) and compare it, and (``pins``) the
    files it names, with its lock."""
    study = load(prereg_path)
    lock_path = lock_path_for(study.path)
    lock = read_lock(lock_path)
    if lock is None:
        return FrozenState(study, None, [], f"it is not frozen: {lock_path} does not exist")
    try:
        lock.verify()
    except LockIntegrityError as exc:
        return FrozenState(study, lock, [], f"its lock does not verify: {exc}")
    if lock.head_hash != study.canonical_hash:
        changes = diff(lock.head_entry["prereg"], study.data)
        return FrozenState(
            study,
            lock,
            changes,
            f"it differs from the chain head of {lock_path.name} (entry {lock.head['seq']}, "
            f"canonical hash {lock.head_hash[:12]}…; "
            f"the file now hashes to {study.canonical_hash[:12]}…)",
        )
    if not pins:
        return FrozenState(study, lock, [], None)
    registered = lock.head_entry.get("pins", {})
    now = pins_of(study, registered=registered)
    changed = pin_changes(registered, now)
    if not changed:
        return FrozenState(study, lock, [], None, pins=now)
    detail = []
    for f in changed:
        old, new = registered.get(f), now.get(f)
        if old is None:
            detail.append(f"{f} ({new['path']}) has no pin in the lock")
        elif new is None:
            detail.append(f"{f} ({old['path']}) is pinned but no longer there")
        else:
            detail.append(
                f"{f} ({new['path']}) hashes to {new['sha256'][:12]}…, pinned {old['sha256'][:12]}…"
            )
    return FrozenState(
        study,
        lock,
        [],
        "a registered input file differs from its pin in the lock: " + "; ".join(detail),
        pin_changes=changed,
        pins=now,
    )


def refusal_message(state: FrozenState) -> str:
    """The refusal text: what differs, each changed field, and the ways forward."""
    from tailgate.prereg.evidence import data_evidence

    study = state.study
    path = study.path
    lines = [f"Refusing to run study '{study.name}': {path} — {state.problem}."]
    if state.changes:
        lines.append("Changed fields (registered → now):")
        lines.append(format_changes(state.changes))
    if state.lock is None:
        lines.append(
            f"Way forward: validate and freeze it first — 'tailgate design {path}', then "
            f"'tailgate freeze {path}' — and commit the .yaml and .lock.json together."
        )
        return "\n".join(lines)
    restore = (
        "restore the registered input file(s) named above"
        if state.pin_changes
        else f"restore the registered file: undo the edits listed above (e.g. 'git checkout -- "
        f"{path}' if the registered version is committed; the lock holds its full snapshot)"
    )
    lines.append("Two ways forward:")
    lines.append(f"  1. {restore};")
    lines.append(
        f"  2. or record the change as an amendment: 'tailgate amend {path} --reason \"…\"'. "
        "It is appended to the hash chain and reported as a deviation from the registered plan "
        "when it changes a decision rule after data exists."
    )
    evidence = data_evidence(path, state.lock)
    if evidence.exists:
        lines.append(f"(Data exists: {evidence.describe()}.)")
    return "\n".join(lines)


def links_in(results_dir: str | Path) -> list[str]:
    """Links at or inside a study's results folder (each one a refusal and an audit failure)."""
    rd = Path(results_dir)
    found = []
    if rd.is_symlink():
        found.append(f"{rd} is a link to {os.readlink(rd)}")
    if found or not rd.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(rd, followlinks=False):
        for name in [*dirnames, *filenames]:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                found.append(f"{p} is a link to {os.readlink(p)}")
    return found


def _refuse_links(study: Study, results_dir: Path) -> None:
    links = links_in(results_dir)
    if links:
        raise RefusalError(
            f"Refusing to run study '{study.name}': its results folder must hold real files "
            f"only, and {'; '.join(links[:5])}"
            + (f" (and {len(links) - 5} more)" if len(links) > 5 else "")
            + ". Links let files outside the study stand in for its results. Fix: replace each "
            "link by the files themselves (or remove it) and run again."
        )


def require_frozen(prereg_path: str | Path, *, pins: bool = True) -> Study:
    """The study, if it and its pinned inputs match the lock's chain head and its results
    folder holds no link; else :class:`RefusalError`."""
    state = check_frozen(prereg_path, pins=pins)
    if not state.ok:
        raise RefusalError(refusal_message(state), changes=state.changes)
    _refuse_links(state.study, results_dir_for(state.study.path))
    return state.study


def require_runnable(prereg_path: str | Path) -> Study:
    """:func:`require_frozen`, and for a confirmatory run a registration committed exactly as it
    is on disk (:mod:`tailgate.prereg.committed`): what every entry point that writes results
    calls."""
    study = require_frozen(prereg_path)
    require_committed(study)
    return study


def verify_study(study: Study) -> dict[str, Any]:
    """The lock head, if ``study`` — the object itself, re-hashed now — is the registered plan at
    the chain head; else :class:`RefusalError`. Guards against a study changed in memory."""
    lock = read_lock(study.lock_path)
    if lock is None:
        raise RefusalError(
            f"{study.path}: refusing to record an artifact: the study is not frozen "
            f"(no {study.lock_path.name}). Run 'tailgate freeze {study.path}' first."
        )
    now = canonical_hash(study.data)
    if now != study.canonical_hash or now != lock.head_hash:
        raise RefusalError(
            f"{study.path}: refusing to record an artifact: the study in use hashes to "
            f"{now[:12]}…, not the chain head {lock.head_hash[:12]}… of {study.lock_path.name} "
            "(changed after it was loaded, or changed on disk). Load the registered study with "
            f"'tailgate verify {study.path}' and run the workflow again."
        )
    return {"seq": lock.head["seq"], "entry_hash": lock.head["entry_hash"]}
