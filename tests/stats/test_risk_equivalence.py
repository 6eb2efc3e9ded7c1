"""Thresholds, TVaR and CI-inside-band equivalence (G1, G2 of seed 000)."""

from __future__ import annotations

import numpy as np
import pytest
from tailgate.stats.equivalence import BulkEquivalence, bulk_equivalence, ci_inside_band
from tailgate.stats.risk import bulk_bootstrap, exceedances, tvar


def test_threshold_and_exceedances_use_linear_quantile() -> None:
    x = np.arange(1.0, 101.0)
    ex = exceedances(x, 0.95)
    assert ex.u == pytest.approx(95.05)  # (N − 1)q = 94.05 → 95 + 0.05
    assert ex.n_exc == 5 and np.all(ex.y > 0) and ex.y[0] == pytest.approx(0.95)


def test_tvar_closed_form_for_exponential() -> None:
    # TVaR_q of Exp(1) is −log(1 − q) + 1
    x = np.random.default_rng(0).exponential(1.0, 400_000)
    assert tvar(x, 0.9) == pytest.approx(np.log(10) + 1, rel=5e-3)


def test_bulk_bootstrap_matches_direct_resampling() -> None:
    x = np.random.default_rng(1).normal(size=500)
    b = bulk_bootstrap(x, 70, seed=3)
    from tailgate.stats.gpd import _block_rng, seed_sequence_of

    idx = _block_rng(seed_sequence_of(3), 1).integers(0, 500, size=(64, 500))
    for r in (0, 5):
        xr = x[idx[r]]
        assert b.mean[64 + r] == pytest.approx(xr.mean(), abs=1e-12)
        assert b.tvar[64 + r] == pytest.approx(tvar(xr, 0.9), abs=1e-12)


def test_ci_inside_band_decision() -> None:
    reps = np.linspace(-0.05, 0.05, 1001)
    assert ci_inside_band(reps, 0.0, 0.1, 0.95).equivalent
    assert not ci_inside_band(reps + 0.07, 0.07, 0.1, 0.95).equivalent


def test_equivalence_detects_shift_and_paired_is_tighter() -> None:
    rng = np.random.default_rng(4)
    base = rng.normal(size=3000)
    a = base + rng.normal(scale=0.2, size=3000)
    b = base + rng.normal(scale=0.2, size=3000)
    ind = bulk_equivalence(a, b, margin_mean=0.1, margin_tvar=0.2, n_boot=800, seed=1)
    par = bulk_equivalence(a, b, margin_mean=0.1, margin_tvar=0.2, n_boot=800, seed=1, paired=True)
    assert par.mean.equivalent and par.tvar.equivalent
    width = lambda r: r.ci_high - r.ci_low  # noqa: E731
    assert width(par.mean) < 0.5 * width(ind.mean)
    shifted = bulk_equivalence(
        a + 0.3, b, margin_mean=0.1, margin_tvar=0.2, n_boot=400, seed=1, paired=True
    )
    assert not shifted.mean.equivalent and not shifted.tvar.equivalent
    assert BulkEquivalence.from_dict(par.to_dict()) == par
    again = bulk_equivalence(a, b, margin_mean=0.1, margin_tvar=0.2, n_boot=800, seed=1)
    assert again == ind


def test_paired_needs_aligned_arrays() -> None:
    with pytest.raises(ValueError, match="aligned by prompt"):
        bulk_equivalence(np.ones(10), np.ones(11), margin_mean=0.1, margin_tvar=0.2, paired=True)


def test_bad_input_messages() -> None:
    with pytest.raises(ValueError, match="NaN or infinite"):
        exceedances(np.array([1.0, np.nan]), 0.9)
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        tvar(np.ones(5), 1.0)
