"""The plan a stage computes under: the lock's chain head, or the registered plan of entry 0.

Every stage runs under the chain head (``plan="head"``): the pre-registration on disk, guarded
against its lock (:func:`tailgate.stages.common.open_stage`). Once an amendment has moved the
head, the workflow also evaluates the plan as it was first registered (DESIGN: "Amendments";
:mod:`tailgate.plans.branch`): a stage run with ``plan="registered"`` is guarded exactly the
same way — the pre-registration must match the chain head and be committed — and then computes
under the study as entry 0 of the lock holds it (:func:`registered_study`). Its artifacts live
under ``results/<study>/registered/`` and their provenance records name the plan
(:func:`plan_record`): the entry, its entry hash and its canonical hash.

Entry 0's input files (an import file, a scorer checkpoint) are pinned by its own lock entry.
Where the amendment re-pinned one, the file on disk is the amended plan's; the registered plan
can then be computed only while the file entry 0 pinned is still there
(:func:`registered_pin_problems`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from tailgate.errors import InputError, RefusalError, TailgateError
from tailgate.prereg.lock import read_lock
from tailgate.prereg.pins import pin_changes, pins_of
from tailgate.prereg.study import Study
from tailgate.runtime.provenance import BRANCH_DIR

__all__ = [
    "BRANCH_DIR",
    "HEAD",
    "PLANS",
    "REGISTERED",
    "changed_pins",
    "entry_study",
    "plan_record",
    "registered_pin_problems",
    "registered_study",
]

HEAD = "head"
REGISTERED = "registered"
PLANS = (HEAD, REGISTERED)


def entry_study(head: Study, entry: Mapping[str, Any]) -> Study:
    """The study as a lock entry registered it (its canonical document, as hashed in the lock)."""
    return Study(
        path=head.path,
        data=copy.deepcopy(entry["prereg"]),
        canonical_hash=str(entry["canonical_hash"]),
        raw_hash=str(entry.get("raw_hash", "")),
    )


def plan_record(plan: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """What a provenance record says of the plan an artifact was computed under."""
    return {
        "name": plan,
        "seq": int(entry["seq"]),
        "entry_hash": str(entry["entry_hash"]),
        "canonical_hash": str(entry["canonical_hash"]),
    }


def changed_pins(chain: Sequence[Mapping[str, Any]]) -> list[str]:
    """The pinned input files (by field) whose pins differ between entry 0 and the chain head."""
    first, head = chain[0].get("pins") or {}, chain[-1].get("pins") or {}
    return sorted(
        f
        for f in set(first) | set(head)
        if (first.get(f) or {}).get("sha256") != (head.get(f) or {}).get("sha256")
    )


def registered_pin_problems(registered: Study, chain: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why entry 0's pinned input files cannot be read now (empty: they can): only the pins an
    amendment changed are hashed again (the head's are checked by every stage's guard)."""
    fields = changed_pins(chain)
    if not fields:
        return []
    pinned = chain[0].get("pins") or {}
    try:
        now = pins_of(registered, registered=pinned)
    except TailgateError as exc:
        return [str(exc)]
    changed = [f for f in pin_changes(pinned, now) if f in fields]
    return [
        f"{f}: entry 0 pinned {pinned[f]['path']} with SHA-256 {pinned[f]['sha256'][:12]}…, "
        "and the file there now is the amended plan's"
        if f in pinned
        else f"{f}: entry 0 pinned no such file"
        for f in changed
    ]


def registered_study(head: Study) -> tuple[Study, dict[str, Any]]:
    """The registered plan (entry 0 of ``head``'s lock) and its provenance :func:`plan_record`;
    :class:`InputError` when the lock has no amendment (the head is the registered plan), and
    :class:`RefusalError` when an input file entry 0 pinned is no longer the pinned one."""
    lock = read_lock(head.lock_path)
    if lock is None or len(lock.chain) < 2:
        raise InputError(
            f"{head.path}: the lock has no amendment, so the registered plan is the chain head; "
            "no stage runs under plan 'registered'. Fix: run the stage with plan 'head'."
        )
    entry = lock.chain[0]
    study = entry_study(head, entry)
    problems = registered_pin_problems(study, lock.chain)
    if problems:
        raise RefusalError(
            f"{head.path}: refusing to compute under the registered plan (entry 0): "
            + "; ".join(problems)
            + ". Fix: restore the file entry 0 registered (its SHA-256 is in the lock), or "
            "leave the registered plan's verdict uncomputed."
        )
    return study, plan_record(REGISTERED, entry)
