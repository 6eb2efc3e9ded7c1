"""Size of P1's two-sample likelihood-ratio test of ξ_A = ξ_B at small exceedance counts.

Λ against χ²₁ holds its size only to O(1/n); at n_A = 50, n_B = 80 its null mean is above 1
(1.11–1.26 in simulation). Divided by its null mean (Bartlett correction, methods note P8) it must
hold the level within Monte Carlo error (2 s.e., 1,000 null pairs) without becoming trivially
conservative (at least α/2; measured 0.036 and 0.044, uncorrected 0.050 and 0.059). The
scales differ (Λ is scale invariant).

The gate computes Λ from the stored profile grids
(:func:`tailgate.stats.likelihood_ratio.lr_test_grids`): the joint maximum read off a grid of step
0.01 and refined by a parabola. The size is taken over the exact joint maxima
(:func:`tailgate.stats.likelihood_ratio.lr_rows`, vectorised over the pairs), and the grid statistic
is checked against them pair by pair on the first ``GRID_CHECK`` pairs, within ``GRID_TOL`` in Λ and
in the common ξ̂ (measured over all 1,000 pairs: at most 3.4·10⁻⁴ and 1.7·10⁻⁴). Within that
tolerance the two decide alike unless Λ lies within 10⁻³ of χ²₁'s 0.95 point, where its density is
0.03: a chance of 6·10⁻⁵ per pair, far below the Monte Carlo s.e. of the size (0.007). A grid
defect that moves Λ in a share f of the pairs is seen among the checked pairs with probability
1 − (1 − f)²⁰⁰: 0.98 at f = 0.02, the share that could move the size by the 2 s.e. allowed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tailgate.protocol.gates import GateSettings
from tailgate.stats import distributions, inference, likelihood_ratio
from tailgate.stats.gof import sample_gpd

ALPHA, REPS = 0.05, 1000
MC = 2.0 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)
GRID_CHECK, GRID_TOL = 200, 1e-3


def _null_tests(xi: float, seed: int) -> list[likelihood_ratio.LRTest]:
    """The null pairs' tests from the exact joint maxima, after the gate's grid statistic has
    been checked against them on the first ``GRID_CHECK`` pairs (module docstring)."""
    rng = np.random.default_rng(seed)
    pairs = [(sample_gpd(rng, xi, 1.0, 50), sample_gpd(rng, xi, 2.5, 80)) for _ in range(REPS)]
    ya, yb = np.stack([a for a, _ in pairs]), np.stack([b for _, b in pairs])
    lam, common = likelihood_ratio.lr_rows(ya, yb)
    for i in range(GRID_CHECK):
        grid = likelihood_ratio.lr_test_grids(
            inference.profile_grid(ya[i]), inference.profile_grid(yb[i])
        )
        assert grid.statistic == pytest.approx(lam[i], abs=GRID_TOL), i
        assert grid.xi_common == pytest.approx(common[i], abs=GRID_TOL), i
    return [
        likelihood_ratio.LRTest(float(v), distributions.chi2_1_sf(float(v)), float(c))
        for v, c in zip(lam, common, strict=True)
        if math.isfinite(v)
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("xi", "seed"), [(-0.2, 11), (0.2, 12)])
def test_bartlett_corrected_lr_test_holds_its_size_at_50_and_80(xi: float, seed: int) -> None:
    tests = _null_tests(xi, seed)
    assert len(tests) >= 0.98 * REPS
    raw = np.mean([t.pvalue < ALPHA for t in tests])
    corrected = np.mean(
        [likelihood_ratio.bartlett_corrected(t, 50, 80).pvalue < ALPHA for t in tests]
    )
    assert ALPHA / 2 <= corrected <= ALPHA + MC, (raw, corrected)


def test_bartlett_factor_shrinks_with_n_and_settings_register_the_calibration() -> None:
    f = likelihood_ratio.bartlett_factor
    assert f(0.0, 50, 80) > f(0.0, 500, 800) > 1.0
    assert f(0.0, 500, 800) - 1.0 == pytest.approx((f(0.0, 50, 80) - 1.0) / 10)
    assert GateSettings().lr_calibration == "bartlett"
    with pytest.raises(ValueError, match="lr_calibration"):
        GateSettings(lr_calibration="exact")
    t = likelihood_ratio.LRTest(3.0, float("nan"), 0.1)
    c = likelihood_ratio.bartlett_corrected(t, 50, 80)
    assert c.statistic == pytest.approx(3.0 / f(0.1, 50, 80)) and 0.0 < c.pvalue < 1.0


def test_vectorised_lr_rows_match_the_brent_reference() -> None:
    """Λ and the common ξ̂ of :func:`likelihood_ratio.lr_rows` (golden section, vectorised over
    pairs) against the bounded-Brent :func:`likelihood_ratio.lr_test` of each pair."""
    rng = np.random.default_rng(34_401)
    ya = sample_gpd(rng, 0.1, 1.0, (6, 60))
    yb = sample_gpd(rng, 0.3, 2.0, (6, 90))
    lam, common = likelihood_ratio.lr_rows(ya, yb)
    for i in range(6):
        ref = likelihood_ratio.lr_test(ya[i], yb[i])
        assert lam[i] == pytest.approx(ref.statistic, abs=2e-6)
        assert common[i] == pytest.approx(ref.xi_common, abs=1e-3)


def test_parametric_bootstrap_null_law_and_the_gate_that_uses_it() -> None:
    """The simulated null law of Λ at 50/80 exceedances: reproducible, heavier than χ²₁ (its
    mean near the Bartlett factor), and the gate takes it only below the registered count."""
    from tailgate.protocol.gates import ConditionSummary, p1_gate

    null = likelihood_ratio.lr_null_statistics(0.2, 50, 80, 400)
    again = likelihood_ratio.lr_null_statistics(0.2, 50, 80, 400)
    np.testing.assert_array_equal(null, again)
    assert null.size >= 390
    se = float(np.std(null, ddof=1) / math.sqrt(null.size))
    assert float(np.mean(null)) == pytest.approx(
        likelihood_ratio.bartlett_factor(0.2, 50, 80), abs=4 * se
    )
    t = likelihood_ratio.LRTest(4.5, distributions.chi2_1_sf(4.5), 0.2)
    boot = likelihood_ratio.lr_bootstrap(t, 50, 80, 400)
    full = likelihood_ratio.lr_null_statistics(0.2, 50, 80, 400)
    assert boot.pvalue == pytest.approx((1 + np.count_nonzero(full >= 4.5)) / (full.size + 1))
    assert boot.pvalue > t.pvalue  # the small-sample law is heavier than χ²₁

    rng = np.random.default_rng(34_402)

    def summary(name: str, n: int, xi: float) -> ConditionSummary:
        y = sample_gpd(rng, xi, 1.0, n)
        f = inference.gpd.fit(y)
        grid = inference.profile_grid(y, f)
        nan = math.nan
        return ConditionSummary(
            name,
            0.95,
            1.0,
            n,
            f.xi,
            f.sigma,
            f.status,
            nan,
            nan,
            0.95,
            0.5,
            nan,
            nan,
            profile=grid,
        )

    a, b = summary("a", 60, 0.1), summary("b", 90, 0.1)
    small = GateSettings(p1_method="lr_test", lr_calibration="bootstrap")
    assert "parametric bootstrap below 200" in p1_gate(a, b, small).criterion
    above = GateSettings(p1_method="lr_test", lr_calibration="bootstrap", lr_bootstrap_below=50)
    assert "(bartlett)" in p1_gate(a, b, above).criterion
    assert "lr_bootstrap_below" in small.to_dict()
    assert "lr_bootstrap_below" not in GateSettings().to_dict()
