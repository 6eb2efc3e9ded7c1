"""Whether a compiled file runs in place of its source, and whether it was compiled from it.

Python runs ``__pycache__/<name>.<tag>.pyc`` instead of compiling ``<name>.py`` when the
compiled file's header passes PEP 552's checks: an unchecked hash-based file always does, a
checked one when its hash is the source's, a timestamp one when the source's time and size
match. A file planted there with other code would then run without changing the source. The
runtime fingerprint (:mod:`tailgate.prereg.runtime`) and the start-up hook checks
(:mod:`tailgate.prereg.startup`) both use these two tests.
"""

from __future__ import annotations

import importlib.util
import marshal
from pathlib import Path

__all__ = ["accepted", "compiled_from"]


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
