"""The bulk bootstrap of a large sample from the draws that land among its top values.

A replicate draws n prompts with replacement from n. Split the prompts, sorted by value, into
the bottom block (ranks below ``lo``) and the top block (ranks ``lo`` … n − 1, K of them; ``lo``
lies a few binomial standard deviations below the TVaR quantile's rank, as the window of
:mod:`tailgate.stats.bulk_replicates`). Then, exactly (a multinomial split):

- the number of draws in the top block is N ~ Binomial(n, K/n);
- given N, the top draws are N uniform draws from the K top prompts and the bottom draws are
  m = n − N uniform draws from the bottom prompts, independent of each other.

The TVaR and its quantile read only the top draws (while the quantile's rank lies in the top
block, which fails with probability below 10⁻¹⁵: such a replicate draws its bottom prompts too
and is computed exactly), so they are drawn and counted as the whole replicate would be. The
mean needs the sum of the m bottom draws: a sum of m ≥ 10⁵ independent draws from the bottom
values, drawn from its normal law with the Cornish–Fisher term of its skewness (Hall (1992),
Section 2.5), which matches its first three cumulants; what is left is O(1/m) in its
distribution function (methods note P12). The scales' bottom sums are drawn from one
correlated normal vector (the bottom values' correlation); each scale's replicates, which its
percentile CI reads, follow their own law either way.

A block's stream is read in a fixed order: the N of its replicates, their normal deviates, then
the raw words of the top draws (:class:`tailgate.stats.draws.IndexStream`, numpy's bounded
integers below K). Cost: about 1 + K/n of a replicate of the full draw.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from tailgate.stats.bulk_replicates import (
    DRAW_ROWS,
    count_draws,
    counted_sum,
    counted_tvar,
    ranks_from,
)
from tailgate.stats.draws import IndexStream, bounded, compiled

__all__ = ["Bottom", "TopSample", "bottom_of", "top_rows"]


class TopSample(NamedTuple):
    """One condition's sorted values (scales × n) as the top-block replicates read them."""

    xs: np.ndarray
    #: the top block's first rank
    lo: int
    #: the TVaR quantile's order statistics and interpolation weight
    k0: int
    k1: int
    frac: float


class Bottom(NamedTuple):
    """Moments of the bottom block's values on every scale (population moments: the law of one
    draw) and the lower-triangular factor of their correlation matrix."""

    mean: np.ndarray
    sd: np.ndarray
    skew: np.ndarray
    chol: np.ndarray


def bottom_of(xs: np.ndarray, lo: int) -> Bottom:
    """The moments of ``xs[:, :lo]`` that the bottom sums need.

    Parameters
    ----------
    xs : numpy.ndarray
        The sorted values, scales × n.
    lo : int
        The top block's first rank: ``xs[:, :lo]`` is the bottom block.

    Returns
    -------
    Bottom
        The bottom block's mean, s.d. and skewness on every scale (population moments; skewness
        0 where the s.d. is 0) and the lower-triangular factor of their correlation matrix.
    """
    low = xs[:, :lo]
    mean = low.mean(axis=1)
    dev = low - mean[:, None]
    s = xs.shape[0]
    # numpy's pairwise sums, not a BLAS product (whose summation order depends on the CPU)
    cov = np.array([[(dev[i] * dev[j]).sum() / lo for j in range(s)] for i in range(s)])
    sd = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(sd > 0, (dev**3).mean(axis=1) / sd**3, 0.0)
        corr = np.where(np.outer(sd, sd) > 0, cov / np.outer(sd, sd), np.eye(sd.size))
    return Bottom(mean, sd, skew, _cholesky(corr))


def _cholesky(corr: np.ndarray) -> np.ndarray:
    """Lower factor of a small correlation matrix, written out (no LAPACK: the same bits on
    every machine); a singular direction (scales perfectly correlated) gets a zero column."""
    s = corr.shape[0]
    low = np.zeros_like(corr)
    for i in range(s):
        for j in range(i + 1):
            v = float(corr[i, j]) - sum(float(low[i, k] * low[j, k]) for k in range(j))
            if i == j:
                low[i, i] = math.sqrt(max(v, 0.0))
            else:
                low[i, j] = v / low[j, j] if low[j, j] > 1e-12 else 0.0
    return low


