"""What git knows about a file: the commit checked out, whether the tree is dirty, whether a path
is committed as it is now, and every committed version of a path. Every function returns
``None`` (or an empty answer) outside a git work tree; callers decide what that means."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

__all__ = [
    "Version",
    "committed_versions",
    "ever_committed",
    "first_commit_time",
    "head_state",
    "path_state",
    "repo_root",
]


def _git(cwd: Path, *args: str, text: bool = True) -> str | bytes | None:
    try:
        res = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=text, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return res.stdout.strip() if text else res.stdout


def _dir_of(path: str | Path) -> Path:
    p = Path(path).resolve()
    while not p.is_dir():  # a deleted file's folder may be gone too
        if p.parent == p:
            break
        p = p.parent
    return p


def repo_root(path: str | Path) -> Path | None:
    """The top of the git work tree holding ``path``, or ``None``."""
    out = _git(_dir_of(path), "rev-parse", "--show-toplevel")
    return Path(str(out)) if out else None


def head_state(path: str | Path) -> dict[str, object] | None:
    """``{"commit": sha, "dirty": bool}`` for the work tree holding ``path``, or ``None``."""
    cwd = _dir_of(path)
    commit = _git(cwd, "rev-parse", "HEAD")
    if not commit:
        return None
    status = _git(cwd, "status", "--porcelain", "--untracked-files=no")
    return {"commit": str(commit), "dirty": bool(status)}


def _rel(path: str | Path) -> tuple[Path, str] | None:
    root = repo_root(path)
    if root is None:
        return None
    try:
        return root, Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def path_state(path: str | Path) -> str | None:
    """``"committed"`` (tracked, identical to HEAD), ``"modified"`` (tracked, differs from HEAD
    in the work tree or the index), ``"untracked"`` (never in HEAD), or ``None`` outside git."""
    found = _rel(path)
    if found is None:
        return None
    root, rel = found
    if _git(root, "rev-parse", "HEAD") is None:
        return "untracked"  # a repository without commits
    if _git(root, "cat-file", "-e", f"HEAD:{rel}") is None:
        return "untracked"
    changed = _git(root, "status", "--porcelain", "--", rel)
    return "modified" if changed else "committed"


def ever_committed(path: str | Path) -> bool:
    """Whether any commit reachable from HEAD touched ``path`` (a file or a folder)."""
    found = _rel(path)
    if found is None:
        return False
    root, rel = found
    return bool(_git(root, "log", "-1", "--format=%H", "--", rel))


@dataclass(frozen=True)
class Version:
    """One commit that touched a path: its sha, committer time (UTC) and the path's bytes then
    (``None`` when the commit deleted it)."""

    commit: str
    time: datetime
    content: bytes | None


def committed_versions(path: str | Path) -> list[Version]:
    """Every commit reachable from HEAD that touched ``path`` (by this exact path, renames not
    followed), oldest first, with the path's content at that commit."""
    found = _rel(path)
    if found is None:
        return []
    root, rel = found
    log = _git(root, "log", "--reverse", "--format=%H %cI", "--", rel)
    out = []
    for line in str(log or "").splitlines():
        sha, when = line.split(" ", 1)
        content = _git(root, "show", f"{sha}:{rel}", text=False)
        out.append(
            Version(
                sha,
                datetime.fromisoformat(when).astimezone(timezone.utc),
                content if isinstance(content, bytes) else None,
            )
        )
    return out


def first_commit_time(path: str | Path) -> datetime | None:
    """Committer time (UTC) of the first commit that added ``path``, or ``None``."""
    versions = committed_versions(path)
    return versions[0].time if versions else None
