"""The distinctness guard at every sample size: the same combined permutation test (A² and W2)
below and above 1,000 pooled values (pooled-quantile cells above it), its early stop and its
size (methods note D8)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from scipy.stats import norm
from tailgate.analyses.dominance import guard


def _tail_shift(r: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two samples of n that differ only above the 90 % quantile (the first shifted by 1 sd)."""
    rng = np.random.default_rng([r, 91])
    z, y = rng.normal(size=n), rng.normal(size=n)
    return z + 1.0 * (z > norm.ppf(0.9)), y


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_no_cliff_in_power_above_a_thousand_pooled_values():
    """A tail-only difference at α′ = 0.0125 (k = 2) on the same 8 seeded data sets of n = 500
    and of n = 501 (the first 500 values and one more): the guard rejects about as often
    either side of 1,000 pooled values (about 0.8 of data sets at n = 300–500, benchmark in
    methods note D8). The Anderson–Darling asymptotic p the guard used above 1,000 values
    rejected about 0.1 of them: at most 3 of 8 where the permutation guard rejects 6 or more."""
    alpha_pair, trials = 0.0125, 8
    below = above = 0
    for r in range(trials):
        x, y = _tail_shift(r, 501)
        below += guard.distinctness([x[:500], y[:500]], alpha_pair, r)[0, 1] <= alpha_pair
        above += guard.distinctness([x, y], alpha_pair, r)[0, 1] <= alpha_pair
    assert above >= 5 and abs(above - below) <= 2


def test_cells_keep_the_tail_and_are_a_function_of_the_pooled_sample():
    x, y = _tail_shift(0, 800)
    levels, counts, _, f1, n, m = guard._pooled(x, y)
    assert levels.size <= guard._MAX_LEVELS < x.size + y.size
    assert counts.sum() == 1600 and f1.sum() == n == m == 800
    assert np.all(np.diff(levels) > 0) and levels[-1] <= max(x.max(), y.max())
    # relabelling the pooled values moves only the sample's counts, never the cells
    swapped = guard._pooled(np.concatenate([x[:400], y[:400]]), np.concatenate([x[400:], y[400:]]))
    assert np.array_equal(swapped[0], levels) and np.array_equal(swapped[1], counts)


def test_early_stop_keeps_the_full_decision_and_reports_p_above_alpha():
    """The draws stop once min(#A²* ≥ A², #W2* ≥ W2) exceeds α(P + 1), a lower bound of the
    combined test's count, so the decision at α is the full P draws' own."""
    alpha, perms = 0.05, 999
    for r in range(12):
        rng = np.random.default_rng([r, 3])
        x, y = rng.normal(size=200), rng.normal(0.25 * (r % 3), 1.0, size=200)
        full = guard.distinct_permutation(x, y, perms, r)
        early = guard.distinct_permutation(x, y, perms, r, alpha)
        assert (early <= alpha) == (full <= alpha)
        assert early == full or early > alpha


@pytest.mark.parametrize("scale", [None, 8.0])
def test_guard_on_cells_is_exact_in_size(monkeypatch, scale):
    """With 16 cells (so that small samples are coarsened as large ones are) and the early
    stop, F_x = F_y is rejected at α = 0.05 in at most α + 2 Monte Carlo s.e. of 400 data sets
    of n = 40, continuous and tied (bound 0.072): the cells are a function of the pooled
    sample, so the permutation test on them is exact; recalibrating nothing (say, the cells'
    A² against the continuous asymptotic p) would carry no such guarantee."""
    monkeypatch.setattr(guard, "_MAX_LEVELS", 16)
    alpha, trials = 0.05, 400
    hits = 0
    for r in range(trials):
        rng = np.random.default_rng([r, int(scale or 0)])
        x, y = rng.normal(size=(2, 40))
        if scale is not None:  # tied: about 40 levels, still more than 16 cells
            x, y = np.round(x * scale), np.round(y * scale)
        hits += guard.distinctness([x, y], alpha, r)[0, 1] <= alpha
    assert hits / trials <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / trials)


def test_guard_is_the_same_whatever_the_thread_count():
    x, y = _tail_shift(1, 700)
    before = numba.get_num_threads()
    try:
        ps = []
        for threads in sorted({1, before}):
            numba.set_num_threads(threads)
            ps.append(guard.distinctness([x, y], 0.05, 5).tobytes())
    finally:
        numba.set_num_threads(before)
    assert len(set(ps)) == 1
