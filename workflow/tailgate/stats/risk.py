"""Thresholds, exceedances and TVaR (Section 3 of seed 000).

Quantiles are numpy's default "linear" definition (Hyndman–Fan type 7): with the sample sorted
ascending, the q-quantile interpolates between order statistics h = (N − 1)q. The POT threshold of
a condition is its own empirical q-quantile u, and its exceedances are y = x[x > u] − u (strictly
above, so ties at u are not exceedances and every y is > 0).

TVaR_q (Nitsure et al. 2024; TVaR_0.9 in H1 of seed 000) is the mean of the values strictly above
the empirical q-quantile. When no value lies strictly above (all tied at the top) it is u itself.

:func:`bulk_bootstrap` resamples whole prompts and returns the mean and TVaR of every replicate,
computed from resample counts without sorting the replicates. Replicate r draws its indices from
block ``r // BLOCK`` of the seed's stream, so two conditions bootstrapped with the same seed and
aligned by prompt are resampled *paired by prompt*; with different seeds, independently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tailgate.stats.gpd import SeedLike, _block_rng, seed_sequence_of

__all__ = ["BulkBootstrap", "Exceedances", "bulk_bootstrap", "exceedances", "tvar"]

BLOCK = 64


@dataclass(frozen=True, eq=False)
class Exceedances:
    """Threshold u at quantile q of a sample of size n, and the exceedances y = x[x > u] − u."""

    q: float
    u: float
    n: int
    y: np.ndarray

    @property
    def n_exc(self) -> int:
        return int(self.y.size)


def _finite_1d(x: np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-D array of severities")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} contains NaN or infinite severities; transform or drop them")
    return x


def exceedances(x: np.ndarray, q: float) -> Exceedances:
    """Per-condition POT threshold at the empirical ``q``-quantile and its exceedances."""
    if not 0 < q < 1:
        raise ValueError(f"threshold quantile q must be in (0, 1), got {q!r}")
    x = _finite_1d(x, "severities")
    u = float(np.quantile(x, q))
    return Exceedances(q=float(q), u=u, n=int(x.size), y=x[x > u] - u)


def tvar(x: np.ndarray, level: float = 0.9) -> float:
    """TVaR_level: mean of the values strictly above the empirical ``level``-quantile."""
    if not 0 < level < 1:
        raise ValueError(f"TVaR level must be in (0, 1), got {level!r}")
    x = _finite_1d(x, "severities")
    u = float(np.quantile(x, level))
    above = x[x > u]
    return float(above.mean()) if above.size else u


@dataclass(frozen=True, eq=False)
class BulkBootstrap:
    """Mean and TVaR of every bootstrap replicate of one condition (for G1/G2 of seed 000)."""

    mean: np.ndarray
    tvar: np.ndarray
    tvar_level: float
    estimate_mean: float
    estimate_tvar: float


def bulk_bootstrap(
    x: np.ndarray, n_boot: int, seed: SeedLike, *, tvar_level: float = 0.9
) -> BulkBootstrap:
    """Percentile-bootstrap replicates of mean(x) and TVaR_level(x), resampling prompts.

    Pass the same ``seed`` for two conditions whose arrays are aligned by prompt to get paired
    resamples (see the module docstring).
    """
    x = _finite_1d(x, "severities")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot!r}")
    n = x.size
    order = np.argsort(x, kind="stable")
    xs = x[order]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    ss = seed_sequence_of(seed)
    h = (n - 1) * tvar_level
    k0 = math.floor(h)
    frac = h - k0
    k1 = min(k0 + 1, n - 1)
    means = np.empty(n_boot)
    tvars = np.empty(n_boot)
    offsets = (np.arange(BLOCK) * n)[:, None]
    for b in range(-(-n_boot // BLOCK)):
        lo, hi = b * BLOCK, min((b + 1) * BLOCK, n_boot)
        idx = _block_rng(ss, b).integers(0, n, size=(BLOCK, n))[: hi - lo]
        counts = np.bincount((rank[idx] + offsets[: hi - lo]).ravel(), minlength=(hi - lo) * n)
        w = counts.reshape(hi - lo, n).astype(np.float64)
        means[lo:hi] = (w @ xs) / n
        cum = np.cumsum(w, axis=1)
        # order statistics k0 and k1 (0-based) of each replicate: first sorted index with cum > k
        j0 = np.minimum((cum <= k0).sum(axis=1), n - 1)
        j1 = np.minimum((cum <= k1).sum(axis=1), n - 1)
        u = xs[j0] + frac * (xs[j1] - xs[j0])
        above = xs[None, :] > u[:, None]
        wa = w * above
        cnt = wa.sum(axis=1)
        tot = wa @ xs
        with np.errstate(invalid="ignore", divide="ignore"):
            tvars[lo:hi] = np.where(cnt > 0, tot / cnt, u)
    return BulkBootstrap(
        mean=means,
        tvar=tvars,
        tvar_level=float(tvar_level),
        estimate_mean=float(x.mean()),
        estimate_tvar=tvar(x, tvar_level),
    )
