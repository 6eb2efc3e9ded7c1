"""What git knows about a file: the commit checked out, whether the tree is dirty, whether a path
is committed as it is now, and every committed version of a path. Every function returns
``None`` (or an empty answer) outside a git work tree; callers decide what that means.

**Git reads the repository as data, never as instructions.** A repository's own settings can
run programs and change what git reports: a clean filter in ``.git/config`` applied by
``.git/info/attributes`` rewrites the bytes git hashes, ``core.fsmonitor`` and ``gpg.program``
run programs, ``core.worktree`` points at another folder, ``include.path`` pulls in more of the
same, ``git replace`` and ``info/grafts`` swap commits. So no git call here reads the audited
repository's configuration, attributes files, hooks, ``info/`` or replace objects. The
repository is found by walking up to ``.git`` (a ``.git`` file's ``gitdir:``, a linked work
tree's ``commondir``), and git runs on a private git folder made once a process in a temporary
folder: a configuration written here (only the repository format and object format copied
from the repository's, read without includes), ``HEAD`` copied and ``index``, ``objects``,
``refs``, ``packed-refs`` and ``shallow`` linked to the repository's, nothing else. ``GIT_DIR``
and ``GIT_WORK_TREE`` are set, system and global configuration and system attributes are off,
replace objects are ignored, hooks point at ``/dev/null``, ``HOME`` is an empty folder and no
other ``GIT_*`` variable of the caller reaches git (:func:`run_git`). Whether a work-tree file
holds the committed bytes is decided here, from the bytes (git's blob id computed in Python),
never by git's status or ``hash-object``, which apply conversions. Replace refs and grafts are
reported (:func:`rewritten_history`): a history rewritten locally is not the published one.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

__all__ = [
    "NOT_IN_HEAD",
    "Version",
    "clone_head",
    "committed_versions",
    "ever_committed",
    "head_state",
    "is_shallow",
    "not_as_committed",
    "own_git",
    "repo_root",
    "rewritten_history",
    "run_git",
    "work_tree_hidden",
]

#: :func:`work_tree_hidden` of a file in no commit of ``HEAD``
NOT_IN_HEAD = "not in HEAD"

#: the repository's settings copied into the private configuration, with the values allowed
_FORMAT_KEYS = {
    "core.repositoryformatversion": ("0", "1"),
    "extensions.objectformat": ("sha1", "sha256"),
    "extensions.refstorage": ("files", "reftable"),
}
#: what the private git folder links from the repository's (per work tree, then shared)
_OWN_FILES = ("index",)
_SHARED_FILES = ("objects", "refs", "packed-refs", "shallow", "reftable")


@dataclass(frozen=True)
class _Repo:
    """A repository found on disk and its private git folder."""

    top: Path  # the work tree
    git_dir: Path  # the work tree's own git folder (a linked work tree's differs from common)
    common: Path  # the shared git folder: objects, refs, info/
    view: Path  # the private git folder git is run on
    object_format: str


_SCRATCH: dict[int, Path] = {}  # this process's temporary folder (keyed by process id)
_REPOS: dict[tuple[int, Path, Path], _Repo] = {}


def _scratch() -> Path:
    pid = os.getpid()  # a forked child makes its own: its parent removes the parent's at exit
    if pid not in _SCRATCH:
        _SCRATCH[pid] = Path(tempfile.mkdtemp(prefix="tailgate-git-"))
        (_SCRATCH[pid] / "home").mkdir()
        atexit.register(_remove_scratch, pid)
    return _SCRATCH[pid]


def _remove_scratch(pid: int) -> None:
    if os.getpid() == pid and pid in _SCRATCH:
        shutil.rmtree(_SCRATCH.pop(pid), ignore_errors=True)


def _environment(view: Path | None = None, top: Path | None = None) -> dict[str, str]:
    """The caller's environment without any ``GIT_*`` variable, git's configuration and
    attribute files outside the repository turned off (module docstring)."""
    home = str(_scratch() / "home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=home,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_LITERAL_PATHSPECS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
    )
    if view is not None and top is not None:
        env.update(GIT_DIR=str(view), GIT_WORK_TREE=str(top))
    return env


def _call(
    args: list[str], env: dict[str, str], cwd: Path, text: bool
) -> subprocess.CompletedProcess[str] | subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, env=env,
            capture_output=True, text=text, timeout=60, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None


def _git_dir(top: Path) -> Path | None:
    """The git folder of the work tree ``top`` (``.git``, or the ``gitdir:`` a ``.git`` file
    names), when it holds a ``HEAD``."""
    dot = top / ".git"
    if dot.is_file():
        try:
            line = dot.read_text(encoding="utf-8", errors="replace").splitlines()[0]
        except (OSError, IndexError):
            return None
        if not line.startswith("gitdir:"):
            return None
        dot = top / line[len("gitdir:") :].strip()
    return dot.resolve() if (dot / "HEAD").is_file() else None


def _format(common: Path) -> dict[str, str]:
    """The repository's format settings (:data:`_FORMAT_KEYS`), read from its configuration
    file alone (no includes, nothing else)."""
    pattern = "^(" + "|".join(k.replace(".", "[.]") for k in _FORMAT_KEYS) + ")$"
    res = _call(
        ["config", "--file", str(common / "config"), "--no-includes", "--get-regexp", pattern],
        _environment(), _scratch() / "home", True,
    )  # fmt: skip
    found = {}
    for line in str(res.stdout if res is not None else "").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lower() in _FORMAT_KEYS.get(key.lower(), ()):
            found[key.lower()] = value.strip().lower()
    return found


def _private(top: Path, git_dir: Path) -> _Repo:
    common = git_dir
    if (git_dir / "commondir").is_file():  # a linked work tree (git worktree add)
        shared = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
        common = (git_dir / shared).resolve()
    found = _format(common)
    view = Path(tempfile.mkdtemp(prefix="repo-", dir=_scratch()))
    lines = ["[core]"]
    lines.append(f"\trepositoryformatversion = {found.get('core.repositoryformatversion', '0')}")
    extensions = {k: v for k, v in found.items() if k.startswith("extensions.")}
    if extensions:
        lines.append("[extensions]")
        lines.extend(f"\t{k.partition('.')[2]} = {v}" for k, v in extensions.items())
    (view / "config").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in _OWN_FILES:
        (view / name).symlink_to(git_dir / name)
    for shared_index in git_dir.glob("sharedindex.*"):  # a split index names its shared part
        (view / shared_index.name).symlink_to(shared_index)
    for name in _SHARED_FILES:
        (view / name).symlink_to(common / name)
    fmt = extensions.get("extensions.objectformat", "sha1")
    return _Repo(top, git_dir, common, view, fmt)


def _repo(path: str | Path) -> _Repo | None:
    """The repository whose work tree holds ``path`` (found as git would, without git), with
    its private git folder (made once a process), or ``None``."""
    start = _dir_of(path)
    for top in (start, *start.parents):
        git_dir = _git_dir(top)
        if git_dir is None:
            continue
        key = (os.getpid(), top, git_dir)
        try:
            if key not in _REPOS:
                _REPOS[key] = _private(top, git_dir)
            repo = _REPOS[key]
            head = (git_dir / "HEAD").read_bytes()  # copied each time: git refuses a linked HEAD
            if not (repo.view / "HEAD").exists() or (repo.view / "HEAD").read_bytes() != head:
                (repo.view / "HEAD").write_bytes(head)
        except OSError:
            return None
        return repo
    return None


def run_git(path: str | Path, *args: str, text: bool = True) -> str | bytes | None:
    """Run ``git ARGS`` in the work tree holding ``path``, reading the repository as data
    (module docstring): its output (stripped when ``text``), or ``None`` when there is no
    repository or git fails."""
    repo = _repo(path)
    return None if repo is None else _git(repo, *args, text=text)


def _git(repo: _Repo, *args: str, text: bool = True) -> str | bytes | None:
    res = _call(list(args), _environment(repo.view, repo.top), repo.top, text)
    if res is None or res.returncode != 0:
        return None
    return res.stdout.strip() if text else res.stdout


def clone_head(path: str | Path, dest: str | Path) -> None:
    """Clone the repository holding ``path`` into the new folder ``dest``, read as data (module
    docstring): its branches and tags as committed, ``HEAD`` checked out, none of its settings,
    replace refs or grafts. Raises ``OSError`` naming git's error."""
    repo = _repo(path)
    if repo is None:
        raise OSError(f"{path}: not in a git work tree")
    args = ["clone", "-q", "--no-local", "--template=", str(repo.view), str(dest)]
    res = _call(args, _environment(), _scratch() / "home", True)
    if res is None or res.returncode != 0:
        raise OSError(f"'git clone' of {repo.top} failed: {'' if res is None else res.stderr}")


