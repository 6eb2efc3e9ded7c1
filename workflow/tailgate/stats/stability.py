"""Threshold-stability scan ξ̂(u) and the G5 check (Section 6.3 and Fig. 3 of seed 000).

The scan fits the GPD above the empirical q-quantile for every q of a grid with at least
``min_exceedances`` exceedances (Fig. 3 uses n_exc ≥ 200), with a percentile-bootstrap CI at each
point, and summarises the scan by the median and standard deviation of ξ̂ over the interior fits
(the ±σ envelope of Fig. 3).

G5 asks that |ξ̂(q ± δ) − ξ̂(q)| < tolerance on both sides. When one side does not exist (q + δ ≥ 1,
q − δ ≤ 0) or has fewer than the registered minimum of exceedances, the check uses the side that
exists and records it; with no side available, or a side whose fit is not an interior maximum,
G5 fails.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailgate.stats import gpd
from tailgate.stats.risk import exceedances

__all__ = ["ScanPoint", "StabilityCheck", "StabilityScan", "stability_check", "stability_scan"]


@dataclass(frozen=True)
class ScanPoint:
    """GPD fit above the empirical q-quantile, with its percentile CI for ξ."""

    q: float
    u: float
    n_exc: int
    xi: float
    sigma: float
    status: str
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in asdict(self).items()
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScanPoint:
        return cls(**{k: (math.nan if d[k] is None else d[k]) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class StabilityScan:
    """ξ̂(u) over a grid of quantiles with the per-condition median and std envelope."""

    points: tuple[ScanPoint, ...]
    median: float
    std: float
    level: float

    def xi_at(self, q: float) -> float:
        for p in self.points:
            if math.isclose(p.q, q, abs_tol=1e-9):
                return p.xi if p.status == "ok" else math.nan
        return math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": [p.to_dict() for p in self.points],
            "median": None if math.isnan(self.median) else self.median,
            "std": None if math.isnan(self.std) else self.std,
            "level": self.level,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StabilityScan:
        return cls(
            tuple(ScanPoint.from_dict(p) for p in d["points"]),
            math.nan if d["median"] is None else d["median"],
            math.nan if d["std"] is None else d["std"],
            d["level"],
        )


def stability_scan(
    x: np.ndarray,
    quantiles: Sequence[float],
    *,
    min_exceedances: int = 200,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: gpd.SeedLike = 0,
    workers: int | None = None,
) -> StabilityScan:
    """Fit ξ̂(u) at every quantile with n_exc ≥ ``min_exceedances`` (Fig. 3 of seed 000).

    Point k of the grid bootstraps from child k of ``seed``; ``n_boot = 0`` skips the CIs.
    ``workers`` threads run each bootstrap (default: all cores); the result does not depend on it.
    """
    ss = gpd.seed_sequence_of(seed)
    pts = []
    for k, q in enumerate(quantiles):
        ex = exceedances(x, float(q))
        if ex.n_exc < min_exceedances:
            continue
        f = gpd.fit(ex.y)
        lo = hi = math.nan
        if n_boot > 0 and f.status in ("ok", "boundary"):
            child = np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, k))
            lo, hi = gpd.bootstrap(ex.y, n_boot, child, full_fit=f, workers=workers).ci(level)
        pts.append(ScanPoint(float(q), ex.u, ex.n_exc, f.xi, f.sigma, f.status, lo, hi))
    ok = np.array([p.xi for p in pts if p.status == "ok"])
    med = float(np.median(ok)) if ok.size else math.nan
    std = float(np.std(ok, ddof=1)) if ok.size > 1 else math.nan
    return StabilityScan(tuple(pts), med, std, float(level))


@dataclass(frozen=True)
class StabilityCheck:
    """G5 at threshold q for one condition: deviations of ξ̂ at q − δ and q + δ from ξ̂(q)."""

    q: float
    delta: float
    tolerance: float
    xi: float
    xi_minus: float | None
    xi_plus: float | None

    @property
    def deviation(self) -> float:
        devs = [abs(v - self.xi) for v in (self.xi_minus, self.xi_plus) if v is not None]
        if not devs or not math.isfinite(self.xi) or any(not math.isfinite(d) for d in devs):
            return math.inf
        return max(devs)

    @property
    def sides(self) -> tuple[str, ...]:
        return tuple(
            s for s, v in (("minus", self.xi_minus), ("plus", self.xi_plus)) if v is not None
        )

    @property
    def passed(self) -> bool:
        return self.deviation < self.tolerance


def stability_check(
    xi_q: float,
    xi_minus: float | None,
    xi_plus: float | None,
    *,
    q: float,
    delta: float,
    tolerance: float,
) -> StabilityCheck:
    """G5 of seed 000: |ξ̂(q ± δ) − ξ̂(q)| < tolerance on every side that exists (None: absent).

    A side that exists but has no interior fit is passed as NaN and fails the check.
    """
    return StabilityCheck(
        float(q),
        float(delta),
        float(tolerance),
        float(xi_q),
        None if xi_minus is None else float(xi_minus),
        None if xi_plus is None else float(xi_plus),
    )
