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
