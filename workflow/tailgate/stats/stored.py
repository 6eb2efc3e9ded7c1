"""A statistic as the results' JSON stores it: a finite float, or None where it is missing, NaN or
infinite (JSON has neither), read back as NaN."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["finite_or_none", "none_to_nan"]


def finite_or_none(v: Any) -> float | None:
    """A statistic as JSON stores it.

    Parameters
    ----------
    v : float or None
        The statistic.

    Returns
    -------
    float or None
        ``float(v)``; None where ``v`` is None or not finite.
    """
    return None if v is None or not math.isfinite(v) else float(v)


def none_to_nan(v: Any) -> float:
    """A stored statistic read back (the inverse of :func:`finite_or_none` on finite values).

    Parameters
    ----------
    v : float or None
        The stored value.

    Returns
    -------
    float
        ``float(v)``; NaN where ``v`` is None.
    """
    return math.nan if v is None else float(v)
