"""The likelihood-ratio test from stored profile grids where the joint maximum lies beyond the
common grid points: the grids are widened until the profile has fallen far enough, and a
maximum at an end of the common points gives a lower bound on Λ, never the grids' overstatement."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tailgate.stats import gpd, inference, likelihood_ratio
from tailgate.stats.gof import sample_gpd


@pytest.fixture(scope="module")
def flat_and_sharp() -> tuple[np.ndarray, np.ndarray]:
    """25 exceedances with ξ̂ ≈ 1.0 (a flat profile) against 400 with ξ̂ ≈ 0.03 (a sharp one):
    on grids of ξ̂ ± 0.75 the summed profile peaks at the lower end of the common points."""
    rng = np.random.default_rng(13)
    return sample_gpd(rng, 0.5, 1.0, (25,)), sample_gpd(rng, 0.0, 1.0, (400,))


def narrow(g: inference.ProfileGrid, y: np.ndarray) -> inference.ProfileGrid:
    """``g`` cut to ξ̂ ± 0.75 (the grids stored before they were widened)."""
    xi = gpd.fit(y).xi
    k0, k1 = math.ceil((xi - 0.75) / g.step), math.floor((xi + 0.75) / g.step)
    return inference.ProfileGrid(k0, g.step, g.values[k0 - g.start : k1 - g.start + 1], g.loglik)


def test_widened_grids_give_the_exact_statistic(flat_and_sharp) -> None:
    ya, yb = flat_and_sharp
    exact = likelihood_ratio.lr_test(ya, yb)
    grids = likelihood_ratio.lr_test_grids(inference.profile_grid(ya), inference.profile_grid(yb))
    assert grids.statistic == pytest.approx(exact.statistic, abs=1e-3)
    assert grids.xi_common == pytest.approx(exact.xi_common, abs=0.01)


def test_an_edge_maximum_gives_a_lower_bound_not_the_grids_overstatement(flat_and_sharp) -> None:
    ya, yb = flat_and_sharp
    exact = likelihood_ratio.lr_test(ya, yb).statistic  # 18.5
    a = narrow(inference.profile_grid(ya), ya)
    b = narrow(inference.profile_grid(yb), yb)
    k0 = max(a.start, b.start)
    common = np.asarray(a.values[k0 - a.start :][:50]) + np.asarray(b.values[k0 - b.start :][:50])
    assert int(np.argmax(common)) == 0  # the constructed case: the maximum at the edge
    assert 2 * (a.loglik + b.loglik - common[0]) > exact + 3  # what the grids alone said: 22.1
    t = likelihood_ratio.lr_test_grids(a, b)
    assert 0 < t.statistic <= exact


def test_stored_grids_reach_the_deviance_at_both_ends(flat_and_sharp) -> None:
    for y in flat_and_sharp:
        g = inference.profile_grid(y)
        fit = gpd.fit(y)
        xi = g.xi
        for end, v in ((xi[0], g.values[0]), (xi[-1], g.values[-1])):
            at_limit = end <= -0.99 or abs(end - fit.xi) >= inference.GRID_MAX_HALF_WIDTH - 0.01
            assert at_limit or 2 * (g.loglik - v) >= inference.GRID_DEVIANCE
        assert xi[0] <= fit.xi - inference.GRID_HALF_WIDTH + 0.01
