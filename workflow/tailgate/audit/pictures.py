"""Pictures compared by what they show, for the tolerant mode of the audit.

Two matplotlib or FreeType releases rasterise the same figure differently: a glyph's
anti-aliased edge moves by a pixel, a legend or an axis box moves by a few (another layout
pass). In the exact mode a figure must be the same bytes; in the tolerant mode
(:mod:`tailgate.audit.compare`) the stored picture and the re-made one are decoded to RGB, each
channel is smoothed with a Gaussian of :data:`BLUR_PIXELS` pixels (a shift of a few pixels then
changes a shade a little, while a mark, a line or a word that is not in the other picture still
changes it a lot), and a pixel *differs* where some smoothed channel differs by more than
:data:`VISIBLE_LEVELS` of 255. The pictures must have the same size and at most
:data:`PIXEL_TOLERANCE` of their pixels may differ. The constants are set from the drift measured
between the lowest matplotlib ``pyproject.toml`` allows and the locked one, and from doctored
pictures (``workflow/docs/threat-model.md``, "Pictures").
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BLUR_PIXELS",
    "PIXEL_TOLERANCE",
    "VISIBLE_LEVELS",
    "PixelDifference",
    "embedded_pictures",
    "pixel_difference",
]

#: the standard deviation, in pixels, of the Gaussian each channel is smoothed with
BLUR_PIXELS = 8.0
#: a smoothed channel that differs by more than this many levels (of 255) is a difference
VISIBLE_LEVELS = 48
#: the largest share of differing pixels the tolerant mode accepts
PIXEL_TOLERANCE = 0.005

_EMBEDDED = re.compile(r"src='data:image/png;base64,([A-Za-z0-9+/=]*)'")


@dataclass(frozen=True)
class PixelDifference:
    """How two pictures differ: their sizes, the share of differing pixels and the largest
    smoothed difference (levels of 255)."""

    size_a: tuple[int, int]
    size_b: tuple[int, int]
    share: float
    largest: float

    @property
    def within(self) -> bool:
        return self.size_a == self.size_b and self.share <= PIXEL_TOLERANCE

    def describe(self) -> str:
        if self.size_a != self.size_b:
            return (
                f"a picture of {self.size_a[0]}×{self.size_a[1]} pixels recorded, "
                f"{self.size_b[0]}×{self.size_b[1]} re-made"
            )
        return (
            f"{self.share:.2%} of its pixels differ from the re-made picture (by up to "
            f"{self.largest:.0f} levels; other versions may make {PIXEL_TOLERANCE:.1%} differ)"
        )


def _rgb(data: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        img.load()
        return np.asarray(img.convert("RGB"), dtype=np.float64)


def pixel_difference(a: bytes, b: bytes) -> PixelDifference:
    """Compare two PNG pictures (their bytes) as the module docstring says; ``ValueError``
    where one cannot be decoded."""
    from scipy import ndimage

    try:
        pa, pb = _rgb(a), _rgb(b)
    except Exception as exc:  # Pillow raises its own errors for a damaged picture
        raise ValueError(f"not a readable picture ({type(exc).__name__}: {exc})") from None
    size_a, size_b = (pa.shape[1], pa.shape[0]), (pb.shape[1], pb.shape[0])
    if size_a != size_b:
        return PixelDifference(size_a, size_b, 1.0, 255.0)
    sigma = (BLUR_PIXELS, BLUR_PIXELS, 0)
    diff = np.abs(ndimage.gaussian_filter(pa, sigma) - ndimage.gaussian_filter(pb, sigma))
    diff = diff.max(axis=2)
    return PixelDifference(
        size_a, size_b, float((diff > VISIBLE_LEVELS).mean()), float(diff.max(initial=0.0))
    )


def embedded_pictures(html: str) -> list[bytes]:
    """The PNG pictures embedded in a report (``data:`` addresses), in order."""
    return [base64.b64decode(m) for m in _EMBEDDED.findall(html)]
