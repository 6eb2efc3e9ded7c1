"""The bulk bootstrap's replicates from resample indices: one compiled pass per replicate.

A replicate is one row of n prompt indices drawn with replacement from a block's stream
(:func:`tailgate.stats.risk.bulk_bootstrap_scales`; the seed fixes them). Its mean and TVaR
follow from the counts of each prompt in the row, without sorting the replicate:

- the draws, counted as they are drawn (no array of indices): the block's indices as
  :class:`tailgate.stats.draws.IndexStream` reads them from the stream's raw words, the values of
  ``Generator.integers(0, n, size=(rows, n), dtype=np.int32)``;
- the counts by prompt, one byte each (a row with a prompt drawn more than 255 times is counted
  again in a wide buffer);
- the mean on every scale, Σ count · x over the prompts in their stored order, summed in four
  interleaved running sums (a fixed order: IEEE arithmetic with no reassociation, so the bits
  are the same on every machine and whatever the number of threads);
- the TVaR quantile: the replicate's order statistics k0 and k1 are the first sorted ranks whose
  cumulative count exceeds k0 and k1 (numpy's "linear" quantile interpolates them); they lie,
  with overwhelming probability, in a window of ranks a few binomial standard deviations around
  the sample's own quantile rank, so only the window's counts are gathered in the sorted order,
  and a replicate whose quantile falls below the window is recounted over every rank (the answer
  never depends on the window);
- the TVaR: the count-weighted mean of the values strictly above the quantile, summed from the
  largest down, or the quantile itself when no value is above it.

Compiled by numba and cached on disk at the first use, one process at a time
(:func:`tailgate.stats.draws.compiled`). Memory: the stream's words for a few replicates, one
replicate's counts and its window's counts.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from tailgate.stats.draws import IndexStream, bounded, compiled

__all__ = [
    "DRAW_ROWS",
    "Sample",
    "count_draws",
    "counted_sum",
    "counted_tvar",
    "ranks_from",
    "replicate_rows",
]

#: replicates whose stream words are drawn at once (memory: DRAW_ROWS × n × 4 bytes)
DRAW_ROWS = 8


@numba.njit(cache=True, boundscheck=False)
def count_draws(
    words: np.ndarray, pos: int, draws: int, n: int, counts: np.ndarray
) -> tuple[int, bool]:  # pragma: no cover - compiled
    """Draw ``draws`` indices below n from ``words`` at ``pos`` and count them.

    For n = 1 nothing is read (numpy draws nothing for a range of one value).

    Parameters
    ----------
    words : numpy.ndarray
        The stream's raw 64-bit words (uint64), read in 32-bit halves.
    pos : int
        The position (in halves) of the first draw.
    draws : int
        The number of indices to draw.
    n : int
        The range: indices 0 … n − 1.
    counts : numpy.ndarray
        The count of every index (length n), overwritten; its dtype bounds a count.

    Returns
    -------
    pos : int
        The position after the last half used, or -1 when the words ran out.
    fits : bool
        False when a count passed the buffer's largest value.
    """
    counts[:] = 0
    top = np.iinfo(counts.dtype).max
    fits = True
    if n == 1:  # numpy draws nothing for a range of one value
        counts[0] = draws
        return pos, draws <= top
    threshold = np.uint64((2**32 - n) % n)
    for _ in range(draws):
        j, pos = bounded(words, pos, n, threshold)
        if j < 0:
            return -1, fits
        c = counts[j]
        if c == top:
            fits = False
        counts[j] = c + 1
    return pos, fits


@numba.njit(cache=True, boundscheck=False)
def counted_sum(counts: np.ndarray, x: np.ndarray) -> float:  # pragma: no cover - compiled
    """Σ counts · x in four interleaved running sums (a fixed order).

    Parameters
    ----------
    counts : numpy.ndarray
        The count of every value.
    x : numpy.ndarray
        The values (as long as ``counts``).

    Returns
    -------
    float
        The sum.
    """
    n = x.size
    a0 = a1 = a2 = a3 = 0.0
    j = 0
    while j + 4 <= n:
        a0 += counts[j] * x[j]
        a1 += counts[j + 1] * x[j + 1]
        a2 += counts[j + 2] * x[j + 2]
        a3 += counts[j + 3] * x[j + 3]
        j += 4
    while j < n:
        a0 += counts[j] * x[j]
        j += 1
    return (a0 + a1) + (a2 + a3)


@numba.njit(cache=True, boundscheck=False)
def ranks_from(
    counts: np.ndarray, below: int, k0: int, k1: int
) -> tuple[int, int, bool]:  # pragma: no cover - compiled
    """Positions in ``counts`` of order statistics k0 and k1 of a replicate.

    Parameters
    ----------
    counts : numpy.ndarray
        The counts of consecutive sorted ranks.
    below : int
        The replicate's draws before the first position.
    k0 : int
        The lower order statistic (from 0).
    k1 : int
        The upper order statistic.

    Returns
    -------
    j0 : int
        The position of order statistic k0 (the first whose cumulative count exceeds k0).
    j1 : int
        The position of order statistic k1.
    ok : bool
        False when order statistic k0 lies before the first position (then j0 = j1 = 0).
    """
    if below > k0:
        return 0, 0, False
    cum = below
    j0 = j1 = counts.size - 1
    found = False
    for w in range(counts.size):
        cum += counts[w]
        if not found and cum > k0:
            j0, found = w, True
        if cum > k1:
            j1 = w
            break
    return j0, j1, True


@numba.njit(cache=True, boundscheck=False)
def _quantile_ranks(
    counts: np.ndarray, order: np.ndarray, lo: int, k0: int, k1: int, win: np.ndarray
) -> tuple[int, int, bool]:  # pragma: no cover - compiled
    """The sorted ranks of order statistics k0 and k1 from the counts of the ranks lo..n-1
    (gathered into ``win``); False when the quantile lies below rank lo."""
    n = order.size
    width = n - lo
    inside = 0
    for w in range(width):
        c = counts[order[lo + w]]
        win[w] = c
        inside += c
    j0, j1, ok = ranks_from(win[:width], n - inside, k0, k1)
    return lo + j0, lo + j1, ok


@numba.njit(cache=True, boundscheck=False)
def counted_tvar(
    xs: np.ndarray, win: np.ndarray, lo: int, j0: int, j1: int, frac: float
) -> float:  # pragma: no cover - compiled
    """Count-weighted mean of the sorted values ``xs`` strictly above the replicate's quantile.

    Summed from the largest value down.

    Parameters
    ----------
    xs : numpy.ndarray
        The sample's sorted values on one scale.
    win : numpy.ndarray
        The replicate's counts of the ranks lo..n-1.
    lo : int
        The first rank of ``win``.
    j0, j1 : int
        The sorted ranks of the quantile's order statistics.
    frac : float
        The interpolation weight: the quantile is xs[j0] + frac·(xs[j1] − xs[j0]).

    Returns
    -------
    float
        The replicate's TVaR; the quantile itself when no drawn value lies above it.
    """
    u = xs[j0] + frac * (xs[j1] - xs[j0])
    total = 0.0
    count = 0
    w = xs.size - lo - 1
    while w >= 0 and xs[lo + w] > u:
        c = win[w]
        total += c * xs[lo + w]
        count += c
        w -= 1
    return total / count if count > 0 else u


class Sample(NamedTuple):
    """One condition's values as the replicates read them."""

    #: values (scales × n) in the prompts' stored order
    x: np.ndarray
    #: the same sorted by ``order`` (one order serves every scale: monotone transforms)
    xs: np.ndarray
    order: np.ndarray
    #: the TVaR window's first rank
    lo: int
    #: the TVaR quantile's order statistics and interpolation weight
    k0: int
    k1: int
    frac: float


