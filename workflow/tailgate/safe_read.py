"""Reading files of a results folder that may be hostile: regular files only, bounded JSON.

Every file the audit, ``status``, ``verify`` and ``export`` read comes from the folder under
review, which its author controls. A named pipe (FIFO) at a recorded path would make a plain
``open`` wait forever for a writer; a device would stream without end; a JSON document nested
100,000 levels deep exhausts Python's recursion limit in the parser or in any code that walks
the result. The readers here therefore

* open without blocking (``O_NONBLOCK``) and ``fstat`` the open descriptor, refusing anything
  that is not a regular file (a FIFO, a device, a socket, a folder) before a byte is read;
* refuse a file larger than a limit (:data:`MAX_BYTES` unless the caller gives one) before
  reading it;
* refuse JSON nested deeper than :data:`MAX_DEPTH` before parsing it: the nesting is measured on
  the text with its strings removed (linear time, no recursion).

Every refusal is a :class:`~tailgate.errors.DamagedFileError` naming the file, which the audit
turns into a failed check (exit 4) and ``status`` into a line of its output; nothing here exits
1 or waits.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from tailgate.errors import DamagedFileError

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "is_regular",
    "json_depth",
    "load_json",
    "loads_json",
    "open_regular",
    "read_bytes",
    "read_text",
    "require_regular",
    "sha256_file",
]

#: the largest file read whole (bytes); tables are hashed in blocks and have no limit
MAX_BYTES = 256 * 1024 * 1024
#: the deepest JSON nesting accepted (tailgate's own files nest fewer than 15 levels)
MAX_DEPTH = 200

_FIX = "restore it from the run that wrote it, or re-run that stage"
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def is_regular(path: str | Path) -> bool:
    """Whether ``path`` is a regular file (following links), without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def require_regular(path: str | Path) -> None:
    """Refuse ``path`` unless it is a regular file (for readers that open it themselves, such
    as Parquet's); ``FileNotFoundError`` passes through unchanged."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise DamagedFileError(f"{path}: cannot be read ({exc.strerror}); {_FIX}") from None
    if not stat.S_ISREG(mode):
        raise DamagedFileError(
            f"{path}: {_kind(mode)}, not a regular file, where tailgate wrote a file; {_FIX}. "
            "The file was not read."
        )


@contextmanager
def open_regular(path: str | Path, *, limit: int | None = None) -> Iterator[IO[bytes]]:
    """``path`` opened for reading in binary mode, only if it is a regular file of at most
    ``limit`` bytes (module docstring). ``FileNotFoundError`` passes through unchanged (callers
    treat a missing file as absent); every other refusal is a :class:`DamagedFileError`."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket cannot be opened as a file
            raise DamagedFileError(
                f"{path}: a socket, not a regular file; {_FIX}. The file was not read."
            ) from None
        raise DamagedFileError(f"{path}: cannot be read ({exc.strerror}); {_FIX}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DamagedFileError(
                f"{path}: {_kind(st.st_mode)}, not a regular file, where tailgate wrote a file; "
                f"{_FIX}. The file was not read."
            )
        if limit is not None and st.st_size > limit:
            raise DamagedFileError(
                f"{path}: {st.st_size} bytes, more than the {limit} a file of this kind may "
                f"hold; {_FIX}. The file was not read."
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh


def read_bytes(path: str | Path, *, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``; module docstring)."""
    with open_regular(path, limit=limit) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while being read
        raise DamagedFileError(f"{path}: more than {limit} bytes; {_FIX}")
    return data


def read_text(path: str | Path, *, limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (module docstring)."""
    data = read_bytes(path, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedFileError(f"{path}: not UTF-8 text ({exc}); {_FIX}") from None


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 (hex) of the regular file ``path``, read in chunks (no size limit)."""
    h = hashlib.sha256()
    with open_regular(path) as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in the JSON text ``data`` (strings removed
    first, so brackets inside them do not count); linear time, no recursion."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    skeleton = _NOT_BRACKET.sub(b"", _STRING.sub(b"", raw))
    depth = deepest = 0
    for byte in skeleton:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def loads_json(data: bytes | str, where: str | Path, *, max_depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed as JSON, refused (naming ``where``) when nested deeper than
    ``max_depth`` or not JSON."""
    depth = json_depth(data)
    if depth > max_depth:
        raise DamagedFileError(
            f"{where}: JSON nested {depth} levels deep, more than the {max_depth} tailgate "
            f"reads (tailgate writes fewer than 15); {_FIX}. The file was not parsed."
        )
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise DamagedFileError(f"{where}: not JSON ({exc}); {_FIX}") from None


def load_json(path: str | Path, *, limit: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON document in the regular file ``path`` (module docstring)."""
    return loads_json(read_bytes(path, limit=limit), path, max_depth=max_depth)
