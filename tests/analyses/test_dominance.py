"""Violation ratios and the bootstrap tests of Nitsure et al. (2024) against independent references:
closed forms and quadrature, an independent numpy implementation of methods note D1, deepsig where
the definitions coincide, and simulation with known truth (size and power)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm
from tailgate.analyses.dominance import guard
from tailgate.analyses.dominance import statistics as dom
from tailgate.analyses.dominance.statistics import (
    bootstrap_ratios,
    dominance_tests,
    dominance_tests_orders,
    violation_ratio,
)


def plotting_positions(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic samples: quantiles of N(0, 1) and N(0.5, 2) at (i − ½)/n."""
    z = norm.ppf((np.arange(1, n + 1) - 0.5) / n)
    return z, 0.5 + 2.0 * z


def exact_equal_n(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """methods note D1 for equal sizes, written independently with numpy: ε_W2 from the sorted
    differences, ε_IQ by integrating the piecewise-linear D and its positive part."""
    d = np.sort(y) - np.sort(x)
    e1 = np.sum(np.maximum(d, 0) ** 2) / np.sum(d**2)
    h = 1.0 / d.size
    knots = np.concatenate([[0.0], np.cumsum(d) * h])
    a, b = knots[:-1], knots[1:]
    full = h * (a * a + a * b + b * b) / 3
    pos = np.where((a >= 0) & (b >= 0), full, 0.0)
    up = (a > 0) & (b < 0)
    down = (a < 0) & (b > 0)
    pos[up] = h * a[up] ** 3 / (3 * (a[up] - b[up]))
    pos[down] = h * b[down] ** 3 / (3 * (b[down] - a[down]))
    return float(e1), float(pos.sum() / full.sum())


def population_ratios(mx: float, sx: float, my: float, sy: float) -> tuple[float, float]:
    """ε_W2 and ε_IQ of "X dominates Y" for two normals by quadrature (Q₂ in closed form)."""

    def q(p, m, s):
        return m + s * norm.ppf(p)

    def q2(p, m, s):
        return m * p - s * norm.pdf(norm.ppf(p))

    opts = {"limit": 500, "epsabs": 1e-13, "epsrel": 1e-11}
    cross = 0.5  # Q_y − Q_x changes sign once; split there for accuracy
    d1 = lambda p: q(p, my, sy) - q(p, mx, sx)  # noqa: E731
    num1 = integrate.quad(lambda p: max(d1(p), 0) ** 2, 0, 1, points=[cross], **opts)[0]
    den1 = integrate.quad(lambda p: d1(p) ** 2, 0, 1, points=[cross], **opts)[0]
    d2 = lambda p: q2(p, my, sy) - q2(p, mx, sx)  # noqa: E731
    num2 = integrate.quad(lambda p: max(d2(p), 0) ** 2, 0, 1, **opts)[0]
    den2 = integrate.quad(lambda p: d2(p) ** 2, 0, 1, **opts)[0]
    return num1 / den1, num2 / den2


def test_population_values_by_quadrature():
    e1, e2 = population_ratios(0, 1, 0.5, 2)
    assert e1 == pytest.approx(0.83229, abs=5e-6)
    assert e2 == pytest.approx(0.55527, abs=5e-6)


@pytest.mark.parametrize("n", [100, 1_000, 10_000, 100_000, 1_000_000])
def test_violation_ratio_is_the_exact_formula(n):
    x, y = plotting_positions(n)
    e1, e2 = exact_equal_n(x, y)
    assert abs(violation_ratio(x, y, 1) - e1) <= 1e-9
    assert abs(violation_ratio(x, y, 2) - e2) <= 1e-9


def test_violation_ratio_converges_to_population():
    pop = population_ratios(0, 1, 0.5, 2)
    errors = []
    for n in (1_000, 10_000, 100_000, 1_000_000):
        x, y = plotting_positions(n)
        errors.append([abs(violation_ratio(x, y, o) - pop[o - 1]) for o in (1, 2)])
    errors = np.array(errors)
    assert np.all(errors[-1] < 1e-3)
    assert np.all(errors[-1] < errors[0])


def test_symmetry_identity_and_unequal_sizes():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=300), rng.normal(0.2, 1.5, size=200)
    for o in (1, 2):
        assert violation_ratio(x, y, o) + violation_ratio(y, x, o) == pytest.approx(1, abs=1e-12)
        assert violation_ratio(x, x.copy(), o) == 0.5
        # unequal sizes: the same step functions written with 600 equal steps each
        xe, ye = np.repeat(np.sort(x), 2), np.repeat(np.sort(y), 3)
        assert violation_ratio(x, y, o) == pytest.approx(exact_equal_n(xe, ye)[o - 1], abs=1e-12)
    with pytest.raises(ValueError):
        violation_ratio(x, y, 3)


