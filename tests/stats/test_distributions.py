"""The closed-form distribution functions give scipy.stats' bits (tailgate.stats.distributions)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from tailgate.stats import distributions as d

#: probabilities: the end points, values next to them, a dense interior grid, outside [0, 1]
P = np.concatenate(
    [
        [0.0, 1.0, 5e-324, 1e-300, 1e-16, 1 - 1e-16, np.nextafter(1.0, 0.0), -0.1, 1.1, np.nan],
        np.random.default_rng(1).random(2000),
        np.linspace(0, 1, 1001),
    ]
)
#: arguments of the distribution functions, the infinities included
X = np.concatenate(
    [
        [-np.inf, np.inf, np.nan, 0.0, -0.0, 1e-300, -1e-300, 40.0, -40.0],
        np.random.default_rng(2).normal(0, 5, 2000),
        np.linspace(-3, 12, 1001),
    ]
)


def _same(ours, theirs) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours.view(np.int64), theirs.view(np.int64))  # bits, NaN too


@pytest.mark.parametrize(("loc", "scale"), [(0.0, 1.0), (-2.5, 0.7), (3.0, 2.0)])
def test_normal_and_logistic_equal_scipy_stats_bit_for_bit(loc, scale) -> None:
    _same(d.norm_ppf(P, loc, scale), stats.norm.ppf(P, loc=loc, scale=scale))
    _same(d.norm_cdf(X, loc, scale), stats.norm.cdf(X, loc=loc, scale=scale))
    _same(d.logistic_ppf(P, loc, scale), stats.logistic.ppf(P, loc=loc, scale=scale))
    _same(d.logistic_cdf(X, loc, scale), stats.logistic.cdf(X, loc=loc, scale=scale))
    _same(d.norm_sf(X), stats.norm.sf(X))


@pytest.mark.parametrize("xi", [-0.6, -0.2, 0.0, 1e-9, 0.1, 0.45, 0.9])
@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5])
def test_gpd_equals_scipy_genpareto_bit_for_bit(xi, sigma) -> None:
    _same(d.gpd_ppf(P, xi, sigma), stats.genpareto.ppf(P, xi, loc=0.0, scale=sigma))
    _same(d.gpd_cdf(X, xi, sigma), stats.genpareto.cdf(X, xi, loc=0.0, scale=sigma))
    _same(d.gpd_ppf(P, xi, sigma, 1.5), stats.genpareto.ppf(P, xi, loc=1.5, scale=sigma))


def test_scalars_stay_numpy_scalars_like_scipy() -> None:
    for ours, theirs in [
        (d.norm_ppf(0.975), stats.norm.ppf(0.975)),
        (d.gpd_cdf(1.0, 0.2, 1.0), stats.genpareto.cdf(1.0, 0.2)),
    ]:
        assert type(ours) is type(theirs) and ours == theirs


def test_chi2_with_one_degree_of_freedom() -> None:
    for p in [*P[:10], *np.linspace(0.5, 0.9999, 200)]:
        want = float(stats.chi2.ppf(p, 1))
        got = d.chi2_1_ppf(p)
        assert got == want or (np.isnan(got) and np.isnan(want)), p
    for x in [0.0, -1.0, 1e-12, 0.5, 3.84, 10.0, 100.0, np.inf]:
        assert d.chi2_1_sf(x) == float(stats.chi2.sf(x, 1)), x
