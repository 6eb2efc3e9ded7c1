"""Threshold-stability scan on data with a known, threshold-invariant ξ (Fig. 3 of Zhou (2026))."""

from __future__ import annotations

import numpy as np
from tailgate.stats.gof import sample_gpd
from tailgate.stats.stability import StabilityScan, stability_check, stability_scan


def test_scan_recovers_a_stable_shape_and_is_deterministic() -> None:
    # exceedances of a GPD over any threshold are GPD with the same ξ
    x = sample_gpd(np.random.default_rng(0), 0.1, 1.0, 20_000)
    grid = np.round(np.arange(0.70, 0.991, 0.01), 2)
    scan = stability_scan(x, grid, min_exceedances=200, n_boot=100, seed=3)
    assert [p.q for p in scan.points] == [q for q in grid if round((1 - q) * 20_000) >= 200]
    assert abs(scan.median - 0.1) < 0.05 and scan.std < 0.1
    inside = np.mean([p.ci_low <= 0.1 <= p.ci_high for p in scan.points])
    assert inside > 0.8
    again = stability_scan(x, grid, min_exceedances=200, n_boot=100, seed=3)
    assert again == scan
    assert StabilityScan.from_dict(scan.to_dict()) == scan
    assert scan.xi_at(0.95) == next(p.xi for p in scan.points if p.q == 0.95)


def test_g5_check_both_sides() -> None:
    ok = stability_check(0.0, 0.03, -0.04, q=0.97, delta=0.02, tolerance=0.05)
    assert ok.passed and ok.deviation == 0.04 and ok.sides == ("minus", "plus")
    bad = stability_check(0.008, 0.07, -0.02, q=0.97, delta=0.02, tolerance=0.05)
    assert not bad.passed


def test_wald_scan_intervals_are_the_observed_information_intervals_and_cover() -> None:
    # ξ̂ ± 1.96 s.e. from the observed information; the asymptotic s.e. of the GPD MLE is
    # (1 + ξ)/√n_exc (Smith 1987), and over repeated samples the intervals cover ξ about 95 %
    from tailgate.stats import gpd, inference

    x = sample_gpd(np.random.default_rng(1), 0.1, 1.0, 40_000)
    scan = stability_scan(x, [0.5, 0.9], min_exceedances=200, intervals="wald")
    for p in scan.points:
        y = x[x > p.u] - p.u
        se = inference.observed_information(y, gpd.fit(y)).se_xi
        np.testing.assert_allclose(
            [p.ci_low, p.ci_high], [p.xi - 1.959964 * se, p.xi + 1.959964 * se], rtol=1e-6
        )
        assert (
            abs((p.ci_high - p.ci_low) / 2 - 1.96 * 1.1 / np.sqrt(p.n_exc))
            < 0.08 * (p.ci_high - p.ci_low) / 2
        )
    rng = np.random.default_rng(2)
    covered = 0
    for _ in range(300):
        s = stability_scan(
            sample_gpd(rng, 0.1, 1.0, 2_000), [0.75], min_exceedances=200, intervals="wald"
        )
        covered += s.points[0].ci_low <= 0.1 <= s.points[0].ci_high
    assert 0.91 <= covered / 300 <= 0.985  # binomial s.d. at 0.95: 0.0126