def test_fsd_agrees_with_deepsig_where_definitions_coincide():
    """deepsig integrates on the grid t = dt, 2dt, … < 1 with the left-continuous quantile: at
    dt = 1/n (n a power of two, so the grid is exact in binary) it is the exact ratio with the
    last step (t = 1, the sample maxima) dropped from both sums and the first from the
    numerator. With those steps removed the two agree to rounding; with them, ours is exact."""
    deepsig_aso = pytest.importorskip("deepsig.aso")
    rng = np.random.default_rng(11)
    n = 256
    x, y = rng.normal(size=n), rng.normal(0.3, 1.4, size=n)
    ours_on_their_steps = None
    d = np.sort(x) - np.sort(y)  # deepsig's violation of "y dominates x" is "a = y"
    ours_on_their_steps = np.sum(np.maximum(d[1:-1], 0) ** 2) / np.sum(d[:-1] ** 2)
    theirs = deepsig_aso.compute_violation_ratio(scores_a=y, scores_b=x, dt=1 / n)
    assert theirs == pytest.approx(ours_on_their_steps, rel=1e-12)
    exact = violation_ratio(y, x, 1)
    assert abs(exact - theirs) > 1e-6  # the dropped steps matter at n = 256
    fine = deepsig_aso.compute_violation_ratio(scores_a=y, scores_b=x, dt=1 / (64 * n))
    assert fine == pytest.approx(exact, abs=0.02)


def test_bootstrap_row_zero_is_exact_and_fast_path_matches_general_path():
    rng = np.random.default_rng(5)
    samples = [rng.normal(i * 0.1, 1 + 0.2 * i, size=400) for i in range(4)]
    reps = bootstrap_ratios(samples, 40, 7)
    for i in range(4):
        for j in range(4):
            if i != j:
                for o in (1, 2):
                    v = violation_ratio(samples[i], samples[j], o)
                    assert reps[0, o - 1, i, j] == pytest.approx(v, abs=1e-12)
    # the general (unequal-size) kernel on the same replicate indices
    xs = [np.sort(s) for s in samples]
    values = np.concatenate(xs)
    sizes = np.full(4, 400)
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    perm = np.tile(np.arange(400), 4).astype(np.int64)
    group = np.arange(4, dtype=np.int64)
    idx = rng.integers(0, 400, (6, 1600), np.int32)
    fast, general = np.empty((6, 2, 4, 4)), np.empty((6, 2, 4, 4))
    dom._replicates_equal(values, perm, 400, group, sizes.astype(np.int64), idx, fast, 2)
    dom._replicates(values, perm, off, group, off, sizes.astype(np.int64), idx, general)
    np.testing.assert_allclose(fast, general, atol=1e-12)


