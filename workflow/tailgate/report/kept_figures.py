"""Figures the user's audits drew before on this machine, taken instead of drawn again.

An audit draws every figure of the report again and compares the pixels; most of its time is
that drawing. Within :func:`kept_in` (the audit's re-rendering, with the user's figure folder,
:func:`tailgate.user_cache.figure_cache`), :func:`tailgate.report.figures.png_all` takes from
the folder each figure whose drawing is known and keeps there each one it draws. A figure is
filed under the SHA-256 of everything its pixels depend on: what it plots
(:func:`tailgate.report.figures.png_all`'s key, known before the figure is built), the code
(the folder is the code digest's; with what it plots, the code fixes the figure's size and
resolution), and the drawing environment (:func:`drawing_environment`: Python, matplotlib, numpy,
Pillow, FreeType and zlib versions, the default font file and every matplotlib setting).

What is kept was drawn by an audit of the user's own from the statistics that audit re-made:
the results folder under audit never supplies it, and the run's report stage never writes
here. A kept figure that cannot be read, or is not a PNG, is drawn again.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from tailgate.errors import DamagedFileError
from tailgate.files.atomic import write_bytes
from tailgate.files.safe_read import read_bytes

__all__ = ["drawing_environment", "keep", "kept", "kept_in", "taken"]

_FOLDER: ContextVar[Path | None] = ContextVar("tailgate_kept_figures", default=None)
#: the largest figure taken from the folder (the demo's largest is about 0.3 MB)
_LIMIT = 64 * 2**20
_PNG = b"\x89PNG\r\n\x1a\n"


@contextmanager
def kept_in(folder: Path | None) -> Iterator[None]:
    """Within the block figures are taken from and kept in ``folder`` (None: none are)."""
    token = _FOLDER.set(folder)
    try:
        yield
    finally:
        _FOLDER.reset(token)


def kept() -> bool:
    """Whether figures are taken from and kept in a folder here."""
    return _FOLDER.get() is not None


def drawing_environment() -> str:
    """What a figure's pixels depend on beyond its content and the code, as text: read at each
    use, since matplotlib's settings may change within a process."""
    import matplotlib
    import numpy
    import PIL
    from matplotlib import font_manager, ft2font

    return json.dumps(
        [
            sys.version,
            matplotlib.__version__,
            numpy.__version__,
            PIL.__version__,
            ft2font.__freetype_version__,
            zlib.ZLIB_RUNTIME_VERSION,
            font_manager.findfont(font_manager.FontProperties()),
            sorted((k, repr(v)) for k, v in matplotlib.rcParams.items()),
        ]
    )


def _file(folder: Path, environment: str, key: str) -> Path:
    name = hashlib.sha256(f"{environment}\0{key}".encode()).hexdigest()
    return folder / f"{name}.png"


def taken(keys: Iterable[str]) -> dict[str, bytes]:
    """The kept drawing of each of ``keys`` the folder holds."""
    folder = _FOLDER.get()
    out: dict[str, bytes] = {}
    if folder is None:
        return out
    environment = drawing_environment()
    for key in keys:
        try:
            data = read_bytes(_file(folder, environment, key), limit=_LIMIT)
        except (OSError, DamagedFileError):
            continue
        if data.startswith(_PNG):
            out[key] = data
    return out


def keep(drawn: Mapping[str, bytes]) -> None:
    """File each drawing of ``drawn`` (key → PNG bytes) in the folder, where one is set."""
    folder = _FOLDER.get()
    if folder is None:
        return
    environment = drawing_environment()
    for key, data in drawn.items():
        try:
            write_bytes(_file(folder, environment, key), data)
        except OSError:
            return