def own_git(root: str | Path, *args: str) -> str:
    """Run ``git ARGS`` in ``root/.git``, a repository this process made (a scratch project, a
    :func:`clone_head`), with the environment of :func:`run_git`: no configuration, hook or
    ``GIT_*`` variable of the user's applies. Its output; raises ``OSError`` naming git's error.
    """
    top = Path(root).resolve()
    res = _call(list(args), _environment(top / ".git", top), top, True)
    if res is None or res.returncode != 0:
        error = "git did not run" if res is None else str(res.stderr).strip()
        raise OSError(f"'git {' '.join(args)}' failed in {root}: {error}")
    return str(res.stdout)


def _dir_of(path: str | Path) -> Path:
    p = Path(path).resolve()
    while not p.is_dir():  # a deleted file's folder may be gone too
        if p.parent == p:
            break
        p = p.parent
    return p


def repo_root(path: str | Path) -> Path | None:
    """The top of the git work tree holding ``path``, or ``None``."""
    repo = _repo(path)
    return None if repo is None or _git(repo, "rev-parse", "--git-dir") is None else repo.top


def head_state(path: str | Path) -> dict[str, object] | None:
    """``{"commit": sha, "dirty": bool}`` for the work tree holding ``path``, or ``None``."""
    repo = _repo(path)
    commit = None if repo is None else _git(repo, "rev-parse", "HEAD")
    if repo is None or not commit:
        return None
    status = _git(repo, "status", "--porcelain", "--untracked-files=no")
    return {"commit": str(commit), "dirty": bool(status)}


