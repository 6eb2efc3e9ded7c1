"""Git read as a skeptical reviewer: what the repository shows about a registration, and what it
cannot show.

* **Links** — ``preregistrations/``, the pre-registration and its lock are files of the project;
  a link at any of them could point the audit at another history, so it fails.
* **Git reads the repository as data** (:mod:`tailgate.prereg.gitinfo`): none of its
  configuration, attributes files, hooks or replace objects is followed, and the work-tree bytes
  are compared with the committed blob here, so a filter cannot show git other bytes.
* **A history rewritten locally** — a replace ref (``git replace``) or an ``info/grafts`` file
  shows another commit in place of one that was pushed; the audit fails naming it and asks for a
  fresh clone (which holds neither).
* **Shallow clones** — a clone cut at some depth hides the commits that would show a rewritten
  chain; the audit fails and says how to fetch the rest (``git fetch --unshallow``).
* **Hidden edits** — the work-tree bytes are hashed as a blob and compared with ``HEAD:path``, so
  ``git update-index --skip-worktree`` or ``--assume-unchanged`` cannot hide an uncommitted edit
  from the audit as they hide it from ``git status``.
* **The lock's whole history** (:func:`tailgate.prereg.history.lock_history`): every branch, tag
  and remote ref, merges against every parent, renames and copies followed; every version must
  belong to one chain, and every chain entry must be in some commit.
* **Dates** — git's dates are the committer's own clock (``GIT_COMMITTER_DATE`` sets any date):
  they order a history that was not rewritten, they prove no time. Only a trusted timestamp
  (RFC 3161, :mod:`tailgate.prereg.timestamp`) proves when an entry existed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailgate.prereg.gitinfo import NOT_IN_HEAD, is_shallow, not_as_committed, rewritten_history
from tailgate.prereg.history import LockHistory, lock_history

__all__ = ["COMMITTER_DATES", "GitReview", "linked_registration", "review"]

COMMITTER_DATES = (
    "git dates are the committer's own clock (any date can be set when committing): they show "
    "the order of an unrewritten history, not when it happened; a trusted timestamp "
    "('tailgate freeze --timestamp URL', verified with 'tailgate audit --tsa-cert FILE') proves "
    "when an entry existed"
)


@dataclass(frozen=True)
class GitReview:
    """What the repository shows: failures, notes and the lock's history (``None`` when the
    history could not be read safely)."""

    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    history: LockHistory | None = None


def linked_registration(prereg_path: Path, lock_path: Path) -> list[str]:
    """A failure for each link among ``preregistrations/``, the file and its lock."""
    out = []
    for p in (prereg_path.parent, prereg_path, lock_path):
        if p.is_symlink():
            out.append(
                f"{p}: is a link; a registration and its lock are files of the project "
                "(a link can point at another folder or history). Fix: replace the link with "
                "the committed files"
            )
    return out


def review(prereg_path: Path, lock_path: Path, lock: Any | None) -> GitReview:
    """Review the registration's git evidence (module docstring; links:
    :func:`linked_registration`, checked by the caller with or without git)."""
    fails: list[str] = []
    notes = [COMMITTER_DATES]
    for what in rewritten_history(prereg_path):
        fails.append(
            f"{what}: the history is rewritten locally (git here ignores it and reads the "
            "commits as they are). Fix: audit a fresh clone ('git clone URL'), which holds no "
            "replace refs or grafts"
        )
    if is_shallow(prereg_path):
        fails.append(
            f"{prereg_path}: the repository is a shallow clone, so the commits that would show "
            "a rewritten registration may be missing. Fix: fetch the whole history "
            "('git fetch --unshallow') and audit again"
        )
        return GitReview(fails, notes)
    for p, why in not_as_committed(prereg_path, lock_path):
        if why == NOT_IN_HEAD:
            fails.append(f"{p}: never committed (commit the registration before the data)")
        else:
            fails.append(
                f"{p}: differs from the committed version (uncommitted changes; {why}). Fix: "
                "commit it, or restore it with 'git checkout HEAD -- <file>'"
            )
    if lock is None:
        return GitReview(fails, notes)
    history = lock_history(lock_path, [e["entry_hash"] for e in lock.chain])
    fails.extend(history.violations)
    for e in lock.chain:
        if e["entry_hash"] not in history.introduced:
            fails.append(
                f"{lock_path}: entry {e['seq']} ({str(e['entry_hash'])[:12]}…) is in no commit "
                "of the repository (every branch, tag and remote searched); nothing dates it. "
                "Fix: commit the lock (or fetch the branch that holds it)"
            )
    return GitReview(fails, notes, history)
