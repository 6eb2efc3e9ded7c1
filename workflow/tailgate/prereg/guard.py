"""Refusal: nothing produces results unless the pre-registration matches its lock's chain head.

:func:`require_frozen` is called at every entry point that can write results — the Snakefile at
parse time (before any job), the CLI, and scripts. A missing lock, a broken chain or a changed
pre-registration raises :class:`RefusalError` naming each changed field (old → new, with its
class) and the two ways forward: restore the registered file, or record an amendment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tailgate.errors import RefusalError
from tailgate.prereg.diff import Change, diff, format_changes
from tailgate.prereg.lock import Lock, LockIntegrityError, read_lock
from tailgate.prereg.study import Study, load, lock_path_for

__all__ = ["FrozenState", "check_frozen", "require_frozen", "results_dir_for", "workflow_guard"]


def results_dir_for(prereg_path: str | Path) -> Path:
    """``<project>/results/<stem>`` for ``<project>/preregistrations/<stem>.yaml``."""
    p = Path(prereg_path).resolve()
    return p.parent.parent / "results" / p.stem


@dataclass(frozen=True)
class FrozenState:
    """The comparison of a pre-registration with its lock."""

    study: Study
    lock: Lock | None
    changes: list[Change]
    problem: str | None  # why it is not frozen, or None when it matches the chain head

    @property
    def ok(self) -> bool:
        return self.problem is None


def check_frozen(prereg_path: str | Path) -> FrozenState:
    """Load ``prereg_path`` (``PreregError`` if invalid) and compare it with its lock."""
    study = load(prereg_path)
    lock_path = lock_path_for(study.path)
    lock = read_lock(lock_path)
    if lock is None:
        return FrozenState(study, None, [], f"it is not frozen: {lock_path} does not exist")
    try:
        lock.verify()
    except LockIntegrityError as exc:
        return FrozenState(study, lock, [], f"its lock does not verify: {exc}")
    if lock.head_hash == study.canonical_hash:
        return FrozenState(study, lock, [], None)
    changes = diff(lock.head_entry["prereg"], study.data)
    return FrozenState(
        study,
        lock,
        changes,
        f"it differs from the chain head of {lock_path.name} (entry {lock.head['seq']}, "
        f"canonical hash {lock.head_hash[:12]}…; "
        f"the file now hashes to {study.canonical_hash[:12]}…)",
    )


def refusal_message(state: FrozenState, results_dir: Path | None = None) -> str:
    """The refusal text: what differs, each changed field, and the ways forward."""
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
    if state.changes or state.problem:
        lines.append("Two ways forward:")
        lines.append(
            f"  1. restore the registered file: undo the edits listed above (e.g. 'git checkout -- "
            f"{path}' if the registered version is committed; the lock holds its full snapshot);"
        )
        lines.append(
            f"  2. or record the change as an amendment: 'tailgate amend {path} --reason \"…\"'. "
            "It is appended to the hash chain and reported as a deviation from the registered plan."
        )
        from tailgate.provenance import has_data

        rd = results_dir if results_dir is not None else results_dir_for(path)
        if not has_data(rd):
            lines.append(
                f"(No data exists yet in {rd}, "
                f"so 'tailgate freeze {path}' may also replace the lock.)"
            )
    return "\n".join(lines)


def require_frozen(prereg_path: str | Path, results_dir: str | Path | None = None) -> Study:
    """The study, if it matches its lock's chain head; else :class:`RefusalError`."""
    state = check_frozen(prereg_path)
    if not state.ok:
        rd = Path(results_dir) if results_dir is not None else None
        raise RefusalError(refusal_message(state, rd), changes=state.changes)
    return state.study


def workflow_guard(study_name: str, root: str | Path = ".") -> Study:
    """Parse-time guard for the Snakefile: the frozen study, or a ``WorkflowError`` with the
    same text as the CLI's refusal (or the same invalid-input message)."""
    from snakemake.exceptions import WorkflowError

    from tailgate.errors import TailgateError

    prereg = Path(root) / "preregistrations" / f"{study_name}.yaml"
    try:
        return require_frozen(prereg)
    except TailgateError as exc:
        raise WorkflowError(str(exc)) from None
