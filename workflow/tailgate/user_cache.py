"""The user's own caches of what tailgate made on this machine: compiled numba kernels, and the
figures an audit drew.

Each lives in ``<cache>/tailgate/<kind>/<code>`` (``<cache>``: ``XDG_CACHE_HOME`` or ``~/.cache``;
``<code>``: the code digest of the tailgate in use, :func:`tailgate.code.code_digest`), which only
the user's own processes can have written:

- the folders ``tailgate``, ``<kind>`` and ``<code>`` are made by this process with mode 0700
  where they are missing, and are used only when each is a folder (not a link) owned by the
  user that nobody else may write;
- ``<code>`` changes with any edit of the package, so nothing is reused by other code;
- of the folders of other code (an older version, an edited checkout), the
  :data:`KEEP_FOLDERS` used last are kept, and any other that no process used for a day is
  removed.

Someone who could write there could as well edit the user's shell start-up (the threat model).

**Kernels.** numba's cache index files are pickles, unpickled when a kernel loads: a planted one
runs its payload. numba looks for them beside the sources (in an editable install, a folder of
the repository) and in ``NUMBA_CACHE_DIR`` (set by whoever prepared the environment). Neither is
read here. Every entry point (a workflow run and the jobs it starts, the ``tailgate`` command)
points numba at the user's ``kernels`` folder; the code digest in its name keeps a kernel from
loading against sources other than the ones it was compiled from (numba itself checks only the
kernel's own file, not the kernels it calls from other modules). ``audit --reproduce`` runs its
re-run with ``XDG_CACHE_HOME`` in its own scratch folder, so the reviewer's re-run compiles
every kernel afresh. Where the cache cannot be used (a folder of someone else's, a link, a
read-only home), the run compiles into a new empty folder of its own, removed when the process
that made it exits. Kernels compiled once load in about a second in every later run instead of
being compiled again (about a fifth of the CPU of a small study's run: the benchmarks page).

**Figures.** The audit draws every figure of the report again from the statistics it re-made
and compares the pixels (:mod:`tailgate.report.figures`); what it drew it keeps in the user's
``figures`` folder, named by what determines the pixels, so a later audit on this machine of a
figure with the same content draws it no more. Only an audit writes there: a run's report
stage never does, so an audit never compares a figure with the run's own drawing of it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path

from tailgate.code import code_digest

__all__ = [
    "KEEP_FOLDERS",
    "figure_cache",
    "kernel_cache",
    "private_folder",
    "use_kernel_cache",
    "user_cache_home",
]

#: folders of other code kept whatever their age (kernels: about 1.3 MB each)
KEEP_FOLDERS = 8
#: the folder :func:`use_kernel_cache` pointed this process at
_in_use: Path | None = None


def user_cache_home() -> Path:
    """The user's cache folder: ``XDG_CACHE_HOME``, else ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))


def _private(folder: Path) -> bool:
    """Whether ``folder`` (made with mode 0700 where missing) is a folder, not a link, of this
    user's that no one else may write."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = folder.lstat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.geteuid()
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def private_folder(kind: str) -> Path | None:
    """The user's ``kind`` folder for the code in use (made where missing; its time set to now),
    or None where it cannot be trusted or written."""
    home = user_cache_home()
    if not home.is_absolute():
        return None
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)  # as XDG asks, where missing
    except OSError:
        return None
    kinds = home / "tailgate" / kind
    folder = kinds / code_digest()[:16]
    if not all(_private(f) for f in (kinds.parent, kinds, folder)):
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return None
    try:
        os.utime(folder)
    except OSError:
        return None
    _prune(kinds, keep=folder)
    return folder


def kernel_cache() -> Path | None:
    """The user's kernel folder for the code in use, or None (:func:`private_folder`)."""
    return private_folder("kernels")


def figure_cache() -> Path | None:
    """The user's folder of the figures audits drew with the code in use, or None."""
    return private_folder("figures")


def _prune(kinds: Path, keep: Path) -> None:
    """Remove the folders of other code beyond the :data:`KEEP_FOLDERS` used last that no
    process used for a day (a run of that code may still be reading from it)."""
    try:
        others = [(f.lstat().st_mtime, f) for f in kinds.iterdir() if f != keep]
    except OSError:
        return
    day_ago = time.time() - 86400
    for used, f in sorted(others, reverse=True)[KEEP_FOLDERS:]:
        if used < day_ago:
            shutil.rmtree(f, ignore_errors=True)


def use_kernel_cache(fallback: str | Path | None = None) -> Path:
    """Point numba at :func:`kernel_cache` (``NUMBA_CACHE_DIR`` of this process, so of every
    process it starts after this call, and numba's setting where numba is loaded) and return
    the folder; where that cannot be used, at a new empty folder in ``fallback`` (default: the
    system's temporary folder), removed when this process exits. A kernel module loaded before
    this call keeps the folder it was loaded with. Once a process: a later call returns the
    same folder while ``NUMBA_CACHE_DIR`` still names it."""
    global _in_use
    if _in_use is not None and os.environ.get("NUMBA_CACHE_DIR") == str(_in_use):
        return _in_use
    folder = kernel_cache()
    if folder is None:
        base = Path(fallback) if fallback is not None else Path(tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="tailgate-numba-", dir=base)).resolve()
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
    _in_use = folder
    return folder
