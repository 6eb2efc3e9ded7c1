"""Pictures compared by what they show, for the tolerant mode of the audit.

Two matplotlib releases rasterise the same figure differently (each bundles its own FreeType: a
glyph's anti-aliased edge moves by a pixel, a legend or an axis box by a few). In the exact mode
a figure must be the same bytes; in the tolerant mode (:mod:`tailgate.audit.compare`) the stored
picture and the re-made one are decoded to RGB, each channel is smoothed with a Gaussian of
:data:`BLUR_PIXELS` pixels (a shift of a pixel or two then changes a shade a little, while a
mark, a line or a word that is not in the other picture still changes it a lot), and no smoothed
channel of any pixel may differ by more than :data:`DRIFT_LEVELS` of 255: the largest
difference measured between the allowed matplotlib releases, with a margin
(``workflow/docs/threat-model.md``, "Pictures"). There is no share of pixels allowed to differ
beyond it: one pixel over the drift fails.

A picture is a hostile file: its size is read from its PNG header before anything is decoded,
and a picture whose size is not the re-made one's, or that is larger than :data:`MAX_PIXELS`,
fails without being decoded (a few hundred kilobytes of PNG can declare gigabytes of pixels).
"""

from __future__ import annotations

import base64
import io
import re
import struct
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BLUR_PIXELS",
    "DRIFT_LEVELS",
    "MAX_PIXELS",
    "PixelDifference",
    "embedded_pictures",
    "pixel_difference",
    "png_size",
]

#: the standard deviation, in pixels, of the Gaussian each channel is smoothed with
BLUR_PIXELS = 8.0
#: the largest smoothed difference (levels of 255) of any channel of any pixel that the
#: tolerant mode accepts: the drift measured between the allowed matplotlib releases, with a
#: margin (threat model, "Pictures")
DRIFT_LEVELS = 48.0
#: the largest picture, in pixels, the audit decodes: the report's figures are at most a few
#: million pixels (1,100 pixels wide; a panel or row per condition, pair or test), and
#: decoding and smoothing costs about 30 bytes a pixel
MAX_PIXELS = 20_000_000

_EMBEDDED = re.compile(r"src='data:image/png;base64,([A-Za-z0-9+/=]*)'")
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class PixelDifference:
    """How two pictures differ: their sizes and the largest smoothed difference (levels of
    255) of any channel of any pixel."""

    size_a: tuple[int, int]
    size_b: tuple[int, int]
    largest: float

    @property
    def within(self) -> bool:
        return self.size_a == self.size_b and self.largest <= DRIFT_LEVELS

    def describe(self) -> str:
        if self.size_a != self.size_b:
            return (
                f"a picture of {self.size_a[0]}×{self.size_a[1]} pixels recorded, "
                f"{self.size_b[0]}×{self.size_b[1]} re-made"
            )
        return (
            f"differs from the re-made picture by up to {self.largest:.0f} levels of 255 "
            f"after smoothing, beyond the {DRIFT_LEVELS:.0f} that other matplotlib releases "
            "may make differ"
        )


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header, without decoding; ``ValueError`` where ``data`` does
    not start like a PNG."""
    if len(data) < 24 or data[:8] != _SIGNATURE or data[12:16] != b"IHDR":
        raise ValueError("not a PNG picture (no PNG signature and header)")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def _rgb(data: bytes, size: tuple[int, int]) -> np.ndarray:
    """The picture's RGB channels as float32, decoded only as a PNG of ``size``."""
    from PIL import Image

    with Image.open(io.BytesIO(data), formats=["PNG"]) as img:
        if img.size != size:
            raise ValueError(f"its header says {size[0]}×{size[1]} pixels, the picture {img.size}")
        img.load()
        return np.asarray(img.convert("RGB"), dtype=np.float32)


def pixel_difference(a: bytes, b: bytes) -> PixelDifference:
    """Compare the recorded picture ``a`` with the re-made ``b`` (their bytes) as the module
    docstring says; ``ValueError`` where one cannot be decoded or is too large to be."""
    from scipy import ndimage

    size_a, size_b = png_size(a), png_size(b)
    if size_a != size_b:
        return PixelDifference(size_a, size_b, 255.0)
    if size_a[0] * size_a[1] > MAX_PIXELS:
        raise ValueError(
            f"a picture of {size_a[0]}×{size_a[1]} pixels, more than the {MAX_PIXELS:,} the "
            "audit decodes"
        )
    try:
        pa, pb = _rgb(a, size_a), _rgb(b, size_b)
    except Exception as exc:  # Pillow raises its own errors for a damaged picture
        raise ValueError(f"not a readable picture ({type(exc).__name__}: {exc})") from None
    largest = 0.0
    for channel in range(3):  # one channel at a time: a third of the memory
        ca = ndimage.gaussian_filter(pa[:, :, channel], BLUR_PIXELS)
        cb = ndimage.gaussian_filter(pb[:, :, channel], BLUR_PIXELS)
        largest = max(largest, float(np.abs(ca - cb).max(initial=0.0)))
    return PixelDifference(size_a, size_b, largest)


def embedded_pictures(html: str) -> list[bytes]:
    """The PNG pictures embedded in a report (``data:`` addresses), in order."""
    return [base64.b64decode(m) for m in _EMBEDDED.findall(html)]