def test_bootstrap_is_deterministic_whatever_the_threads():
    rng = np.random.default_rng(2)
    samples = [rng.normal(size=500) for _ in range(3)]
    a = bootstrap_ratios(samples, 100, np.random.SeedSequence(9), threads=1)
    b = bootstrap_ratios(samples, 100, np.random.SeedSequence(9), threads=2)
    assert a.tobytes() == b.tobytes()
    c = bootstrap_ratios(samples, 100, np.random.SeedSequence(9), paired=True)
    assert not np.array_equal(a, c)
    d = bootstrap_ratios([samples[0], samples[1][:300]], 50, 1)  # unequal sizes
    assert np.all((d[:, :, 0, 1] >= 0) & (d[:, :, 0, 1] <= 1))
    np.testing.assert_allclose(d[:, :, 0, 1] + d[:, :, 1, 0], 1.0, atol=1e-12)


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_relative_test_size_under_equal_distributions():
    """Under H0 (equal distributions, k = 2) the relative and absolute tests of "1 dominates 2"
    reject at most α/k² + Monte Carlo error, both orders; without the distinctness guard the
    normal-theory test is anti-conservative there, and the √n-scaled margin of Eq. 13 /
    Algorithm 1 line 38 applied to a bootstrap sd of Δε itself grossly so (methods note D2).
    n = 600: the pooled 1,200 distinct values put the guard on pooled-quantile cells, and on
    equal distributions it stops after a few hundred draws (methods note D8; its own size is
    checked in ``test_dominance_ties.py`` and ``test_dominance_guard_cells.py``).
    150 data sets, both orders: 300 trials, bound 0.032 (2.5 α/k²). These seeds give 4 and 4
    rejections (0.013) guarded and absolute, 39 (0.13) unguarded, 158 (0.53) by the √n margin;
    at the unguarded rate of 0.097 (58 of 600 trials over 300 data sets) at most 9 of 300
    trials reject with probability 7·10⁻⁶."""
    reps, n, alpha = 150, 600, 0.05
    ours = unguarded = paper = absolute = 0
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        s = [rng.normal(size=n), rng.normal(size=n)]
        res = dominance_tests_orders(
            s, (1, 2), 100, alpha, (0.4,), np.random.SeedSequence(r), calibration="normal"
        )
        for t in res.values():
            ours += bool(t.wins[0, 1])
            absolute += bool(t.abs_wins[0, 0, 1])
            unguarded += bool(t.delta_ucb[0, 1] <= 0)
            paper += bool(t.delta[0, 1] + t.z * t.delta_sigma[0, 1] / np.sqrt(n) <= 0)
    level, trials = alpha / 4, 2 * reps
    mc = np.sqrt(level * (1 - level) / trials)
    assert ours / trials <= level + 3 * mc
    assert absolute / trials <= level + 3 * mc
    assert unguarded / trials > level + 3 * mc
    assert paper / trials > 0.3


@pytest.mark.slow
@pytest.mark.parametrize(("order", "n"), [(1, 5_000), (2, 300_000)])
def test_relative_tests_have_power_on_the_gaussian_pair(order, n):
    """N(0.5, 2) is 0.17-FSD and 0.44-SSD over N(0, 1) (population): both relative tests find
    it in every replicate — at n = 5,000 for first order; second order needs n ≈ 3·10⁵ (9/10 at
    10⁵), because with the unscaled σ the margin z·σ(Δε) is 0.34 at n = 5,000 (σ ∝ 1/√n)
    against Δε = −0.11.

    B = 100 bootstrap replicates: the cost is B·n, and B sets only the Monte Carlo error of
    the margin, not Δε̂. At n = 3·10⁵ the ten Δε̂ run from −0.152 to −0.066 and the margins
    (upper bound − Δε̂) from 0.040 to 0.063 (0.039 to 0.053 at B = 200). The closest replicate
    (Δε̂ = −0.0662) fails once its margin is 1.28 times wider, at B = 100 (margin 0.0519) as
    at B = 200 (0.0516): a σ̂ inflated by √2, or any calibration that widens the margin by
    30 %, still fails here. One thread: the replicates do not depend on the number (see
    test_bootstrap_is_deterministic_whatever_the_threads), and most of the time goes to
    drawing the resample indices, which is serial, so a second thread mostly waits."""
    for r in range(10):
        rng = np.random.default_rng(r)
        s = [rng.normal(0, 1, n), rng.normal(0.5, 2, n)]
        res = dominance_tests(s, order, 100, 0.05, (0.45,), np.random.SeedSequence(r), threads=1)
        assert bool(res.wins[1, 0]) and not res.wins[0, 1]
        assert list(res.ranks) == [2, 1]
        if order == 1:  # the absolute 0.45-FSD test too (population ε_W2 = 0.168)
            assert bool(res.abs_wins[0, 1, 0])


def test_distinctness_guard_anderson_darling():
    """The guard's asymptotic A∞ tail against its published percentage points (Anderson &
    Darling 1954: 1.933, 2.492, 3.070, 3.857 at 10, 5, 2.5, 1 %) and the two-sample statistic's
    p against scipy's anderson_ksamp (its interpolation of Scholz–Stephens' table)."""
    import warnings

    from scipy.stats import anderson_ksamp

    for z, p in ((1.933, 0.10), (2.492, 0.05), (3.070, 0.025), (3.857, 0.01)):
        assert guard._adinf_sf(z) == pytest.approx(p, rel=0.03)
    rng = np.random.default_rng(0)
    for shift in (0.1, 0.15, 0.2):
        x, y = rng.normal(size=300), rng.normal(shift, 1, size=400)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = anderson_ksamp([x, y]).pvalue
        if 0.002 < ref < 0.2:
            assert dom.ad_two_sample(x, y)[1] == pytest.approx(ref, rel=0.15)