def replicate_rows(
    rng: np.random.Generator, rows: int, sample: Sample, means: np.ndarray, tvars: np.ndarray
) -> None:
    """Mean and TVaR on every scale of ``rows`` replicates drawn from ``rng``'s stream.

    The call uses ``rng``'s stream from its start: one call a block.

    Parameters
    ----------
    rng : numpy.random.Generator
        The block's random stream, from its start.
    rows : int
        The number of replicates.
    sample : Sample
        The condition's values as the replicates read them.
    means : numpy.ndarray
        The replicates' means (scales × rows, C-contiguous), written.
    tvars : numpy.ndarray
        The replicates' TVaRs (scales × rows, C-contiguous), written.

    Returns
    -------
    None
        The results are written to ``means`` and ``tvars``.
    """
    compiled("bulk", _warm_bulk)
    stream = IndexStream(rng, sample.order.size)
    counts = np.empty(stream.n, dtype=np.uint8)
    done = 0
    while done < rows:
        stream.refill(DRAW_ROWS)
        done, stream.pos = _replicate_rows(
            stream.words, stream.pos, done, sample, counts, means, tvars
        )


def _warm_bulk() -> None:
    four = np.arange(4.0)[None, :]
    tiny = Sample(four, four, np.arange(4), 0, 1, 2, 0.5)
    words, buffer = np.arange(8, dtype=np.uint64), np.empty(4, np.uint8)
    _replicate_rows(words, 0, 0, tiny, buffer, np.empty((1, 1)), np.empty((1, 1)))


