"""The distinctness guard of the dominance tests on tied scores (judge grades on a grid,
pass/fail): the midrank Anderson–Darling statistic of Scholz & Stephens (1987), Eq. 7, against
scipy's, and the size of its permutation p-value by simulation with known truth."""

from __future__ import annotations

from collections.abc import Iterator

import numba
import numpy as np
import pytest
from scipy.stats._morestats import _anderson_ksamp_midrank
from tailgate.analyses.dominance import statistics as dom


def _levels(rng: np.random.Generator, levels: int | None, n: int) -> np.ndarray:
    if levels is None:
        return rng.normal(size=n)
    return rng.integers(0, levels, n).astype(np.float64)


@pytest.mark.parametrize("levels", [2, 3, 5, 9, None])
def test_midrank_statistic_matches_scipy(levels):
    rng = np.random.default_rng(levels or 0)
    for m, n in ((40, 55), (200, 200), (7, 300)):
        x, y = _levels(rng, levels, m), _levels(rng, levels, n)
        z = np.sort(np.concatenate([x, y]))
        ref = _anderson_ksamp_midrank([x, y], z, np.unique(z), 2, np.array([m, n]), m + n)
        assert dom.ad_two_sample(x, y)[0] == pytest.approx(ref, rel=1e-12, abs=1e-14)
        assert dom.ad_two_sample(y, x)[0] == pytest.approx(ref, rel=1e-12, abs=1e-14)


#: data sets per case, each enough that the error the case guards against fails by a clear
#: margin; the bound is α + 2 s.e., s.e. = √(α(1 − α)/M)
GUARD_SIZE_TRIALS: dict[int | None, int] = {2: 300, 3: 300, 5: 300, 9: 1000, None: 400}


@pytest.fixture()
def one_thread() -> Iterator[None]:
    """numba kernels on one thread: the guard's permutation statistics are one independent
    pass a row, the same for any number of threads, and the many small permutation tests of
    a simulation are too small to share out, so a second thread would only wait."""
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(old)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("levels", [2, 3, 5, 9, None])
def test_guard_size_on_tied_data(levels):
    """Equal distributions on 2, 3, 5, 9 levels and continuous: the guard rejects F_i = F_j at
    α = 0.05 in at most α + 2 Monte Carlo s.e. of M data sets of n = 30 each.

    The former argsort statistic with the continuous asymptotic p rejected 0.31, 0.57, 0.29 and
    0.09 on 2, 3, 5 and 9 levels. M = 300 on 2, 3 and 5 levels: bound 0.05 + 2·0.0126 =
    0.075, and a rate of 0.29 lies (0.29 − 0.075)/√(0.29·0.71/300) = 8 s.e. above it.
    M = 1,000 on 9 levels: bound 0.064, and 0.09 lies (0.09 − 0.064)/√(0.09·0.91/1000) =
    2.9 s.e. above it (M = 400 would leave 1.3). Continuous data (no ties; 60 distinct values,
    the costliest permutations): M = 400 guards against an anti-conservative permutation p,
    such as two p-values of independent statistics combined by their uncorrected minimum
    (1 − 0.95² = 0.0975): bound 0.072, and 0.0975 lies 1.7 s.e. above it."""
    alpha, trials, n = 0.05, GUARD_SIZE_TRIALS[levels], 30
    rejections = 0
    for r in range(trials):
        rng = np.random.default_rng([levels or 0, r])
        x, y = _levels(rng, levels, n), _levels(rng, levels, n)
        p = dom.distinctness([x, y], alpha, np.random.SeedSequence(r))[0, 1]
        rejections += bool(p <= alpha)
    mc = np.sqrt(alpha * (1 - alpha) / trials)
    assert rejections / trials <= alpha + 2 * mc


def test_permutation_p_is_symmetric_and_seeded():
    rng = np.random.default_rng(5)
    x, y = _levels(rng, 3, 80), _levels(rng, 3, 120)
    a = dom.ad_permutation(x, y, 499, np.random.SeedSequence(1))
    b = dom.ad_permutation(y, x, 499, np.random.SeedSequence(1))
    assert a == b
    u, v = _levels(rng, 5, 100), _levels(rng, 5, 100)
    assert dom.ad_permutation(u, v, 499, 2) == dom.ad_permutation(v, u, 499, 2)
    assert dom.distinctness([u, v], 0.05, 3)[0, 1] == dom.distinctness([v, u], 0.05, 3)[0, 1]
    # with a real difference the guard rejects
    w = np.clip(_levels(rng, 5, 100) + 1, 0, 4)
    assert dom.ad_permutation(u, w, 999, 4)[1] < 0.01


def test_relative_test_on_three_levels_is_the_same_whichever_sample_comes_first():
    rng = np.random.default_rng(8)
    for r in range(20):
        x, y = _levels(rng, 3, 200), _levels(rng, 3, 200)
        a = dom.dominance_tests_orders([x, y], (1, 2), 50, 0.05, (0.4,), r)
        b = dom.dominance_tests_orders([y, x], (1, 2), 50, 0.05, (0.4,), r)
        assert a[1].distinct_p[0, 1] == b[1].distinct_p[0, 1]


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
@pytest.mark.usefixtures("one_thread")
def test_guard_finds_a_difference_confined_to_the_upper_tail():
    """Two samples of n = 300 that differ only above the 90 % quantile (there the first is
    shifted by 1 sd), at α′ = α/k² = 0.0125 (k = 2): the Anderson–Darling permutation test alone
    rejects F₁ = F₂ in about 5 % of data sets, the guard (A² and W2 combined) in about 70 %
    (methods note D8); 9 and 1 of these 15 data sets. Monte Carlo s.e. at most 0.13 on 15 data
    sets: a guard without its W2 part rejects as A² alone does (at most 0.1), 7 of 15 data
    sets (0.45) is 4.5 s.e. of such a rate above it (P(X ≥ 7) = 3·10⁻⁴ for X ~ Bin(15, 0.1)),
    while the guard's 0.70 is 2.1 s.e. (of 0.70) above 0.45; the bound 0.2 on A² alone is
    1.7 s.e. above its rate (3 of the first 40 data sets)."""
    from scipy.stats import norm

    alpha_pair, trials = 0.0125, 15
    perms = dom.guard_permutations(alpha_pair)
    guard = ad_alone = 0
    for r in range(trials):
        rng = np.random.default_rng([r, 90])
        z, y = rng.normal(size=300), rng.normal(size=300)
        x = z + 1.0 * (z > norm.ppf(0.9))
        guard += dom.distinct_permutation(x, y, perms, r) <= alpha_pair
        ad_alone += dom.ad_permutation(x, y, perms, r)[1] <= alpha_pair
    assert ad_alone / trials <= 0.2
    assert guard / trials >= 0.45


def test_combined_guard_p_is_symmetric_seeded_and_never_below_its_resolution():
    rng = np.random.default_rng(11)
    x, y = rng.normal(size=120), rng.normal(size=150) + 0.2
    a = dom.distinct_permutation(x, y, 499, 3)
    assert a == dom.distinct_permutation(y, x, 499, 3)
    assert a == dom.distinct_permutation(x, y, 499, 3)
    assert 1 / 500 <= a <= 1.0
    # identical samples: every labelling is as extreme as the observed one for neither
    # statistic, so p is large
    assert dom.distinct_permutation(x, x.copy(), 499, 3) > 0.5
