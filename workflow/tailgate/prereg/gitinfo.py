"""What git knows about a file: the commit checked out, whether the tree is dirty, and when a
file first entered the history. Every function returns ``None`` outside a git work tree."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["first_commit_time", "head_state"]


def _git(cwd: Path, *args: str) -> str | None:
    try:
        res = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def head_state(path: str | Path) -> dict[str, object] | None:
    """``{"commit": sha, "dirty": bool}`` for the work tree holding ``path``, or ``None``."""
    cwd = Path(path).resolve().parent
    commit = _git(cwd, "rev-parse", "HEAD")
    if not commit:
        return None
    status = _git(cwd, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status)}


def first_commit_time(path: str | Path) -> datetime | None:
    """Committer time (UTC) of the first commit that added ``path``, or ``None``."""
    p = Path(path).resolve()
    out = _git(p.parent, "log", "--follow", "--diff-filter=A", "--format=%cI", "--", p.name)
    if not out:
        return None
    return datetime.fromisoformat(out.splitlines()[-1]).astimezone(timezone.utc)
