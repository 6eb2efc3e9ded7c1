"""Likelihood inference for ξ: observed information, profile CIs, two-sample LR test.

References are independent of the code under test: a finite-difference Hessian of the raw
log-likelihood, a brute-force profile (scipy's bounded scalar search over σ on a dense ξ grid),
and simulation with known truth for coverage and size.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import chi2, genpareto
from tailgate.stats import distributions, gpd, inference, likelihood_ratio
from tailgate.stats.gof import sample_gpd


def loglik(y: np.ndarray, xi: float, sigma: float) -> float:
    """The GPD log-likelihood by scipy (−inf outside the support)."""
    return float(np.sum(genpareto.logpdf(y, xi, scale=sigma)))


def brute_profile(y: np.ndarray, xi: float) -> float:
    """max over σ of the GPD log-likelihood at fixed ξ, by bounded search in log σ."""
    lo = math.log(-xi * y.max() * (1 + 1e-12)) if xi < 0 else -20.0

    def nll(ls: float) -> float:
        v = loglik(y, xi, math.exp(ls))
        return -v if math.isfinite(v) else 1e300

    return -minimize_scalar(nll, bounds=(lo, 10.0), method="bounded", options={"xatol": 1e-12}).fun


@pytest.fixture(scope="module")
def rain_like() -> np.ndarray:
    """A sample shaped like Coles' rain exceedances above 30 mm (152 values, ξ ≈ 0.18, σ ≈ 7.4)."""
    return sample_gpd(np.random.default_rng(20260615), 0.18, 7.44, 152)


@pytest.mark.parametrize("xi", [-0.3, 0.0, 0.18, 0.5])
def test_profile_loglik_matches_brute_force(xi: float) -> None:
    y = sample_gpd(np.random.default_rng(7), xi, 2.0, 300)
    f = gpd.fit(y)
    grid = np.linspace(max(f.xi - 0.4, -0.95), f.xi + 0.4, 7)
    got = inference.profile_loglik(y, grid)
    want = np.array([brute_profile(y, v) for v in grid])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)
    assert inference.profile_loglik(y, f.xi)[0] == pytest.approx(f.loglik, abs=1e-6)


@pytest.mark.slow  # a brute-force reference over a fine grid: the whole suite runs it
def test_profile_ci_matches_a_brute_force_profile(rain_like: np.ndarray) -> None:
    f = gpd.fit(rain_like)
    ci = inference.profile_ci(rain_like, 0.95, f)
    cut = f.loglik - 0.5 * chi2.ppf(0.95, 1)
    grid = np.arange(f.xi - 0.5, f.xi + 0.8, 5e-4)
    prof = np.array([brute_profile(rain_like, v) for v in grid])
    inside = grid[prof >= cut]
    assert ci.low == pytest.approx(inside.min(), abs=1e-3)
    assert ci.high == pytest.approx(inside.max(), abs=1e-3)
    # the profile interval is not the symmetric Wald interval: it is longer on the heavy side
    wald = inference.observed_information(rain_like, f).confidence_interval(0.95)
    assert ci.high - f.xi > f.xi - ci.low
    assert ci.high > wald.high


