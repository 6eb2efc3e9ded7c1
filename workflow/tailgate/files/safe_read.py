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
* refuse JSON nested deeper than :data:`MAX_DEPTH` before parsing it: the nesting is measured
  once on the text with its strings removed, at C speed (``bytes.replace``, a regular expression
  that matches wherever a quote stands, then block by block ``bytes.translate`` down to the
  brackets and a running sum in numpy, stopped at the first block deeper than the limit), so no
  reader recurses, no Python loop runs per byte and 200 MB of ``[`` cost one read and 0.26 GB;
* refuse numbers tailgate never writes (it writes JSON with ``allow_nan=False``): ``NaN``,
  ``Infinity``, a float that overflows to infinity (``1e999``) and an integer of more than
  :data:`MAX_DIGITS` digits, whose conversion to a float overflows.

Every refusal is a :class:`~tailgate.errors.DamagedFileError` naming the file, which the audit
turns into a failed check (exit 4) and ``status`` into a line of its output; nothing here exits
1 or waits.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from tailgate.errors import DamagedFileError
from tailgate.lazy import lazy_module

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_DIGITS",
    "is_regular",
    "json_depth",
    "load_json",
    "loads_json",
    "open_regular",
    "read_bytes",
    "read_text",
    "require_regular",
    "same_bytes",
    "sha256_file",
]

#: the largest file read whole (bytes); tables are hashed in blocks and have no limit
MAX_BYTES = 256 * 1024 * 1024
#: the deepest JSON nesting accepted (tailgate's own files nest fewer than 15 levels)
MAX_DEPTH = 200

#: the most digits of an integer accepted (a float holds at most 309 before the point)
MAX_DIGITS = 300

#: numpy on first use: 0.4 s of start-up that ``status`` and ``verify`` need only for a long text
np = lazy_module("numpy")

_FIX = "restore it from the run that wrote it, or re-run that stage"
# a string from its opening quote to its closing one, or to the end of the text when it has none,
# once its escaped characters are gone: it matches wherever a quote stands (a single-character
# repeat, no backtracking), so an unterminated ``"\\"\\"…`` costs one linear pass
_STRING = re.compile(rb'"[^"]*(?:"|\Z)')
#: bytes of the text scanned at once: bounds the memory of the running sum (4 bytes a bracket)
_BLOCK = 1 << 22
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
#: digits all read as "0" and "E" as "e", so that fast substring searches find a number that may
#: overflow: an exponent of three digits or more digits than :data:`MAX_DIGITS` (rare: honest
#: files never hold one and skip the number-by-number parse)
_DIGITS = bytes.maketrans(b"0123456789E", b"0000000000e")
_HUGE = (b"e000", b"e+000", b"0" * (MAX_DIGITS + 1))


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


def _not_regular(path: str | Path, mode: int) -> DamagedFileError:
    return DamagedFileError(
        f"{path}: {_kind(mode)}, not a regular file, where tailgate wrote a file; {_FIX}. "
        "The file was not read."
    )


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
        raise _not_regular(path, mode)


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
            raise _not_regular(path, st.st_mode)
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


def same_bytes(a: str | Path, b: str | Path) -> bool:
    """Whether the regular files ``a`` and ``b`` hold the same bytes: their sizes are compared
    first, from their metadata, so that a file of another size (a sparse file of a terabyte
    costs no disk) is never read."""
    return os.stat(a).st_size == os.stat(b).st_size and sha256_file(a) == sha256_file(b)


def json_depth(data: bytes | str, stop: int | None = None) -> int:
    """The deepest nesting of arrays and objects in the JSON text ``data`` (strings removed
    first, so brackets inside them do not count); linear time at C speed, no recursion, memory
    bounded by the text's size plus a block of the running sum. With ``stop``, the scan ends at
    the first block that nests deeper (the depth returned is then that block's, a lower bound)."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    if b"\\" in raw:  # a backslash always escapes the next character: drop both
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    if b'"' in raw:
        raw = _STRING.sub(b"", raw)
    step = np.zeros(256, dtype=np.int8)
    step[list(b"[{")], step[list(b"]}")] = 1, -1
    depth = deepest = 0
    for start in range(0, len(raw), _BLOCK):
        brackets = raw[start : start + _BLOCK].translate(None, _NOT_BRACKET)
        if not brackets:
            continue
        running = np.cumsum(step[np.frombuffer(brackets, dtype=np.uint8)], dtype=np.int32)
        deepest = max(deepest, depth + int(running.max()))
        if stop is not None and deepest > stop:
            break
        depth += int(running[-1])
    return deepest


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number tailgate writes")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} overflows to infinity")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits (more than {MAX_DIGITS})")
    return int(text)


def loads_json(data: bytes | str, where: str | Path, *, max_depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed as JSON, refused (naming ``where``) when nested deeper than
    ``max_depth``, when not JSON, or when it holds a number tailgate never writes (module
    docstring)."""
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") > max_depth:  # fewer cannot nest deeper: no scan
        try:
            depth = json_depth(raw, stop=max_depth)
        except MemoryError:
            raise DamagedFileError(f"{where}: too large to scan; {_FIX}") from None
        if depth > max_depth:
            raise DamagedFileError(
                f"{where}: JSON nested more than {max_depth} levels deep (at least {depth}), "
                f"deeper than tailgate reads (it writes fewer than 15); {_FIX}. The file was not "
                "parsed."
            )
    numbers = raw.translate(_DIGITS)
    careful: dict[str, Any] = {}
    if any(huge in numbers for huge in _HUGE):
        careful = {"parse_float": _finite_float, "parse_int": _bounded_int}
    del numbers
    try:
        return json.loads(data, parse_constant=_refuse_constant, **careful)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise DamagedFileError(f"{where}: not JSON ({str(exc)[:200]}); {_FIX}") from None


def load_json(path: str | Path, *, limit: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON document in the regular file ``path`` (module docstring)."""
    return loads_json(read_bytes(path, limit=limit), path, max_depth=max_depth)
