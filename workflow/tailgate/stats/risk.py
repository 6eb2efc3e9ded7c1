"""Thresholds, exceedances and TVaR (Section 3 of Zhou (2026)).

Quantiles are numpy's default "linear" definition (Hyndman–Fan type 7): with the sample sorted
ascending, the q-quantile interpolates between order statistics h = (N − 1)q. The POT threshold of
a condition is its own empirical q-quantile u, and its exceedances are y = x[x > u] − u (strictly
above, so ties at u are not exceedances and every y is > 0).

Ties. Scores on a lattice (rounded judge scores) put u on a tied value; the strict rule then
drops every value tied at u and biases ξ̂. The registered rule ``half_step``
(``protocol.thresholds.ties``; Coles 2001 §4.4, the Fort Collins rainfall analysis) moves u
half-way down to the next smaller distinct value when values are tied at u, so the tied values
count as exceedances. :func:`tie_diagnostic` counts ties at u and among the exceedances either way.
``half_step`` keeps the ties but the continuous density still misreads rounded exceedances (ξ̂
0.165 for a latent 0.2 at step σ/2); the rule ``lattice`` places the threshold half a step below
the lattice value on or above the quantile, so every exceedance is a cell midpoint (k + ½)h, and
the fits use the discretised likelihood (:mod:`tailgate.stats.lattice`, methods note P10); the
step is the registered ``protocol.thresholds.lattice_step`` or the one detected in the data.

TVaR_q (Nitsure et al. 2024; TVaR_0.9 in H1 of Zhou (2026)) is the mean of the values strictly above
the empirical q-quantile. When no value lies strictly above (all tied at the top) it is u itself.

:func:`bulk_bootstrap` resamples whole prompts and returns the mean and TVaR of every replicate,
computed from resample counts without sorting the replicates. Replicate r draws its indices from
block ``r // BLOCK`` of the seed's stream, so two conditions bootstrapped with the same seed and
aligned by prompt are resampled *paired by prompt*; with different seeds, independently.
:func:`bulk_bootstrap_scales` does the same for one condition on several (monotonically related)
scales from one set of draws, as the bulk stage does for G1/G2.

How the replicates are computed (the numbers are fixed by the seed; only the speed is a choice):
the draws of a block become counts over the sample's sorted order (each row counted by prompt with
``np.bincount``, then taken in the sorted order: 1.1–1.2 times as fast as counting the ranks of
several rows at once, measured at 3·10⁴ and 10⁶ prompts), :data:`SUB_ROWS` rows at a time into one
reused buffer (memory: the block's indices as int32 plus a sub-block's counts, not the whole
block's counts: 1.7 GB instead of 3.8 GB at 2.5·10⁶ prompts, two scales); the means are one
matrix-vector product per sub-block. The TVaR quantile of a replicate lies, with overwhelming
probability, within a few binomial standard deviations of the sample's own quantile rank, so the
TVaR sums run over the ranks above ``k_low``, :data:`WINDOW_SDS` standard deviations below it (the
block's counts above ``k_low`` are kept); a block with a replicate whose quantile falls below
``k_low`` is counted again and recomputed over all ranks, so the answer never depends on the
shortcut. Every product keeps one fixed shape (BLAS sums depend on the shape of the call and, in a
threaded BLAS, on the thread count: a bulk job runs one thread), so the replicates are bit-for-bit
reproducible; sub-blocks in multiples of 4 rows give the bits of whole blocks
(:mod:`tailgate.stats.parts`). Measured on the demo study (B = 10,000, two scales, one core): 2.5 s
at n = 30,000 and 4.6 s at n = 60,000, against 3.1 s / 6.3 s counting whole blocks at once and ~9 s
/ ~19 s resampling explicitly with ``np.quantile`` (``tests/benchmarks/bench_demo.py``); about a
third of the time is the drawing of the indices themselves, which the seed fixes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailgate.stats import lattice
from tailgate.stats.gpd import SeedLike, _block_rng, _index_dtype, seed_sequence_of
from tailgate.stats.parts import BLAS_ROWS, row_parts

__all__ = [
    "TIE_RULES",
    "BulkBootstrap",
    "Exceedances",
    "TieDiagnostic",
    "bulk_bootstrap",
    "bulk_bootstrap_scales",
    "exceedances",
    "lattice_step_of",
    "tie_diagnostic",
    "tvar",
]

#: bootstrap replicates per block (each block has its own random stream)
BLOCK = 64
#: rows of a block held as counts over the whole sample at once (their means are one
#: matrix-vector product); the TVaR sums need only the counts above the window's start, which
#: are kept for the whole block. A job's memory is then about BLOCK × n indices (int32) plus
#: SUB_ROWS × n counts (a multiple of 4: module docstring).
SUB_ROWS = 8
#: the TVaR window starts this many binomial standard deviations below the quantile rank
WINDOW_SDS = 8.0


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


#: threshold rules for tied values (``protocol.thresholds.ties``)
TIE_RULES = ("strict", "half_step", "lattice")


def lattice_step_of(x: np.ndarray, step: float | None = None) -> float:
    """The lattice step of the rule ``lattice``: ``step`` when given (registered), else the one
    detected in ``x``; ValueError when the scores are not on a lattice."""
    if step is not None:
        if not (math.isfinite(step) and step > 0):
            raise ValueError(f"the lattice step must be a positive number, got {step!r}")
        return float(step)
    h = lattice.detect_step(x)
    if h is None:
        raise ValueError(
            "the scores are not on a lattice (no common step between their distinct values); "
            "register protocol.thresholds.ties: strict (or half_step), or the step as "
            "protocol.thresholds.lattice_step"
        )
    return h


def _half_step(x: np.ndarray, u: float) -> float:
    """u moved half-way to the next smaller distinct value when values are tied at u."""
    if np.count_nonzero(x == u) < 2:
        return u
    below = x[x < u]
    return u if below.size == 0 else 0.5 * (u + float(below.max()))


def exceedances(
    x: np.ndarray, q: float, ties: str = "strict", step: float | None = None
) -> Exceedances:
    """Per-condition POT threshold at the empirical ``q``-quantile and its exceedances.

    ``ties="half_step"``: with values tied at the quantile, the threshold is half-way to the next
    smaller distinct value; ``ties="lattice"``: half a lattice ``step`` (detected when None)
    below the lattice value on or above the quantile (module docstring).
    """
    if not 0 < q < 1:
        raise ValueError(f"threshold quantile q must be in (0, 1), got {q!r}")
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {TIE_RULES}, got {ties!r}")
    x = _finite_1d(x, "severities")
    if ties == "lattice":
        ex = lattice.exceedances(x, q, lattice_step_of(x, step))
        return Exceedances(q=ex.q, u=ex.u, n=ex.n, y=ex.y)
    u = float(np.quantile(x, q))
    if ties == "half_step":
        u = _half_step(x, u)
    return Exceedances(q=float(q), u=u, n=int(x.size), y=x[x > u] - u)


@dataclass(frozen=True)
class TieDiagnostic:
    """Ties at the empirical q-quantile and among the exceedances above the threshold used."""

    quantile_value: float
    at_threshold: int
    tied_exceedances: int
    n_exc: int
    rule: str

    @property
    def fires(self) -> bool:
        """Values are tied at the quantile, or more than 1 % of the exceedances repeat a value
        (lattice data; a stray duplicate, e.g. two scores clipped to the same ε, does not count)."""
        return self.at_threshold > 1 or self.tied_exceedances > 0.01 * self.n_exc

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "fires": self.fires}


def tie_diagnostic(
    x: np.ndarray, q: float, ties: str = "strict", step: float | None = None
) -> TieDiagnostic:
    """How many values are tied at the q-quantile and how many exceedances repeat a value."""
    x = _finite_1d(x, "severities")
    uq = float(np.quantile(x, q))
    ex = exceedances(x, q, ties, step)
    distinct = int(np.unique(ex.y).size)
    return TieDiagnostic(uq, int(np.count_nonzero(x == uq)), ex.n_exc - distinct, ex.n_exc, ties)


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
    """Mean and TVaR of every bootstrap replicate of one condition (for G1/G2 of Zhou (2026))."""

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
    resamples (see the module docstring). G1/G2 of Zhou (2026), Section 3.
    """
    return bulk_bootstrap_scales({"x": x}, n_boot, seed, tvar_level=tvar_level)["x"]


