"""Bootstrap replicates of mean and TVaR for the bulk-equivalence gates G1, G2 (seed 000, Sec. 3).

The same estimator and the same resamples as :func:`tailgate.stats.risk.bulk_bootstrap` (prompts
resampled with replacement; replicate r draws its indices from block ``r // 64`` of the seed's
stream; TVaR is the mean strictly above the replicate's linear-interpolated quantile), computed
faster: the TVaR quantile of a replicate lies, with overwhelming probability, within a few
binomial standard deviations of the sample's own quantile rank, so per-replicate counts are only
accumulated above a rank ``k_low`` eight standard deviations below it. A block whose quantile
falls below ``k_low`` is recomputed over all ranks, so the answer never depends on the shortcut.

Measured on 30,000 severities and 2,000 resamples: ``risk.bulk_bootstrap`` 2.0 s, this 0.35 s
(the full study runs 10,000 resamples per condition and scale, which is the difference between
a demo analysis inside and outside a minute).
"""

from __future__ import annotations

import math

import numpy as np

from tailgate.stats.gpd import SeedLike, _block_rng, seed_sequence_of
from tailgate.stats.risk import BLOCK, BulkBootstrap, tvar

__all__ = ["bulk_replicates"]


def _tvar_rows(
    counts: np.ndarray, xs: np.ndarray, base: np.ndarray, k0: int, k1: int, frac: float, lo: int
) -> tuple[np.ndarray, np.ndarray]:
    """TVaR of each row from counts over sorted ranks ``lo..n-1``; ``base`` counts below ``lo``.

    Returns (tvar, ok) where ``ok`` is False for rows whose quantile rank lies below ``lo``.
    """
    n = xs.size
    part = xs[lo:]
    cum = np.cumsum(counts, axis=1) + base[:, None]
    ok = base <= k0
    j0 = np.minimum(lo + (cum <= k0).sum(axis=1), n - 1)
    j1 = np.minimum(lo + (cum <= k1).sum(axis=1), n - 1)
    u = xs[j0] + frac * (xs[j1] - xs[j0])
    above = part[None, :] > u[:, None]
    wa = counts * above
    cnt = wa.sum(axis=1)
    tot = wa @ part
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, tot / cnt, u), ok


def bulk_replicates(
    x: np.ndarray, n_boot: int, seed: SeedLike, *, tvar_level: float = 0.9
) -> BulkBootstrap:
    """Percentile-bootstrap replicates of mean(x) and TVaR_level(x), resampling prompts.

    Equal, replicate by replicate, to :func:`tailgate.stats.risk.bulk_bootstrap` with the same
    ``seed`` (up to floating-point summation order); pass one seed for two conditions aligned by
    prompt to resample them paired.
    """
    return bulk_replicates_on_scales({"x": x}, n_boot, seed, tvar_level=tvar_level)["x"]


def bulk_replicates_on_scales(
    scales: dict[str, np.ndarray], n_boot: int, seed: SeedLike, *, tvar_level: float = 0.9
) -> dict[str, BulkBootstrap]:
    """:func:`bulk_replicates` of one condition on several scales from the same resamples.

    The scales must be monotone (non-decreasing) transforms of each other, as the registered
    scales are, so one sort order serves all; the resample indices are drawn once.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot!r}")
    names = list(scales)
    arrays = [np.asarray(scales[k], dtype=np.float64) for k in names]
    n = arrays[0].size
    for k, a in zip(names, arrays, strict=True):
        if a.ndim != 1 or a.size != n or n == 0 or not np.all(np.isfinite(a)):
            raise ValueError(f"severities on scale {k!r} must be a non-empty finite 1-D array")
    order = np.argsort(arrays[0], kind="stable")
    sorted_ = [a[order] for a in arrays]
    for k, s in zip(names, sorted_, strict=True):
        if np.any(np.diff(s) < 0):
            raise ValueError(f"scale {k!r} is not a monotone transform of scale {names[0]!r}")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    ss = seed_sequence_of(seed)
    h = (n - 1) * tvar_level
    k0 = math.floor(h)
    frac = h - k0
    k1 = min(k0 + 1, n - 1)
    spread = math.sqrt(n * tvar_level * (1.0 - tvar_level)) + 1.0
    lo = max(0, int(k0 - 8.0 * spread))
    means = [np.empty(n_boot) for _ in names]
    tvars = [np.empty(n_boot) for _ in names]
    for b in range(-(-n_boot // BLOCK)):
        first, last = b * BLOCK, min((b + 1) * BLOCK, n_boot)
        rows = last - first
        idx = _block_rng(ss, b).integers(0, n, size=(BLOCK, n))[:rows]
        r = rank[idx]
        r += np.arange(rows)[:, None] * n
        counts = np.bincount(r.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        base = counts[:, :lo].sum(axis=1)
        for i, xs in enumerate(sorted_):
            means[i][first:last] = (counts @ xs) / n
            tv, ok = _tvar_rows(counts[:, lo:], xs, base, k0, k1, frac, lo)
            if not ok.all():  # a quantile below the shortcut's window: use every rank
                tv, _ = _tvar_rows(counts, xs, np.zeros(rows), k0, k1, frac, 0)
            tvars[i][first:last] = tv
    return {
        k: BulkBootstrap(
            mean=means[i],
            tvar=tvars[i],
            tvar_level=float(tvar_level),
            estimate_mean=float(arrays[i].mean()),
            estimate_tvar=tvar(arrays[i], tvar_level),
        )
        for i, k in enumerate(names)
    }
