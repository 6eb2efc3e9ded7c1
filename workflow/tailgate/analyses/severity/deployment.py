"""Rates a deployment sees (ERRORQUAKE (2026), Section 4.1): Wilson intervals for error rates
and events per million queries at severity thresholds, with the empirical tail ratio (methods
note B6).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tailgate.lazy import lazy_module
from tailgate.stats.gpd import Interval

special = lazy_module("scipy.special")

# --- Wilson (methods note B6)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class WilsonInterval:
    """k events in n trials: ``proportion`` k/n and the Wilson score CI (methods note B6)."""

    k: int
    n: int
    proportion: float
    confidence_interval: Interval
    confidence_level: float


def wilson_interval(k: int, n: int, level: float = 0.95) -> WilsonInterval:
    """centre (k + z²/2)/(n + z²), half-width z√(k(n−k)/n + z²/4)/(n + z²), z = Φ⁻¹((1+level)/2)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"Wilson interval needs 0 <= k <= n and n > 0, got k={k}, n={n}")
    z = float(special.ndtri(0.5 + level / 2.0))
    z2 = z * z
    centre = (k + z2 / 2.0) / (n + z2)
    half = z * math.sqrt(k * (n - k) / n + z2 / 4.0) / (n + z2)
    return WilsonInterval(
        int(k), int(n), k / n, Interval(centre - half, centre + half), float(level)
    )


# --- deployment table (ERRORQUAKE (2026), App. Q) -------------------------------------------------


@dataclass(frozen=True)
class DeploymentRow:
    """Events with severity ≥ ``threshold`` per million queries, with the Wilson CI ×10⁶."""

    threshold: float
    events: int
    queries: int
    per_million: float
    confidence_interval: Interval


def deployment_table(
    counts,
    grid: np.ndarray,
    thresholds: Sequence[float] = (1.5, 2.0, 2.5, 3.0, 3.5, 4.0),
    level: float = 0.95,
) -> tuple[list[DeploymentRow], float]:
    """Per-million rates at each threshold (no fit, no extrapolation) and the empirical tail ratio
    P(M ≥ 3)/P(M ≥ 1) (NaN when no event reaches 1)."""
    c = np.asarray(counts, dtype=np.int64)
    n = int(c.sum())
    rows = []
    for thr in thresholds:
        k = int(c[grid >= thr - 1e-9].sum())
        w = wilson_interval(k, n, level)
        ci = w.confidence_interval
        rows.append(
            DeploymentRow(
                float(thr), k, n, 1e6 * w.proportion, Interval(1e6 * ci.low, 1e6 * ci.high)
            )
        )
    at1 = int(c[grid >= 1.0 - 1e-9].sum())
    at3 = int(c[grid >= 3.0 - 1e-9].sum())
    return rows, (at3 / at1 if at1 else math.nan)
