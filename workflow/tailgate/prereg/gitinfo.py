"""What git knows about a file: the commit checked out, whether the tree is dirty, whether a path
is committed as it is now, and every committed version of a path. Every function returns
``None`` (or an empty answer) outside a git work tree; callers decide what that means."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

__all__ = [
    "NOT_IN_HEAD",
    "Version",
    "committed_versions",
    "ever_committed",
    "first_commit_time",
    "head_state",
    "is_shallow",
    "not_as_committed",
    "path_state",
    "repo_root",
    "work_tree_hidden",
]

#: :func:`work_tree_hidden` of a file in no commit of ``HEAD``
NOT_IN_HEAD = "not in HEAD"


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
    """One commit that touched a followed path: its sha, committer time (UTC, the committer's own
    clock), the path, the bytes then (``None`` when the commit deleted it) and whether it was a
    link (a symbolic link committed in place of the file)."""

    commit: str
    time: datetime
    content: bytes | None
    path: str = ""
    link: bool = False


#: refs the history walk skips: a stash holds work in progress that was never committed
_NOT_HISTORY = ("--exclude=refs/stash",)


def is_shallow(path: str | Path) -> bool:
    """Whether the repository holding ``path`` is a shallow clone (its history is cut)."""
    return _git(_dir_of(path), "rev-parse", "--is-shallow-repository") == "true"


def _raw_log(root: Path) -> list[tuple[str, datetime, str, str, str, str, str | None]]:
    """Every file change of every commit on every branch, tag and remote ref, merges against
    each parent, parents before children: (commit, time, status, new mode, new blob, path, the
    source path of a rename or copy)."""
    out = _git(
        root, "log", *_NOT_HISTORY, "--all", "--full-history", "-m", "-M", "-C", "--raw",
        "--no-abbrev", "--topo-order", "--reverse", "-z", "--format=%x01%H%x02%cI",
        text=False,
    )  # fmt: skip
    events = []
    for chunk in (out if isinstance(out, bytes) else b"").split(b"\x01")[1:]:
        header, _, body = chunk.partition(b"\0")
        sha, _, when = header.decode().partition("\x02")
        time = datetime.fromisoformat(when).astimezone(timezone.utc)
        tokens = body.split(b"\0")
        i = 0
        while i < len(tokens):
            meta = tokens[i].strip().decode()
            if not meta.startswith(":"):
                i += 1
                continue
            _, new_mode, _, new_blob, status = meta[1:].split(" ")
            if status[0] in "RC":
                src, dst = (t.decode("utf-8", "surrogateescape") for t in tokens[i + 1 : i + 3])
                events.append((sha, time, status[0], new_mode, new_blob, dst, src))
                i += 3
            else:
                dst = tokens[i + 1].decode("utf-8", "surrogateescape")
                events.append((sha, time, status[0], new_mode, new_blob, dst, None))
                i += 2
    return events


def _blob(root: Path, blob: str) -> bytes | None:
    content = _git(root, "cat-file", "blob", blob, text=False)
    return content if isinstance(content, bytes) else None


def committed_versions(path: str | Path) -> list[Version]:
    """Every version of ``path`` committed anywhere in the repository's history (every branch,
    tag and remote ref; merges against every parent), parents before children, following the
    file through renames and copies (git's detection, and the same bytes added elsewhere)."""
    found = _rel(path)
    if found is None:
        return []
    root, rel = found
    events = _raw_log(root)
    followed: set[str] = {rel}
    blobs: set[str] = set()
    grown = True
    while grown:  # the paths the file lived at, and the blobs it had there
        grown = False
        for _, _, status, _, blob, dst, src in events:
            if status != "D" and (dst in followed or src in followed or blob in blobs):
                grown = grown or dst not in followed or blob not in blobs
                followed.add(dst)
                blobs.add(blob)
    out = []
    for sha, time, status, mode, blob, dst, _ in events:
        if dst not in followed:
            continue
        if status == "D":
            out.append(Version(sha, time, None, dst))
        else:
            out.append(Version(sha, time, _blob(root, blob), dst, link=mode == "120000"))
    return out


def first_commit_time(path: str | Path) -> datetime | None:
    """Committer time (UTC) of the first commit that added ``path``, or ``None``."""
    versions = committed_versions(path)
    return versions[0].time if versions else None


def work_tree_hidden(path: str | Path) -> str | None:
    """Why the file at ``path`` differs from ``HEAD:path`` although ``git status`` may not say so,
    or ``None`` when its bytes are the committed ones. The work-tree file's blob hash is
    compared with the committed blob, so ``git update-index --skip-worktree`` or
    ``--assume-unchanged`` cannot hide an edit; the flag, when set, is named."""
    found = _rel(path)
    if found is None:
        return None
    root, rel = found
    committed = _git(root, "rev-parse", "--verify", "-q", f"HEAD:{rel}")
    if not committed:
        return NOT_IN_HEAD
    if Path(path).is_symlink():
        return "a link in the work tree"
    now = _git(root, "hash-object", "--path", rel, "--", str(Path(path).resolve()))
    if now == committed:
        return None
    flags = str(_git(root, "ls-files", "-v", "--", rel) or "")[:1]
    if flags == "S":
        return "differs from HEAD, hidden from git status by 'git update-index --skip-worktree'"
    if flags.islower():
        return "differs from HEAD, hidden from git status by 'git update-index --assume-unchanged'"
    return "differs from HEAD"


def not_as_committed(*paths: str | Path) -> list[tuple[Path, str]]:
    """``(path, why)`` for each of ``paths`` whose bytes are not ``HEAD``'s
    (:func:`work_tree_hidden`; ``why`` is :data:`NOT_IN_HEAD` for a file in no commit of
    ``HEAD``). The run's refusal and the audit's failure word the same finding each their way."""
    out = []
    for p in paths:
        why = work_tree_hidden(p)
        if why is not None:
            out.append((Path(p), why))
    return out
