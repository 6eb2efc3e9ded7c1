"""Whether a compiled file runs in place of its source, and whether it was compiled from it.

Python runs ``__pycache__/<name>.<tag>.pyc`` instead of compiling ``<name>.py`` when the
compiled file's header passes PEP 552's checks: an unchecked hash-based file always does, a
checked one when its hash is the source's, a timestamp one when the source's time and size
match. A file planted there with other code would then run without changing the source. The
runtime fingerprint (:mod:`tailgate.runtime.fingerprint`) and the start-up hook checks
(:mod:`tailgate.runtime.startup`) both use these two tests.

The comparison compiles the source, for every compiled file of the package. A job forked from the
run's warm server (:mod:`tailgate.runtime.forkserver`) takes the server's answers (:func:`judged`,
computed once a run), each kept under the compiled file's and its source's status
(:func:`status_key`): everything both tests read is in the two files, so an answer holds while
neither changed.

This module imports no other tailgate module: the server, which imports no tailgate package,
runs it from its source file.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["Status", "accepted", "compiled_from", "judged", "source_of", "stale", "status_key"]


def accepted(pyc: Path, source: Path) -> bool:
    """Whether Python would run ``pyc`` in place of ``source`` (PEP 552 header checks)."""
    data = pyc.read_bytes()[:16]
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(data[4:8], "little")
    if flags & 0b1:  # hash-based: unchecked is always run, checked when the hash matches
        return not flags & 0b10 or data[8:16] == importlib.util.source_hash(source.read_bytes())
    st = source.stat()
    mtime = int.from_bytes(data[8:12], "little")
    size = int.from_bytes(data[12:16], "little")
    return mtime == (int(st.st_mtime) & 0xFFFFFFFF) and size == (st.st_size & 0xFFFFFFFF)


def compiled_from(pyc: Path, source: Path) -> bool:
    """Whether ``pyc``'s code is the compiled ``source`` (at the optimisation its name says)."""
    tag = pyc.name.split(".")
    level = next((int(t[4:]) for t in tag if t.startswith("opt-") and t[4:].isdigit()), 0)
    try:
        code = marshal.loads(pyc.read_bytes()[16:])
        return code == compile(
            source.read_bytes(), str(source), "exec", optimize=level, dont_inherit=True
        )
    except (ValueError, EOFError, TypeError, SyntaxError):
        return False


def stale(pyc: Path, source: Path) -> bool:
    """Whether Python would run ``pyc`` in place of ``source`` but ``pyc`` is not compiled from
    it."""
    return accepted(pyc, source) and not compiled_from(pyc, source)


#: a file's device, inode, size and modification time (ns)
Status = tuple[int, int, int, int]


def source_of(pyc: Path) -> Path:
    """The source file Python compares ``__pycache__/<name>.<tag>.pyc`` against."""
    return pyc.parent.parent / (pyc.name.split(".", 1)[0] + ".py")


def status_key(pyc: Path, source: Path) -> tuple[str, Status, Status] | None:
    """``pyc``'s path with its and its source's status, under which :func:`compiled_from`'s
    answer can be kept; None unless both are regular files (a FIFO is never read)."""
    out = []
    for path in (pyc, source):
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return str(pyc), out[0], out[1]


def judged(roots: Iterable[Path]) -> dict[tuple[str, Status, Status], bool]:
    """:func:`stale` of every compiled file in a ``__pycache__`` under ``roots``, keyed by
    :func:`status_key` (a file that changed while it was judged is left out)."""
    out = {}
    for root in roots:
        for pyc in sorted(root.rglob("__pycache__/*.pyc")):
            source = source_of(pyc)
            key = status_key(pyc, source)
            if key is None:
                continue
            verdict = stale(pyc, source)
            if status_key(pyc, source) == key:
                out[key] = verdict
    return out