@pytest.mark.parametrize("xi", [-0.2, 0.0, 0.3])
def test_observed_information_matches_finite_differences(xi: float) -> None:
    y = sample_gpd(np.random.default_rng(11), xi, 1.5, 400)
    f = gpd.fit(y)
    oi = inference.observed_information(y, f)

    h, hs = 1e-4, 1e-4 * f.sigma
    x0, s0 = f.xi, f.sigma
    hxx = (loglik(y, x0 + h, s0) - 2 * loglik(y, x0, s0) + loglik(y, x0 - h, s0)) / h**2
    hss = (loglik(y, x0, s0 + hs) - 2 * loglik(y, x0, s0) + loglik(y, x0, s0 - hs)) / hs**2
    hxs = (
        loglik(y, x0 + h, s0 + hs)
        - loglik(y, x0 + h, s0 - hs)
        - loglik(y, x0 - h, s0 + hs)
        + loglik(y, x0 - h, s0 - hs)
    ) / (4 * h * hs)
    cov = np.linalg.inv(-np.array([[hxx, hxs], [hxs, hss]]))
    assert oi.se_xi == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-3)
    assert oi.se_sigma == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-3)
    # and the Smith (1987) asymptotic of Eq. 2 of Zhou (2026): se(ξ̂) ≈ (1 + ξ)/√n
    assert oi.se_xi == pytest.approx((1 + xi) / math.sqrt(y.size), rel=0.2)


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_profile_ci_coverage_by_simulation() -> None:
    rng = np.random.default_rng(3)
    m, n, xi = 400, 200, 0.1
    hits = 0
    for _ in range(m):
        ci = inference.profile_ci(sample_gpd(rng, xi, 1.0, n), 0.95)
        hits += ci.low <= xi <= ci.high
    cover = hits / m
    assert abs(cover - 0.95) < 3 * math.sqrt(0.95 * 0.05 / m)


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_lr_test_size_by_simulation() -> None:
    """Under ξ_A = ξ_B (scales differ) Λ ~ χ²₁: rejections at α = 0.05 within MC error.

    Λ of all m pairs comes from the vectorised joint maximisation
    (:func:`likelihood_ratio.lr_rows`, a golden-section search); on the first ``checked`` pairs
    :func:`likelihood_ratio.lr_test` (bounded Brent) must give the same Λ to 10⁻⁶ and the same
    p-value, so the size is that of
    ``lr_test``: the two can decide differently only where Λ lies within 10⁻⁶ of χ²₁'s 0.95
    point (density 0.03 there: a chance of 6·10⁻⁸ per pair)."""
    rng = np.random.default_rng(5)
    m, n, checked = 1000, 150, 50
    pairs = [(sample_gpd(rng, 0.1, 1.0, n), sample_gpd(rng, 0.1, 2.5, n)) for _ in range(m)]
    ya, yb = np.stack([a for a, _ in pairs]), np.stack([b for _, b in pairs])
    lam, _ = likelihood_ratio.lr_rows(ya, yb)
    assert np.all(np.isfinite(lam))
    p = np.array([distributions.chi2_1_sf(float(v)) for v in lam])
    for i in range(checked):
        ref = likelihood_ratio.lr_test(ya[i], yb[i])
        assert ref.statistic == pytest.approx(lam[i], abs=1e-6), i
        assert ref.pvalue == pytest.approx(p[i], abs=1e-6), i
    size = float(np.mean(p < 0.05))
    assert abs(size - 0.05) < 3 * math.sqrt(0.05 * 0.95 / m)


def test_lr_test_detects_a_difference_and_grids_agree() -> None:
    rng = np.random.default_rng(9)
    ya, yb = sample_gpd(rng, 0.0, 1.0, 1500), sample_gpd(rng, 0.25, 1.0, 1500)
    exact = likelihood_ratio.lr_test(ya, yb)
    assert exact.pvalue < 1e-4
    grids = likelihood_ratio.lr_test_grids(inference.profile_grid(ya), inference.profile_grid(yb))
    assert grids.statistic == pytest.approx(exact.statistic, rel=2e-3)
    assert grids.xi_common == pytest.approx(exact.xi_common, abs=2e-3)
    stored = inference.ProfileGrid.from_dict(inference.profile_grid(ya).to_dict())
    assert stored.loglik == pytest.approx(gpd.fit(ya).loglik)


def test_no_interior_fit_gives_nan_inference() -> None:
    y = np.linspace(0.01, 1.0, 200)  # uniform-like pile-up: boundary fit
    f = gpd.fit(np.concatenate([y, np.full(50, 1.0)]))
    assert f.status == "boundary"
    assert math.isnan(inference.observed_information(y, f).se_xi)
    assert math.isnan(inference.profile_ci(y, 0.95, f).low)
    assert inference.profile_grid(y, f) is None


def test_chi2_1_sf_is_scipy_stats_to_the_bit() -> None:
    """The P1 test's p-value is the one scipy.stats gives, bit for bit, over the whole range."""
    rng = np.random.default_rng(3)
    xs = [-1.0, -0.0, 0.0, 5e-324, 1e-300, 1e-9, 700.0, 1e5, math.inf, math.nan]
    xs += [float(x) for x in rng.exponential(3.0, 2000)]
    xs += [float(x) for x in rng.uniform(0.0, 200.0, 500)]
    for x in xs:
        want, got = float(chi2.sf(x, 1)), distributions.chi2_1_sf(x)
        assert got == want or (math.isnan(got) and math.isnan(want)), x
