"""Calibration of the dominance tests (methods note D7): the normal option is the paper's bound
ε̂ + z·σ̂ (Nitsure et al. (2024), Eqs. 11–13) exactly; the default ``logit_percentile`` holds its
size at a null boundary with crossing distributions, where the normal bound does not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import norm
from tailgate.analyses.dominance.calibration import CALIBRATIONS, calibration_of
from tailgate.analyses.dominance.statistics import (
    bootstrap_ratios,
    distinctness,
    dominance_from_replicates,
    dominance_tests_orders,
    logit_percentile_bound,
)

#: population ε_W2, ε_IQ of "N(0.5, 2) dominates N(0, 1)" (test_dominance's quadrature)
BOUNDARY = (0.16771140802030812, 0.44473447610333483)
ALPHA = 0.2  # k = 2: every test at α/k² = 0.05, the level of the review's size table


def _rejections(
    draw, reps: int, n: int, resamples: int, relative: bool, tests: tuple[tuple[int, str], ...]
) -> dict:
    """Rejections of "sample 1 dominates sample 2" per (order, calibration) in ``tests``, the
    ones a test asserts on (at n = 500 the four bounds of a data set cost about as much as its
    bootstrap); one set of bootstrap replicates and one guard per data set serve them all (the
    guard's asymptotic p: the distributions differ, and the permutation p would only cost
    time). One thread: the replicates are the same for any number, and a bootstrap of
    n = 500 or 2,000 is too small to share out, so a second thread would only wait."""
    hits = dict.fromkeys(tests, 0)
    for r in range(reps):
        rng = np.random.default_rng([n, r, 18])
        s = draw(rng, n)
        boot = bootstrap_ratios(s, resamples, r, threads=1)
        guard = distinctness(s)
        for o, c in tests:
            t = dominance_from_replicates(boot, o, ALPHA, BOUNDARY, False, guard, c)
            hits[(o, c)] += bool(t.wins[0, 1] if relative else t.abs_wins[o - 1, 0, 1])
    return hits


def _bound(level: float, reps: int) -> float:
    return level + 2 * np.sqrt(level * (1 - level) / reps)


def test_calibrated_absolute_test_holds_its_size_at_the_boundary():
    """True ε = ε₀ for both orders (N(0.5, 2) vs N(0, 1), n = 500): the calibrated absolute test
    rejects at most α/k² + 2 MC s.e.; the normal bound of Eqs. 11–12, second order, far more
    (0.09–0.13 in longer runs, the review's 0.113)."""
    reps = 200
    tests = ((1, "logit_percentile"), (2, "logit_percentile"), (2, "normal"))
    hits = _rejections(
        lambda rng, n: [rng.normal(0.5, 2, n), rng.normal(0, 1, n)], reps, 500, 100, False, tests
    )
    for o in (1, 2):
        assert hits[(o, "logit_percentile")] / reps <= _bound(0.05, reps), hits
    assert hits[(2, "normal")] / reps > _bound(0.05, reps), hits


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_calibrated_second_order_test_holds_its_size_at_the_boundary_at_n_2000():
    """The boundary of the absolute ε₀-test, second order, at n = 2,000 (ε_IQ = ε₀ = 0.4447):
    the Φ(1) tail scale alone rejected 0.0645 ± 0.0055 over 2,000 data sets in a review at
    nominal 0.05; with the wider of the Φ(1) and 95 % tail scales (methods note D7) it rejects
    0.051 ± 0.003 over 5,000 data sets at B = 1,000. Here B = 100 and 500 data sets, for speed:
    at most α/k² + 3 MC s.e. (the data sets of this seed run high: 0.059 at B = 1,000 over
    1,000 of them), and fewer rejections than the normal bound of Eqs. 11–12."""
    reps = 500
    tests = ((2, "logit_percentile"), (2, "normal"))
    hits = _rejections(
        lambda rng, n: [rng.normal(0.5, 2, n), rng.normal(0, 1, n)], reps, 2000, 100, False, tests
    )
    level = 0.05
    assert hits[(2, "logit_percentile")] / reps <= level + 3 * np.sqrt(level * (1 - level) / reps)
    assert hits[(2, "normal")] > hits[(2, "logit_percentile")], hits


def test_wider_tail_scale_never_narrows_the_bound():
    """The bound with the 95 % tail scale is at least the Φ(1)-only bound and equals whichever
    tail scale is wider: a right-skewed (on the logit scale) set of replicates takes the 95 %
    one, a left-skewed one keeps the Φ(1) one."""
    z = norm.ppf(1 - 0.05 / 4)
    rng = np.random.default_rng(34_500)
    right = expit(rng.gamma(2.0, 0.5, 4000) - 1.5)  # long right tail on the logit scale
    left = expit(-rng.gamma(2.0, 0.5, 4000) + 1.5)
    bounds = {}
    for name, reps in (("right", right), ("left", left)):
        med, q84 = logit(np.quantile(reps, [0.5, norm.cdf(1.0)]))
        phi1 = expit(med + z * (q84 - med))
        got = logit_percentile_bound(reps[:, None], z)[0]
        assert got == pytest.approx(_hand_bound(reps, z), abs=1e-14)
        bounds[name] = (got, phi1)
    assert bounds["right"][0] > bounds["right"][1] + 1e-3  # the 95 % tail scale is wider
    assert bounds["left"][0] == pytest.approx(bounds["left"][1], abs=1e-14)  # Φ(1) kept


def test_calibrated_relative_test_holds_its_size_at_unequal_shapes():
    """N(0, 1) vs N(0, 2): Δε = 0 first order (symmetric quantile difference), so "1 R-FSD-
    dominates 2" is at its null boundary; the calibrated test rejects at most α/k² + 2 MC s.e.
    (second order 1 dominates 2 outright, so only first order is a boundary)."""
    reps = 250
    tests = ((1, "logit_percentile"),)
    hits = _rejections(
        lambda rng, n: [rng.normal(0, 1, n), rng.normal(0, 2, n)], reps, 500, 100, True, tests
    )
    assert hits[(1, "logit_percentile")] / reps <= _bound(0.05, reps), hits


def _hand_bound(replicates: np.ndarray, z: float, wider: bool = True) -> float:
    """The bound by hand: the logit-normal tail, never below the Φ(z) percentile of the
    replicates themselves (methods note D9)."""
    q = np.clip(np.quantile(replicates, [0.5, norm.cdf(1.0), 0.95]), 1e-6, 1 - 1e-6)
    med, q84, q95 = logit(q)
    scale = max(q84 - med, (q95 - med) / norm.ppf(0.95)) if wider else q84 - med
    return float(max(expit(med + z * scale), np.quantile(replicates, norm.cdf(z))))


def test_normal_option_is_the_papers_formula_and_the_default_the_logit_percentile_bound(
    monkeypatch,
):
    """Both bounds by hand from the same replicates: ε̂ + z·σ̂ and Δε̂ + z·σ̂^Δ with z = z₁₋α/k²
    and σ̂ the bootstrap sd (Eqs. 11–13, σ unscaled: methods note D2); and
    expit(m + z·s) from the median, Φ(1) and 95 % quantiles on the logit scale, s the wider of
    u₈₄ − m and (u₉₅ − m)/z₀.₉₅ for the absolute test, u₈₄ − m for the relative one (D7),
    never below the Φ(z) quantile of the replicates (D9).
    n = 520: a pair pools more than 1,000 distinct values, so the guard works on pooled-quantile
    cells (the bounds do not depend on the guard, which enters only through its own
    ``distinct_p``: its permutations, most of the cost, are drawn once for both calibrations)."""
    from tailgate.analyses.dominance import statistics

    rng = np.random.default_rng(5)
    s = [rng.normal(0.1 * i, 1 + 0.3 * i, 520) for i in range(3)]
    k, alpha, b = 3, 0.05, 60
    reps = bootstrap_ratios(s, b, 11)
    z = norm.ppf(1 - alpha / k**2)
    guard = distinctness(s, alpha / k**2, 11)
    monkeypatch.setattr(statistics, "distinctness", lambda *args: guard)
    off = ~np.eye(k, dtype=bool)
    res = {
        c: dominance_tests_orders(s, (1, 2), b, alpha, (0.3,), 11, calibration=c)
        for c in CALIBRATIONS
    }
    for o in (1, 2):
        e = reps[:, o - 1]
        one = np.nansum(e, axis=2) / (k - 1)
        delta = one[:, :, None] - one[:, None, :]
        normal = res["normal"][o]
        assert normal.calibration == "normal"
        hand = e[0] + z * e[1:].std(axis=0, ddof=1)
        np.testing.assert_allclose(normal.eps_ucb[off], hand[off], rtol=0, atol=1e-14)
        hand_r = delta[0] + z * delta[1:].std(axis=0, ddof=1)
        np.testing.assert_allclose(normal.delta_ucb[off], hand_r[off], rtol=0, atol=1e-14)
        np.testing.assert_array_equal(
            normal.abs_wins[0], off & (hand <= 0.3) & (normal.distinct_p <= alpha / 9)
        )
        cal = res["logit_percentile"][o]
        assert cal.calibration == "logit_percentile"
        for i, j in zip(*np.nonzero(off), strict=True):
            assert cal.eps_ucb[i, j] == pytest.approx(_hand_bound(e[1:, i, j], z), abs=1e-12)
            half = _hand_bound((1 + delta[1:, i, j]) / 2, z, wider=False)
            assert cal.delta_ucb[i, j] == pytest.approx(2 * half - 1, abs=1e-12)
        # the statistics themselves do not depend on the calibration
        np.testing.assert_array_equal(cal.eps, normal.eps)
        np.testing.assert_array_equal(cal.delta_sigma, normal.delta_sigma)
    # the same seed gives byte-identical bounds whatever the number of threads
    one, two = (dominance_tests_orders(s, (2,), b, alpha, (0.3,), 11, threads=t)[2] for t in (1, 2))
    assert one.eps_ucb.tobytes() == two.eps_ucb.tobytes()
    assert one.delta_ucb.tobytes() == two.delta_ucb.tobytes()


def test_logit_percentile_bound_ignores_an_atom_at_exact_dominance():
    """Replicates at exact dominance (ε* = 0) below the median do not move the bound: it depends
    only on the upper half, clipped only where the median or Φ(1) quantile is itself 0."""
    base = np.linspace(0.01, 0.2, 100)
    with_atom = base.copy()
    with_atom[:10] = 0.0
    a, b = (
        logit_percentile_bound(base[:, None], 2.0),
        logit_percentile_bound(with_atom[:, None], 2.0),
    )
    assert a[0] == pytest.approx(b[0], rel=0.02)
    assert 0.2 < a[0] < 0.6
    assert logit_percentile_bound(np.zeros((50, 1)), 3.0)[0] == pytest.approx(1e-6)


def test_unknown_calibration_is_refused_and_legacy_statistics_read_as_normal():
    with pytest.raises(ValueError, match="calibration must be one of"):
        dominance_tests_orders(
            [np.arange(5.0), np.arange(5.0) + 1], (1,), 4, 0.05, (), 0, calibration="t"
        )
    assert calibration_of({}) == "normal"
    assert calibration_of({"calibration": "logit_percentile"}) == "logit_percentile"
    stats = {
        "targets": {
            "tox": {"fsd": {"calibration": "logit_percentile"}, "ssd": {}},
            "aggregate": {"rank_fsd": [1, 2]},
        }
    }
    from tailgate.report.sections.dominance import _calibrations_used

    text = _calibrations_used(stats)
    assert "logit_percentile" in text and "Eqs. 11–13" in text


def test_normal_calibration_is_refused_on_tied_scores():
    """``calibration: normal`` is not calibrated on a lattice (0.09–0.18 at nominal 0.05/0.10):
    the analysis refuses it on tied scores, naming the condition and the fix."""
    from tailgate.analyses.dominance.compute import _refuse_normal_on_ties
    from tailgate.errors import InputError

    rng = np.random.default_rng(34_600)
    smooth = [rng.normal(size=300), rng.normal(0.2, 1.0, 300)]
    _refuse_normal_on_ties(smooth, ["a", "b"])  # continuous scores: allowed
    grades = rng.integers(1, 11, 300).astype(float)
    with pytest.raises(InputError, match=r"condition 'b' has tied scores.*logit_percentile"):
        _refuse_normal_on_ties([smooth[0], grades], ["a", "b"])
