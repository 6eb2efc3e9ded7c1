"""Anderson–Darling for the GPD: the statistic, the shipped table and its calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st
from tailgate.stats import gpd
from tailgate.stats.gof import (
    ADResult,
    ad_statistic_rows,
    anderson_darling,
    bootstrap_null,
    load_table,
    sample_gpd,
)


@pytest.mark.parametrize("xi", [-0.4, 0.0, 0.7])
def test_statistic_matches_scipy_goodness_of_fit(xi: float) -> None:
    y = sample_gpd(np.random.default_rng(1), xi, 2.0, 300)
    f = gpd.fit(y)
    ours = anderson_darling(y, f).statistic
    ref = st.goodness_of_fit(
        st.genpareto,
        y,
        known_params={"c": f.xi, "loc": 0.0, "scale": f.sigma},
        statistic="ad",
        n_mc_samples=1,
        rng=0,
    ).statistic
    assert ours == pytest.approx(ref, rel=1e-9)


def test_table_shape_and_size() -> None:
    t = load_table()
    assert t.xi[0] == pytest.approx(-0.5) and t.xi[-1] == pytest.approx(1.0) and t.xi.size == 151
    assert np.all(np.diff(t.crit, axis=1) >= 0) and np.all(np.diff(t.p) < 0)


@pytest.mark.parametrize("xi", [-0.4, -0.1, 0.2, 0.5, 0.9])
def test_table_agrees_with_parametric_bootstrap(xi: float) -> None:
    # statistics of fresh GPD samples: table p vs a 2,000-resample parametric bootstrap p
    rng = np.random.default_rng([7, int(10 * xi) + 10])
    for k in range(2):
        y = sample_gpd(rng, xi, 1.0, 400)
        f = gpd.fit(y)
        res = anderson_darling(y, f)
        null = bootstrap_null(f.xi, f.sigma, y.size, 2000, seed=k)
        p_boot = (1 + np.count_nonzero(null >= res.statistic)) / 2001
        mc = math.sqrt(p_boot * (1 - p_boot) / 2000)
        assert res.method == "table"
        assert abs(res.pvalue - p_boot) < 3 * mc + 0.01, (res.pvalue, p_boot)


@pytest.mark.parametrize("n", [100, 1500])
def test_table_pvalues_are_calibrated_under_the_null(n: int) -> None:
    # under H0 the table p-value is uniform: check the 5 %, 10 % and 50 % levels
    rng = np.random.default_rng(n)
    x = np.sort(sample_gpd(rng, 0.1, 1.0, (1500, n)), axis=1)
    fits = gpd.fit_rows(x)
    a2 = ad_statistic_rows(x, fits.xi, fits.sigma)
    t = load_table()
    p = np.array(
        [t.pvalue(a, min(max(xi, -0.5), 1.0))[0] for a, xi in zip(a2, fits.xi, strict=True)]
    )
    for level in (0.05, 0.10, 0.50):
        sd = math.sqrt(level * (1 - level) / p.size)
        assert abs(np.mean(p <= level) - level) < 4 * sd + 0.005


def test_bounded_pile_up_fails_g4_with_p_zero() -> None:
    rng = np.random.default_rng(3)
    y = np.concatenate([rng.uniform(0, 1, 400), np.full(150, 1.0)])
    res = anderson_darling(y)
    assert res.status == "boundary" and res.pvalue == 0.0 and math.isinf(res.statistic)
    assert ADResult.from_dict(res.to_dict()) == res


def test_outside_table_range_uses_bootstrap_deterministically() -> None:
    y = sample_gpd(np.random.default_rng(4), 1.4, 1.0, 200)
    a = anderson_darling(y, n_boot=200, seed=1)
    b = anderson_darling(y, n_boot=200, seed=1)
    assert a.method == "bootstrap" and a == b and 0 < a.pvalue <= 1
    forced = anderson_darling(
        sample_gpd(np.random.default_rng(5), 0.1, 1.0, 200), method="bootstrap", n_boot=100
    )
    assert forced.method == "bootstrap"


def test_degenerate_input_gives_status() -> None:
    res = anderson_darling(np.ones(5))
    assert res.status == "too_few" and math.isnan(res.pvalue)
