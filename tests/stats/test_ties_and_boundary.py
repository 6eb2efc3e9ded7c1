"""Lattice data (tied scores) and the boundary-vs-interior rule of the GPD fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tailgate.stats import gpd
from tailgate.stats.gof import sample_gpd
from tailgate.stats.risk import exceedances, tie_diagnostic


def rounded_exponential(seed: int, n: int = 20_000, step: float = 0.1) -> np.ndarray:
    return np.round(np.random.default_rng(seed).exponential(size=n) / step) * step


def test_tie_diagnostic_fires_on_rounded_data_only() -> None:
    x = rounded_exponential(1)
    d = tie_diagnostic(x, 0.95)
    assert d.fires and d.at_threshold > 1 and d.tied_exceedances > 0
    smooth = np.random.default_rng(1).exponential(size=20_000)
    assert not tie_diagnostic(smooth, 0.95).fires
    smooth[np.argsort(smooth)[-2:]] = smooth.max()  # one stray duplicate at the top
    stray = tie_diagnostic(smooth, 0.95)
    assert stray.tied_exceedances == 1 and not stray.fires


def test_half_step_threshold_counts_the_tied_values() -> None:
    x = rounded_exponential(2)
    u = float(np.quantile(x, 0.95))
    strict, half = exceedances(x, 0.95), exceedances(x, 0.95, "half_step")
    assert strict.u == u and half.u == pytest.approx(u - 0.05)
    assert half.n_exc == strict.n_exc + int(np.count_nonzero(x == u))
    assert exceedances(np.arange(100.0), 0.9, "half_step").u == np.quantile(np.arange(100.0), 0.9)


def test_half_step_removes_the_tie_bias_of_xi() -> None:
    """Exponential tail (ξ = 0) rounded to 0.1: strict ξ̂ is biased, half-step ξ̂ is not."""
    strict, half = [], []
    for seed in range(20):
        x = rounded_exponential(100 + seed)
        strict.append(gpd.fit(exceedances(x, 0.95).y).xi)
        half.append(gpd.fit(exceedances(x, 0.95, "half_step").y).xi)
    se = 1 / math.sqrt(1000) / math.sqrt(20)  # s.e. of the mean of 20 ξ̂ at n_exc ≈ 1000
    assert abs(np.mean(half)) < 3 * se
    assert abs(np.mean(strict)) > abs(np.mean(half)) + 2 * se


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_ok_fits_never_lie_below_the_boundary_limit() -> None:
    """Small n, ξ near −1: an interior local maximum below −n·log max(y) is reported boundary."""
    rng = np.random.default_rng(0)
    x = sample_gpd(rng, -0.9, 1.0, (500, 20))
    fits = [gpd.fit(row) for row in x]  # each row fitted once, for both checks below
    for row, f in zip(x, fits, strict=True):
        if f.status == "ok":
            assert f.loglik >= -row.size * math.log(row.max())
    rows = gpd.fit_rows(x)
    ok = rows.status == 0
    assert np.all(rows.loglik[ok] >= -20 * np.log(x[ok].max(axis=1)))
    assert [f.status == "ok" for f in fits] == list(ok)
