"""The lock's committed history: append-only, and when each chain entry was first committed.

A lock is append-only: every committed version of ``<study>.lock.json`` must extend the one
before it (same entries, same order, more at the end), and the lock in the work tree must extend
the longest committed one. The history is read as a skeptical reviewer would
(:func:`tailgate.prereg.gitinfo.committed_versions`): every branch, tag and remote ref, merges
against every parent (a branch merged with ``git merge -s ours`` still counts), the file followed
through renames and copies. Every committed version, wherever it lies, must therefore belong to
one chain. A replaced, rewritten, reordered or dropped entry — a study deleted and registered
again, an amendment folded into entry 0, a flipped ``data_existed``, a fresh lock on a side
branch — shows up as a version that does not extend its predecessor, named by its commit; a link
committed in place of the lock is refused. The commit that first holds an entry dates it
independently of the time the entry states about itself — by the committer's own clock, which
only a trusted timestamp (:mod:`tailgate.prereg.timestamp`) can vouch for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tailgate.errors import DamagedFileError
from tailgate.files.safe_read import loads_json
from tailgate.prereg.gitinfo import committed_versions

__all__ = ["LockHistory", "lock_history"]


@dataclass(frozen=True)
class LockHistory:
    """``versions``: (commit, time, entry hashes or None if unreadable/deleted) oldest first;
    ``introduced``: entry hash → (commit, time) of the first commit holding it;
    ``violations``: one message per version that does not extend its predecessor."""

    versions: list[tuple[str, datetime, list[str] | None]]
    introduced: dict[str, tuple[str, datetime]] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    @property
    def committed(self) -> bool:
        return bool(self.versions)


def _hashes(content: bytes | None) -> list[str] | None:
    if content is None:
        return None
    try:
        obj = loads_json(content, "a committed lock")  # a committed lock may be hostile too
        return [str(e["entry_hash"]) for e in obj["chain"]]
    except (ValueError, KeyError, TypeError, AttributeError, DamagedFileError):
        return None


def _extends(old: list[str], new: list[str]) -> bool:
    return len(new) >= len(old) and new[: len(old)] == old


def lock_history(lock_path: str | Path, current: list[str] | None = None) -> LockHistory:
    """Walk every committed version of ``lock_path`` (module docstring); ``current`` are the
    entry hashes of the lock in the work tree (checked against the longest committed chain)."""
    name = Path(lock_path).name
    found = committed_versions(lock_path)
    versions = [(v.commit, v.time, None if v.link else _hashes(v.content)) for v in found]
    history = LockHistory(versions)
    previous: tuple[str, list[str]] | None = None
    longest: tuple[str, list[str]] | None = None
    for v, (commit, when, hashes) in zip(found, versions, strict=True):
        if v.link:
            history.violations.append(
                f"{name}: commit {commit[:12]} holds a link at {v.path} in place of the lock "
                "(a registration is a file in the repository, never a pointer to another one)"
            )
            continue
        if hashes is None:
            history.violations.append(
                f"{name}: commit {commit[:12]} deletes the lock or holds an unreadable one at "
                f"{v.path} (a registration cannot be withdrawn; amend it instead)"
            )
            continue
        for h in hashes:
            was = history.introduced.get(h)
            if was is None or when < was[1]:
                history.introduced[h] = (commit, when)
        if previous is not None and not _extends(previous[1], hashes):
            history.violations.append(
                f"{name}: commit {commit[:12]} rewrites the chain committed in "
                f"{previous[0][:12]} ({_how(previous[1], hashes)}); a lock is append-only"
            )
        previous = (commit, hashes)
        if longest is None or len(hashes) > len(longest[1]):
            longest = (commit, hashes)
    if current is not None and longest is not None and not _extends(longest[1], current):
        history.violations.append(
            f"{name}: the lock in the work tree rewrites the chain committed in "
            f"{longest[0][:12]} ({_how(longest[1], current)})"
        )
    return history


def _how(old: list[str], new: list[str]) -> str:
    for i, h in enumerate(old):
        if i >= len(new):
            return f"entries {i}–{len(old) - 1} dropped"
        if new[i] != h:
            return f"entry {i} replaced"
    return "chain changed"
