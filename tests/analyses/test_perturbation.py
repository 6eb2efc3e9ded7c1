"""Composite-null test of Acharyya et al. (2025) against the methods note section A's checks and
independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dcor_reference import energy_tests
from scipy import integrate, stats
from tailgate.analyses.perturbation import statistics as P

A, B = 0.3, 0.5


def _simulated_rejection(p_t: float, m: int, n: int, J: int, reps: int, seed: int) -> float:
    """P(reject) by direct simulation of the model of methods note A (p_i ~ U[a, b], counts
    binomial)."""
    g = np.random.default_rng(seed)
    k_null = g.binomial(n, g.uniform(A, B, size=(reps, m)))
    k_test = g.binomial(n, p_t, size=(reps, 1))
    return float(np.mean(np.abs(k_null - k_test).min(axis=1) > J))


# --- A5: exact finite-sample size and power ----------------------------------------------------


def test_a5_check_case_to_three_decimals() -> None:
    m, n, J = 30, 200, 5
    assert P.threshold(J, n) == pytest.approx(0.0275)
    at_a, at_b = P.rejection_probability([A, B], A, B, m, n, J)
    assert round(at_a, 4) == 0.0951 and round(at_b, 4) == 0.1026
    assert round(float(P.rejection_probability(B + 0.08, A, B, m, n, J)), 3) == 0.727
    assert round(P.average_power(A, B, m, n, J), 3) == 0.865
    assert P.exact_size(A, B, m, n, J) == pytest.approx(at_b)  # the sup sits at an endpoint


def test_a5_mixture_pmf_equals_numerical_integral() -> None:
    n = 40
    pi = P.null_mixture_pmf(A, B, n)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    for j in (0, 8, 12, 16, 25, 40):
        ref, _ = integrate.quad(lambda p, j=j: stats.binom.pmf(j, n, p) / (B - A), A, B)
        assert pi[j] == pytest.approx(ref, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("p_t", [A, B, B + 0.08, 0.05])
def test_a5_exact_rejection_matches_simulation(p_t: float) -> None:
    m, n, J, reps = 30, 200, 5, 20_000
    exact = float(P.rejection_probability(p_t, A, B, m, n, J))
    sim = _simulated_rejection(p_t, m, n, J, reps, seed=int(p_t * 1000))
    se = math.sqrt(exact * (1 - exact) / reps)
    assert abs(sim - exact) <= 4 * se + 1e-4


def test_a5_average_power_matches_simulation() -> None:
    m, n, J, reps = 30, 200, 5, 20_000
    g = np.random.default_rng(7)
    # p_t uniform on [0, a) ∪ (b, 1]
    u = g.uniform(0, 1 - (B - A), size=reps)
    p_t = np.where(u < A, u, u + (B - A))
    k_null = g.binomial(n, g.uniform(A, B, size=(reps, m)))
    k_test = g.binomial(n, p_t)[:, None]
    sim = float(np.mean(np.abs(k_null - k_test).min(axis=1) > J))
    exact = P.average_power(A, B, m, n, J)
    assert abs(sim - exact) <= 4 * math.sqrt(exact * (1 - exact) / reps)


# --- A1, A3, A4: ideal test and Hoeffding bounds ------------------------------------------------


def test_a1_ideal_size_check_and_simulation() -> None:
    assert round(P.ideal_size(30, 0.02, 0.2), 4) == 0.0424
    g = np.random.default_rng(3)
    p = g.uniform(0.0, 0.2, size=(40_000, 30))
    sim = float(np.mean(np.abs(p - 0.0).min(axis=1) > 0.02))  # p_t at the endpoint a = 0
    assert abs(sim - 0.0424) <= 4 * math.sqrt(0.0424 * 0.9576 / 40_000)


def test_a4_ideal_average_power_is_the_integral_of_the_ideal_power() -> None:
    m, tau = 30, 0.0275
    w = B - A

    def side(L: float) -> float:
        val, _ = integrate.quad(
            lambda d: P.ideal_power(d, m, tau, w), 0, L, points=[tau], limit=200
        )
        return val

    ref = (side(A) + side(1 - B)) / (1 - w)
    assert P.ideal_average_power(m, tau, A, B) == pytest.approx(ref, rel=1e-8)


def test_a3_bound_is_vacuous_at_realistic_n_and_holds_at_large_n() -> None:
    w = B - A
    assert P.hoeffding_size_bound(30, 200, 0.0275, w) > 1.0
    n, tau = 20_000, 0.02
    bound = P.hoeffding_size_bound(30, n, tau, w)
    J = round(tau * n - 0.5)
    exact = P.exact_size(A, B, 30, n, J)
    assert exact <= bound < 1.0


# --- A6: Algorithm B ----------------------------------------------------------------------------


def test_a6_check_case_by_simulation() -> None:
    """Truth (.3, .5), m0 = 20, n0 = 100: (i) (.252, .552), RMSE(ŵ) .111; (ii) (.304, .496),
    RMSE .055 (methods note A6)."""
    g = np.random.default_rng(20260615)
    reps, m0, n0 = 4000, 20, 100
    p_hat = g.binomial(n0, g.uniform(A, B, size=(reps, m0))) / n0
    for method, means, rmse in (
        ("order_statistics", (0.252, 0.552), 0.111),
        ("moments", (0.304, 0.496), 0.055),
    ):
        est = [P.estimate_interval(row, n0, method) for row in p_hat]
        lows = np.array([e.low for e in est])
        highs = np.array([e.high for e in est])
        assert abs(lows.mean() - means[0]) < 0.004 and abs(highs.mean() - means[1]) < 0.004
        widths = highs - lows
        assert abs(math.sqrt(np.mean((widths - (B - A)) ** 2)) - rmse) < 0.006


def test_a6_order_statistics_unbiased_without_noise() -> None:
    g = np.random.default_rng(5)
    p = g.uniform(A, B, size=(20_000, 10))
    est = [P.estimate_interval(row, 10**9) for row in p]
    lows = np.array([e.low for e in est])
    highs = np.array([e.high for e in est])
    se = lows.std() / math.sqrt(lows.size)
    assert abs(lows.mean() - A) < 4 * se and abs(highs.mean() - B) < 4 * se


def test_a6_refuses_a_pilot_too_small() -> None:
    with pytest.raises(ValueError, match="at least 2 queries"):
        P.estimate_interval([0.4], 100)


# --- A7: Algorithm C ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "m", "n", "tau", "power"),
    [
        (2_000, 7, 250, 0.090, 0.807),
        (10_000, 13, 714, 0.0525, 0.885),
        (50_000, 23, 2083, 0.031, 0.931),
    ],
)
def test_a7_budget_table(budget: int, m: int, n: int, tau: float, power: float) -> None:
    d = P.design(A, B, budget, 0.05)
    assert (d.m, d.n) == (m, n)
    assert abs(d.tau - tau) < 5e-4
    # .885 at B = 10⁴ is .88450 rounded twice (via .8845); the exact value is .884498
    assert abs(d.average_power - power) < 6e-4
    assert d.size <= 0.05 and d.size == max(d.size_at_a, d.size_at_b)
    # J is the smallest valid one: one step less breaks the level
    assert P.exact_size(A, B, d.m, d.n, d.J - 1) > 0.05
    assert P.average_power(A, B, d.m, d.n, d.J) == pytest.approx(d.average_power)


def test_a7_no_other_m_does_better() -> None:
    budget, alpha = 2_000, 0.05
    d = P.design(A, B, budget, alpha)
    for m in range(1, 45):
        n = budget // (m + 1)
        J = next(j for j in range(n + 1) if P.exact_size(A, B, m, n, j) <= alpha)
        assert P.average_power(A, B, m, n, J) <= d.average_power + 1e-12


def test_a7_simulated_size_within_alpha_at_the_endpoints() -> None:
    d = P.design(A, B, 10_000, 0.05)
    reps = 20_000
    for p_t in (A, B):
        sim = _simulated_rejection(p_t, d.m, d.n, d.J, reps, seed=11 if p_t == A else 12)
        assert sim <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_design_refuses_bad_inputs() -> None:
    with pytest.raises(ValueError, match="0 <= a < b <= 1"):
        P.design(0.5, 0.3, 1000, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        P.design(A, B, 1000, 1.5)


# --- decisions ----------------------------------------------------------------------------------


def test_composite_test_decision_and_pvalue() -> None:
    n, J = 200, 5
    nulls = [60, 70, 80, 90, 100]
    inside = P.composite_test(84, nulls, n, J, A, B)
    assert inside.statistic == pytest.approx(4 / 200) and not inside.reject
    assert inside.nearest == 2
    outside = P.composite_test(120, nulls, n, J, A, B)
    assert outside.distance_counts == 20 and outside.reject
    assert outside.statistic > outside.threshold
    # the p-value is the exact size of the test that rejects at the observed distance
    assert outside.pvalue == pytest.approx(P.exact_size(A, B, 5, n, 19))
    assert P.composite_test(80, nulls, n, J, A, B).pvalue == 1.0


def test_two_proportion_test_equals_chi_square_without_correction() -> None:
    res = P.two_proportion_test(130, 200, 100, 200)
    table = np.array([[130, 70], [100, 100]])
    chi2 = stats.chi2_contingency(table, correction=False)
    assert res.statistic**2 == pytest.approx(chi2.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(chi2.pvalue, rel=1e-10)


# --- A8: energy test ----------------------------------------------------------------------------


def test_a8_energy_statistic_equals_dcor() -> None:
    g = np.random.default_rng(8)
    x = g.normal(size=(30, 5))
    y = g.normal(0.3, 1.2, size=(45, 5))
    [(statistic, pvalue)] = energy_tests([(x, y)], resamples=2000)
    ours = P.energy_test(x, y, 2000, seed=1)
    assert ours.statistic == pytest.approx(statistic, rel=1e-12)
    assert P.energy_statistic(x, y) == pytest.approx(statistic, rel=1e-12)
    se = math.sqrt(pvalue * (1 - pvalue) / 2000)
    assert abs(ours.pvalue - pvalue) <= 5 * math.sqrt(2) * se + 1e-3


def test_a8_permutation_pvalue_matches_a_plain_loop() -> None:
    g = np.random.default_rng(9)
    x = g.normal(size=(12, 3))
    y = g.normal(0.4, size=(15, 3))
    R = 3000
    observed = P.energy_statistic(x, y)
    pooled = np.vstack([x, y])
    loop = np.random.default_rng(10)
    exceed = 0
    for _ in range(R):
        idx = loop.permutation(27)
        exceed += P.energy_statistic(pooled[idx[:12]], pooled[idx[12:]]) >= observed - 1e-12
    ref = (1 + exceed) / (R + 1)
    ours = P.energy_test(x, y, R, seed=2).pvalue
    assert abs(ours - ref) <= 5 * math.sqrt(2 * ref * (1 - ref) / R) + 1e-3


def test_a8_energy_test_is_deterministic_in_its_seed() -> None:
    g = np.random.default_rng(4)
    x, y = g.normal(size=(10, 2)), g.normal(size=(11, 2))
    assert P.energy_test(x, y, 500, seed=3) == P.energy_test(x, y, 500, seed=3)


# --- the registered null model (methods note A9) ------------------------------------------------


def _rejection_at_rates(p_t: float, rates: np.ndarray, n: int, J: int, reps: int, seed: int):
    """Simulated P(reject) with fixed null rates ``rates`` (one per null query)."""
    g = np.random.default_rng(seed)
    kt = g.binomial(n, p_t, reps)
    kn = g.binomial(n, rates[None, :], (reps, rates.size))
    return float(np.mean(np.abs(kn - kt[:, None]).min(axis=1) > J))


def test_a9_heterogeneous_null_rates_break_the_uniform_design_and_not_the_heterogeneous_one():
    """Null rates bunched at b̂ (Beta(4, 1) on [a, b]) or all at one end, the test query at the
    other:
    the uniform model's design rejects far above α; the heterogeneous design, whose size is the
    worst case over rates in [a, b], stays within α (+ 2 MC s.e.) in both, and its stated size
    is at least the attained one."""
    budget, alpha, reps = 2_000, 0.05, 20_000
    tol = 2 * math.sqrt(alpha * (1 - alpha) / reps)
    uni = P.design(A, B, budget, alpha)
    het = P.design(A, B, budget, alpha, null_model="heterogeneous")
    assert het.null_model == "heterogeneous" and het.size <= alpha
    assert het.size_attained is not None and het.size_attained <= het.size + 1e-12
    g = np.random.default_rng(3)
    for d in (uni, het):
        bunched = A + (B - A) * g.beta(4.0, 1.0, d.m)
        sims = [
            _rejection_at_rates(A, bunched, d.n, d.J, reps, seed=5),
            _rejection_at_rates(A, np.full(d.m, B), d.n, d.J, reps, seed=6),
            _rejection_at_rates(B, np.full(d.m, A), d.n, d.J, reps, seed=7),
        ]
        if d is uni:
            assert min(sims) > 3 * alpha, sims
        else:
            assert max(sims) <= alpha + tol, sims
            assert max(sims[1:]) == pytest.approx(het.size_attained, abs=3 * tol)


def test_a9_the_design_never_uses_one_null_query_unless_registered() -> None:
    """At a budget where one null query with all the responses has the largest average power,
    the default design uses two or more; ``min_m=1`` allows one."""
    for budget in (6, 12, 40):
        d = P.design(0.45, 0.55, budget, 0.25, null_model="heterogeneous")
        assert d.m >= 2 and d.min_m == 2
    one = P.design(0.45, 0.55, 40, 0.25, null_model="heterogeneous", min_m=1)
    assert one.m >= 1 and one.min_m == 1
    with pytest.raises(ValueError, match="null queries"):
        P.design(A, B, 5, 0.05)