def bulk_bootstrap_scales(
    scales: Mapping[str, np.ndarray], n_boot: int, seed: SeedLike, *, tvar_level: float = 0.9
) -> dict[str, BulkBootstrap]:
    """:func:`bulk_bootstrap` of one condition on several scales from the same resamples.

    The scales must be monotone (non-decreasing) transforms of each other, as the registered
    scales are (probability, logit), so one sort order serves all; the indices are drawn once.
    The result for each scale equals :func:`bulk_bootstrap` of that scale alone.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot!r}")
    if not 0 < tvar_level < 1:
        raise ValueError(f"TVaR level must be in (0, 1), got {tvar_level!r}")
    names = list(scales)
    if not names:
        raise ValueError("bulk_bootstrap_scales needs at least one scale")
    arrays = [_finite_1d(scales[k], f"severities on scale {k!r}") for k in names]
    n = arrays[0].size
    for k, a in zip(names, arrays, strict=True):
        if a.size != n:
            raise ValueError(
                f"severities on scale {k!r} have {a.size} values, scale {names[0]!r} has {n}; "
                "every scale must hold the same prompts"
            )
    order = np.argsort(arrays[0], kind="stable")
    sorted_ = [a[order] for a in arrays]
    for k, xs in zip(names, sorted_, strict=True):
        if np.any(np.diff(xs) < 0):
            raise ValueError(f"scale {k!r} is not a monotone transform of scale {names[0]!r}")
    ss = seed_sequence_of(seed)
    h = (n - 1) * tvar_level
    k0 = math.floor(h)
    frac = h - k0
    k1 = min(k0 + 1, n - 1)
    spread = math.sqrt(n * tvar_level * (1.0 - tvar_level)) + 1.0
    lo = max(0, int(k0 - WINDOW_SDS * spread))
    means = [np.empty(n_boot) for _ in names]
    tvars = [np.empty(n_boot) for _ in names]
    rows_max = min(BLOCK, n_boot)
    # one sub-block's counts (a last one holds up to BLAS_ROWS - 1 rows more)
    counts = np.empty((min(SUB_ROWS + BLAS_ROWS - 1, rows_max), n))
    window = np.empty((rows_max, n - lo))  # the block's counts over the ranks lo..n-1
    sorted_counts = np.empty(n, dtype=np.int64)  # one row's counts, in the sorted order

    def count(idx: np.ndarray, s0: int, s1: int) -> np.ndarray:
        """Counts over the sorted order of the block's rows s0..s1-1: each row's counts by
        prompt, then taken in the sorted order (the same integers as counting the ranks)."""
        w = counts[: s1 - s0]
        for i in range(s0, s1):
            w[i - s0] = np.take(np.bincount(idx[i], minlength=n), order, out=sorted_counts)
        return w

    for b in range(-(-n_boot // BLOCK)):
        first, last = b * BLOCK, min((b + 1) * BLOCK, n_boot)
        rows = last - first
        idx = _block_rng(ss, b).integers(0, n, size=(BLOCK, n), dtype=_index_dtype(n))
        subs = row_parts(rows, SUB_ROWS, BLAS_ROWS)
        for s0, s1 in subs:
            w = count(idx, s0, s1)
            for i, xs in enumerate(sorted_):
                means[i][first + s0 : first + s1] = (w @ xs) / n
            window[s0:s1] = w[:, lo:]
        win = window[:rows]
        base = n - win.sum(axis=1)  # exact: integer-valued sums far below 2**53
        if not np.any(base > k0):
            j0, j1 = _quantile_ranks(win, base, k0, k1, lo, n)
            for i, xs in enumerate(sorted_):
                tvars[i][first:last] = _tvar_rows(win, xs, j0, j1, frac, lo)
            continue
        # a quantile below the window: count again and use every rank
        for s0, s1 in subs:
            w = count(idx, s0, s1)
            j0, j1 = _quantile_ranks(w, np.zeros(s1 - s0), k0, k1, 0, n)
            for i, xs in enumerate(sorted_):
                tvars[i][first + s0 : first + s1] = _tvar_rows(w, xs, j0, j1, frac, 0)
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


def _quantile_ranks(
    counts: np.ndarray, base: np.ndarray, k0: int, k1: int, lo: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of each replicate's order statistics k0 and k1 (0-based).

    ``counts`` are the replicates' counts over the sorted ranks ``lo..n-1`` and ``base`` their
    counts below ``lo``; order statistic k is the first sorted index whose cumulative count
    exceeds k. Valid for rows with ``base <= k0``.
    """
    cum = np.cumsum(counts, axis=1) + base[:, None]
    j0 = np.minimum(lo + (cum <= k0).sum(axis=1), n - 1)
    j1 = np.minimum(lo + (cum <= k1).sum(axis=1), n - 1)
    return j0, j1


def _tvar_rows(
    counts: np.ndarray, xs: np.ndarray, j0: np.ndarray, j1: np.ndarray, frac: float, lo: int
) -> np.ndarray:
    """TVaR of each replicate from its counts over the sorted ranks ``lo..n-1`` of ``xs``.

    The replicate's quantile u interpolates its order statistics at sorted indices ``j0`` and
    ``j1`` (numpy "linear"); TVaR is the count-weighted mean of the values strictly above u, or
    u itself when none is.
    """
    part = xs[lo:]
    u = xs[j0] + frac * (xs[j1] - xs[j0])
    above = part[None, :] > u[:, None]
    wa = counts * above
    cnt = wa.sum(axis=1)
    tot = wa @ part
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, tot / cnt, u)