def _rel(path: str | Path) -> tuple[_Repo, str] | None:
    repo = _repo(path)
    if repo is None:
        return None
    try:
        return repo, Path(path).resolve().relative_to(repo.top).as_posix()
    except ValueError:
        return None


def ever_committed(path: str | Path) -> bool:
    """Whether any commit reachable from HEAD touched ``path`` (a file or a folder)."""
    found = _rel(path)
    if found is None:
        return False
    repo, rel = found
    return bool(_git(repo, "log", "-1", "--format=%H", "--", rel))


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


#: refs the history walk skips: a stash holds work in progress that was never committed; a
#: replace ref names a stand-in, no commit of the history (:func:`rewritten_history`)
_NOT_HISTORY = ("--exclude=refs/stash", "--exclude=refs/replace/*")


def is_shallow(path: str | Path) -> bool:
    """Whether the repository holding ``path`` is a shallow clone (its history is cut)."""
    return run_git(path, "rev-parse", "--is-shallow-repository") == "true"


def rewritten_history(path: str | Path) -> list[str]:
    """What rewrites the history of the repository holding ``path`` where it is checked out:
    each replace ref (``git replace``) and a grafts file. git here ignores both (module
    docstring); a clone gets neither, so their presence means the history shown locally is not
    the one published."""
    repo = _repo(path)
    if repo is None:
        return []
    out = []
    refs = _git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/replace/")
    for line in str(refs or "").splitlines():
        ref, _, target = line.partition(" ")
        out.append(
            f"replace ref {ref} (shows {target[:12]} in place of {ref.rsplit('/')[-1][:12]})"
        )
    for folder in dict.fromkeys((repo.common, repo.git_dir)):
        if (folder / "info" / "grafts").exists():
            out.append(f"grafts file {folder / 'info' / 'grafts'}")
    return out


def _raw_log(repo: _Repo) -> list[tuple[str, datetime, str, str, str, str, str | None]]:
    """Every file change of every commit on every branch, tag and remote ref, merges against
    each parent, parents before children: (commit, time, status, new mode, new blob, path, the
    source path of a rename or copy)."""
    out = _git(
        repo, "log", *_NOT_HISTORY, "--all", "--full-history", "-m", "-M", "-C", "--raw",
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


def _blob(repo: _Repo, blob: str) -> bytes | None:
    content = _git(repo, "cat-file", "blob", blob, text=False)
    return content if isinstance(content, bytes) else None


def committed_versions(path: str | Path) -> list[Version]:
    """Every version of ``path`` committed anywhere in the repository's history (every branch,
    tag and remote ref; merges against every parent), parents before children, following the
    file through renames and copies (git's detection, and the same bytes added elsewhere)."""
    found = _rel(path)
    if found is None:
        return []
    repo, rel = found
    events = _raw_log(repo)
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
            out.append(Version(sha, time, _blob(repo, blob), dst, link=mode == "120000"))
    return out


def _blob_id(path: Path, size: int, object_format: str) -> str:
    """git's id of a blob holding the bytes of ``path`` (``size`` of them), computed here."""
    digest = hashlib.new(object_format)
    digest.update(b"blob %d\0" % size)
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def work_tree_hidden(path: str | Path) -> str | None:
    """Why the file at ``path`` differs from ``HEAD:path`` although ``git status`` may not say so,
    or ``None`` when its bytes are the committed ones. The bytes decide: the committed blob's
    size, then git's blob id of the work-tree bytes computed here (no filter, attribute or
    conversion of git's applies), so neither a filter nor ``git update-index --skip-worktree``
    or ``--assume-unchanged`` can hide an edit; the index flag, when set, is named."""
    found = _rel(path)
    if found is None:
        return None
    repo, rel = found
    entry = _git(repo, "ls-tree", "-l", "-z", "--full-tree", "HEAD", "--", rel)
    meta, _, name = str(entry or "").rstrip("\0").partition("\t")
    if name != rel:
        return NOT_IN_HEAD
    if Path(path).is_symlink():
        return "a link in the work tree"
    mode, kind, committed, size = meta.split()
    try:
        now = os.stat(path)
        same = (
            kind == "blob"
            and mode != "120000"
            and stat.S_ISREG(now.st_mode)
            and str(now.st_size) == size
            and _blob_id(Path(path), now.st_size, repo.object_format) == committed
        )
    except OSError:
        same = False
    if same:
        return None
    flags = str(_git(repo, "ls-files", "-v", "--", rel) or "")[:1]
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