def _correlated(raw: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """``raw @ chol.T`` term by term in a fixed order (a BLAS product's order, and its fused
    multiply-adds, depend on the CPU)."""
    z = np.zeros_like(raw)
    for i in range(chol.shape[0]):
        for j in range(i + 1):
            z[:, i] += raw[:, j] * chol[i, j]
    return z


def top_rows(
    rng: np.random.Generator,
    block: int,
    rows: int,
    sample: TopSample,
    bottom: Bottom,
    means: np.ndarray,
    tvars: np.ndarray,
) -> None:
    """Mean and TVaR on every scale of the first ``rows`` replicates of a block.

    One call a block, from the stream's start; the block's N and deviates are drawn for all its
    replicates, so a replicate does not depend on how many are used. The bottom sums follow the
    normal law with the Cornish–Fisher term of the skewness (module docstring).

    Parameters
    ----------
    rng : numpy.random.Generator
        The block's random stream, from its start.
    block : int
        The number of replicates in a block.
    rows : int
        The number of replicates computed (at most ``block``).
    sample : TopSample
        The condition's sorted values as the top-block replicates read them.
    bottom : Bottom
        The moments of the bottom block (:func:`bottom_of`).
    means : numpy.ndarray
        The replicates' means (scales × rows), written.
    tvars : numpy.ndarray
        The replicates' TVaRs (scales × rows), written.

    Returns
    -------
    None
        The results are written to ``means`` and ``tvars``.

    References
    ----------
    Hall (1992), Section 2.5.
    """
    compiled("bulk-top", _warm_top, lock="bulk")  # it adds overloads of the bulk kernels
    xs, lo = sample.xs, sample.lo
    n = xs.shape[1]
    k = n - lo
    n_top = rng.binomial(n, k / n, size=block)[:rows].astype(np.int64)
    z = _correlated(rng.standard_normal((block, xs.shape[0]))[:rows], bottom.chol)
    stream = IndexStream(rng, k)
    counts = np.empty(k, dtype=np.uint8)
    top_sums = np.empty((xs.shape[0], rows))
    exact = np.zeros(rows, dtype=np.bool_)
    done = 0
    while done < rows:
        stream.refill(DRAW_ROWS)
        done, stream.pos = _top_rows(
            stream.words, stream.pos, done, n_top, sample, counts, top_sums, means, tvars, exact
        )
    m = (n - n_top).astype(np.float64)
    root = np.sqrt(m)
    for s in range(xs.shape[0]):
        zs = z[:, s]
        shifted = zs + bottom.skew[s] / (6.0 * root) * (zs * zs - 1.0)  # Cornish–Fisher
        bottom_sum = m * bottom.mean[s] + root * bottom.sd[s] * shifted
        means[s] = np.where(exact, means[s], (top_sums[s] + bottom_sum) / n)


def _warm_top() -> None:
    xs = np.arange(8.0)[None, :]
    tiny = TopSample(xs, 4, 5, 6, 0.5)
    words, buffer = np.arange(16, dtype=np.uint64), np.empty(4, np.uint8)
    one = np.empty((1, 1))
    _top_rows(words, 0, 0, np.array([4]), tiny, buffer, one, one, one, np.zeros(1, np.bool_))


@numba.njit(cache=True, boundscheck=False)
def _top_rows(
    words: np.ndarray,
    pos: int,
    first: int,
    n_top: np.ndarray,
    sample: TopSample,
    counts: np.ndarray,
    top_sums: np.ndarray,
    means: np.ndarray,
    tvars: np.ndarray,
    exact: np.ndarray,
) -> tuple[int, int]:  # pragma: no cover - compiled
    """Replicates ``first``, ``first`` + 1, … while ``words`` last: (the next replicate, the
    position of its first draw). Writes the top block's sums, or, for a replicate whose quantile
    falls below the block (``exact``), its mean from every draw."""
    n = sample.xs.shape[1]
    k = n - sample.lo
    wide = np.empty(0, dtype=np.int64)
    for r in range(first, n_top.size):
        draws = n_top[r]
        end, fits = count_draws(words, pos, draws, k, counts)
        if end < 0:
            return r, pos
        if fits:
            end = _replicate(words, end, draws, sample, counts, top_sums, means, tvars, exact, r)
        else:  # a prompt drawn more often than the small buffer counts: the same draws again
            if wide.size == 0:
                wide = np.empty(k, dtype=np.int64)
            count_draws(words, pos, draws, k, wide)
            end = _replicate(words, end, draws, sample, wide, top_sums, means, tvars, exact, r)
        if end < 0:
            return r, pos
        pos = end
    return n_top.size, pos


@numba.njit(cache=True, boundscheck=False)
def _replicate(
    words: np.ndarray,
    pos: int,
    draws: int,
    sample: TopSample,
    top: np.ndarray,
    top_sums: np.ndarray,
    means: np.ndarray,
    tvars: np.ndarray,
    exact: np.ndarray,
    r: int,
) -> int:  # pragma: no cover - compiled
    """Replicate ``r`` from the counts of its ``draws`` top draws: the position after its last
    draw (``pos``, or after the bottom draws of an exact replicate), or -1 when the words ran
    out."""
    xs, lo, k0, k1, frac = sample
    n = xs.shape[1]
    j0, j1, inside = ranks_from(top, n - draws, k0, k1)
    if not inside:  # the quantile lies below the top block: draw the bottom prompts as well
        exact[r] = True
        return _exact_replicate(words, pos, draws, sample, top, means, tvars, r)
    for s in range(xs.shape[0]):
        row = xs[s, lo:]
        top_sums[s, r] = counted_sum(top, row)
        tvars[s, r] = counted_tvar(row, top, 0, j0, j1, frac)
    return pos


@numba.njit(cache=True, boundscheck=False)
def _exact_replicate(
    words: np.ndarray,
    pos: int,
    drawn_top: int,
    sample: TopSample,
    top: np.ndarray,
    means: np.ndarray,
    tvars: np.ndarray,
    r: int,
) -> int:  # pragma: no cover - compiled
    """Replicate ``r`` from every draw: its n − ``drawn_top`` bottom draws are read from
    ``words`` at ``pos``; the position after them, or -1 when the words ran out."""
    xs, lo, k0, k1, frac = sample
    n = xs.shape[1]
    every = np.zeros(n, dtype=np.int64)
    threshold = np.uint64((2**32 - lo) % lo)
    for _ in range(n - drawn_top):
        j, pos = bounded(words, pos, lo, threshold)
        if j < 0:
            return -1
        every[j] += 1
    every[lo:] = top
    j0, j1, _ = ranks_from(every, 0, k0, k1)
    for s in range(xs.shape[0]):
        means[s, r] = counted_sum(every, xs[s]) / n
        tvars[s, r] = counted_tvar(xs[s], every, 0, j0, j1, frac)
    return pos
