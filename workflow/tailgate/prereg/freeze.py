"""``freeze`` writes a study's lock; ``amend`` appends to its chain (DESIGN: "Lock", "Amendments").

Freeze refuses a design whose planned prompts fall below the Eq. 2 prompt count of seed 000
unless the pre-registration records an ``accepted_power`` that the design achieves. Once data
exists for the study, a changed file can no longer be re-frozen: the only way forward is an
amendment, which records the field-level diff, the reason and that data already existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tailgate.errors import InputError, PreregError, RefusalError
from tailgate.prereg.design import Design, derived_design
from tailgate.prereg.diff import Change, diff
from tailgate.prereg.gitinfo import head_state
from tailgate.prereg.guard import check_frozen, refusal_message, results_dir_for
from tailgate.prereg.lock import Lock, LockIntegrityError, make_entry, new_lock, write_lock
from tailgate.prereg.study import Study, load, lock_path_for

__all__ = ["AmendResult", "FreezeResult", "amend", "check_design", "freeze"]


@dataclass(frozen=True)
class FreezeResult:
    """What ``freeze`` did: ``action`` is ``"frozen"``, ``"unchanged"`` or ``"refrozen"``."""

    study: Study
    lock: Lock
    design: Design
    action: str


@dataclass(frozen=True)
class AmendResult:
    """The appended amendment entry and its changes."""

    study: Study
    lock: Lock
    entry: dict
    changes: list[Change]
    data_existed: bool


def check_design(study: Study) -> Design:
    """The derived design; :class:`PreregError` when the cap is below Eq. 2 without an
    explicitly accepted, achieved lower power."""
    design = derived_design(study)
    if design.power_accepted:
        return design
    if design.accepted_power is None:
        problem = (
            f"the planned {design.min_prompts} prompts per condition give {design.n_exc_planned} "
            f"exceedances at q={design.q_headline:g}, below the {design.n_exc_required} that Eq. 2 "
            f"of seed 000 requires for power {design.power:g} at Δfloor={design.delta_floor:g} "
            f"({design.prompts_required} prompts)"
        )
        fix = (
            f"raise sample_cap (and condition prompts) to at least {design.prompts_required}, or "
            f"record the lower power you accept, e.g. 'accepted_power: "
            f"{_floor3(design.achieved_power)}' (achieved z-test power {design.achieved_power:.3f})"
        )
    else:
        problem = (
            f"accepted_power is {design.accepted_power:g}, but the planned design achieves only "
            f"{design.achieved_power:.3f} (z-test power at {design.n_exc_planned} exceedances)"
        )
        fix = (
            f"record what is achieved (accepted_power: {_floor3(design.achieved_power)}) or raise "
            "sample_cap"
        )
    raise PreregError(problem, file=str(study.path), field="accepted_power", fix=fix)


def _floor3(x: float) -> str:
    return f"{int(x * 1000) / 1000:.3f}"


def _has_data(results_dir: Path) -> bool:
    from tailgate.provenance import has_data

    return has_data(results_dir)


def freeze(prereg_path: str | Path, results_dir: str | Path | None = None) -> FreezeResult:
    """Validate ``prereg_path`` and write ``<stem>.lock.json`` beside it."""
    study = load(prereg_path)
    rd = Path(results_dir) if results_dir is not None else results_dir_for(study.path)
    lock_path = lock_path_for(study.path)
    state = check_frozen(study.path)
    if state.lock is not None and not state.ok and _has_data(rd):
        raise RefusalError(
            refusal_message(state, rd)
            + f"\nRe-freezing is refused because data artifacts exist in {rd}.",
            changes=state.changes,
        )
    design = check_design(study)
    if state.lock is not None and state.ok:
        return FreezeResult(study, state.lock, design, "unchanged")
    entry = make_entry(
        seq=0,
        kind="freeze",
        previous_entry_hash=None,
        snapshot=study.data,
        raw_hash=study.raw_hash,
        derived=design.to_json(),
        data_existed=_has_data(rd),
        git=head_state(study.path),
    )
    lock = new_lock(lock_path, study.name, [entry])
    write_lock(lock)
    return FreezeResult(study, lock, design, "frozen" if state.lock is None else "refrozen")


def amend(
    prereg_path: str | Path, reason: str, results_dir: str | Path | None = None
) -> AmendResult:
    """Append an amendment registering the current file as the new chain head."""
    if not reason or not reason.strip():
        raise InputError(
            "tailgate amend: --reason is empty. Fix: say why the registered plan changes, "
            'e.g. --reason "scorer checkpoint unavailable; switched to ...".'
        )
    study = load(prereg_path)
    design = check_design(study)
    rd = Path(results_dir) if results_dir is not None else results_dir_for(study.path)
    state = check_frozen(study.path)
    if state.lock is None:
        raise RefusalError(
            f"{study.path}: cannot amend a study that was never frozen "
            f"({lock_path_for(study.path).name} does not exist). "
            f"Run 'tailgate freeze {study.path}'."
        )
    try:
        state.lock.verify()
    except LockIntegrityError as exc:
        raise RefusalError(
            f"{study.path}: refusing to amend: the lock does not verify ({exc}). Restore the "
            "lock file from version control."
        ) from None
    if state.ok:
        raise InputError(
            f"{study.path}: nothing to amend — the file matches the chain head of "
            f"{state.lock.path.name} (entry {state.lock.head['seq']})."
        )
    head = state.lock.head_entry
    changes = diff(head["prereg"], study.data)
    data_existed = _has_data(rd)
    entry = make_entry(
        seq=head["seq"] + 1,
        kind="amendment",
        previous_entry_hash=head["entry_hash"],
        snapshot=study.data,
        raw_hash=study.raw_hash,
        derived=design.to_json(),
        data_existed=data_existed,
        git=head_state(study.path),
        reason=reason.strip(),
        changes=[c.to_json() for c in changes],
    )
    lock = new_lock(state.lock.path, study.name, [*state.lock.chain, entry])
    write_lock(lock)
    return AmendResult(study, lock, entry, changes, data_existed)