@numba.njit(cache=True, boundscheck=False)
def _replicate_rows(
    words: np.ndarray,
    pos: int,
    first: int,
    sample: Sample,
    counts: np.ndarray,
    means: np.ndarray,
    tvars: np.ndarray,
) -> tuple[int, int]:  # pragma: no cover - compiled
    """Replicates ``first``, ``first`` + 1, … while ``words`` last: (the next replicate, the
    position of its first draw)."""
    n = sample.order.size
    win = np.empty(n - sample.lo, dtype=np.int64)
    every = np.empty(0, dtype=np.int64)
    wide = np.empty(0, dtype=np.int64)
    for r in range(first, means.shape[1]):
        end, fits = count_draws(words, pos, n, n, counts)
        if end < 0:
            return r, pos
        if fits:
            _replicate(counts, sample, win, every, means, tvars, r)
        else:  # a prompt drawn more often than the small buffer counts: the same draws again
            if wide.size == 0:
                wide = np.empty(n, dtype=np.int64)
            count_draws(words, pos, n, n, wide)
            _replicate(wide, sample, win, every, means, tvars, r)
        pos = end
    return means.shape[1], pos


@numba.njit(cache=True, boundscheck=False)
def _replicate(
    counts: np.ndarray,
    sample: Sample,
    win: np.ndarray,
    every: np.ndarray,
    means: np.ndarray,
    tvars: np.ndarray,
    r: int,
) -> None:  # pragma: no cover - compiled
    """Replicate ``r``'s means and TVaRs from its counts (``every``: an n-long buffer, or empty
    until a quantile below the window needs one)."""
    x, xs, order, lo, k0, k1, frac = sample
    n = order.size
    for s in range(x.shape[0]):
        means[s, r] = counted_sum(counts, x[s]) / n
    j0, j1, ok = _quantile_ranks(counts, order, lo, k0, k1, win)
    if ok:
        for s in range(x.shape[0]):
            tvars[s, r] = counted_tvar(xs[s], win, lo, j0, j1, frac)
        return
    every = np.empty(n, dtype=np.int64) if every.size == 0 else every
    j0, j1, _ = _quantile_ranks(counts, order, 0, k0, k1, every)
    for s in range(x.shape[0]):
        tvars[s, r] = counted_tvar(xs[s], every, 0, j0, j1, frac)
