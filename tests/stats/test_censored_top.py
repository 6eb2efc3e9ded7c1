"""A censored top grade (methods note P10): with ``protocol.thresholds.ceiling`` registered,
the capped grade's cell enters the discretised likelihood, G4's statistic and G4's simulated
samples as right-censored, [its lower bound, ∞); without it nothing changes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, logit
from tailgate.errors import InputError
from tailgate.prereg.protocol_blocks import Thresholds, read_block
from tailgate.report.procedure import _censored_note
from tailgate.stages.fit import lattice_step
from tailgate.stats import gof, gpd, inference, lattice, lattice_likelihood
from test_lattice_cells import independent_mle

H = 0.5
EPS = 1e-6


def _capped(rng: np.random.Generator, n: int, xi: float, k_c: int) -> tuple[np.ndarray, float]:
    """Grades (k + ½)h of GPD(ξ, 1) exceedances, every one at or beyond cell k_c recorded as
    the ceiling c = (k_c + ½)h."""
    e = -np.log(rng.random(n))
    k = np.floor(np.expm1(xi * e) / xi / H)
    return (np.minimum(k, k_c) + 0.5) * H, (k_c + 0.5) * H


def _interval_censored_loglik(lo: np.ndarray, hi: np.ndarray, xi: float, sigma: float) -> float:
    """Σ log P(lo ≤ Y < hi), hi = ∞ for a right-censored value, written out with scipy."""
    d = stats.genpareto(xi, scale=sigma)
    p = np.where(np.isinf(hi), d.sf(lo), d.cdf(np.where(np.isinf(hi), 0.0, hi)) - d.cdf(lo))
    return float(np.sum(np.log(p))) if np.all(p > 0) else -1e300


def test_the_censored_likelihood_is_the_right_censored_mle() -> None:
    y, c = _capped(np.random.default_rng(51_051), 400, 0.1, 4)
    assert 0.05 < np.mean(y == c) < 0.3
    cells = lattice.Cells(H, None, 0.0, c)
    fit = gpd.fit(y, cells)
    assert fit.status == "ok"
    lo = np.floor(y / H) * H
    hi = np.where(y == c, np.inf, lo + H)
    assert fit.loglik == pytest.approx(_interval_censored_loglik(lo, hi, fit.xi, fit.sigma))
    best = independent_mle(lo, hi)
    assert fit.xi == pytest.approx(best.x[0], abs=1e-6)
    assert fit.sigma == pytest.approx(math.exp(best.x[1]), rel=1e-6)
    assert fit.loglik >= -best.fun - 1e-9
    # the cap read as an ordinary cell is another likelihood, and a badly biased one
    naive = gpd.fit(y, H)
    assert naive.xi < fit.xi - 0.1
    # the profile, the bootstrap and the information run on the censored cells
    prof = inference.profile_ci(y, 0.95, fit, step=cells)
    assert prof.low < fit.xi < prof.high
    boot = gpd.bootstrap(y, 32, 5, full_fit=fit, workers=1, step=cells)
    assert boot.n_failed == 0
    assert math.isfinite(inference.observed_information(y, fit, step=cells).se_xi)


def test_a_clipped_top_probability_grade_is_censored_on_the_logit_scale() -> None:
    rng = np.random.default_rng(51_052)
    grades = np.round(
        np.round(np.minimum(expit(rng.logistic(0.0, 1.0, 3000)), 0.95) / 0.05) * 0.05, 2
    )
    assert 0.05 < np.mean(grades[grades > np.quantile(grades, 0.6)] == 0.95) < 0.3
    x = logit(np.clip(grades, EPS, 1 - EPS))
    cells = lattice.Cells(0.05, EPS, ceiling=0.95)
    ex = lattice.exceedances(x, 0.6, cells)
    fit = gpd.fit(ex.y, ex.step)
    assert fit.status == "ok"
    base = ex.step.base  # type: ignore[union-attr]
    g = grades[grades > base]
    t = logit(base)
    lo = logit(g - 0.025) - t
    hi = np.where(g > 0.95 - 1e-9, np.inf, logit(g + 0.025) - t)
    assert fit.loglik == pytest.approx(_interval_censored_loglik(lo, hi, fit.xi, fit.sigma))
    best = independent_mle(lo, hi)
    assert fit.xi == pytest.approx(best.x[0], abs=1e-6)
    assert fit.loglik >= -best.fun - 1e-9


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_g4_holds_its_size_on_capped_grades_where_the_uncensored_fit_fails_it() -> None:
    """Small version of ``tests/benchmarks/censored_top.py``: 80 capped samples with 15–25 %
    at the ceiling, G4 with 49 resamples (the uncensored G4 on the first 10)."""
    rng = np.random.default_rng(51_053)
    p_cens, p_naive = [], []
    for i in range(80):
        y, c = _capped(rng, 250, 0.1, 3)
        cells = lattice.Cells(H, None, 0.0, c)
        p_cens.append(gof.anderson_darling_lattice(y, cells, n_boot=49, seed=i).pvalue)
        if i < 10:
            p_naive.append(gof.anderson_darling_lattice(y, H, n_boot=49, seed=i).pvalue)
    p_cens, p_naive = np.array(p_cens), np.array(p_naive)
    assert np.mean(p_naive <= 0.05) >= 0.8
    assert np.mean(p_cens <= 0.05) <= 0.12
    assert np.mean(p_cens <= 0.5) == pytest.approx(0.5, abs=0.2)


def test_simulated_samples_pile_up_at_the_ceiling() -> None:
    cells = lattice.Cells(H, None, 0.0, 2.25)  # ceiling's cell k = 4: [2, ∞)
    assert cells.bounds(np.arange(6)).tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, math.inf]
    drawn = lattice_likelihood.sample_cells(np.random.default_rng(4), 0.1, 1.0, cells, (1, 20_000))[
        0
    ]
    assert drawn.max() == 4
    assert np.mean(drawn == 4) == pytest.approx(stats.genpareto(0.1).sf(2.0), abs=0.01)
    # a value beyond the ceiling is no cell of this lattice
    assert cells.cells_of(np.array([2.25, 2.75])).tolist() == [4, -1]
    assert lattice.to_dict(cells, detected=False) == {
        "step": H,
        "detected": False,
        "censored_ceiling": 2.25,
    }


class _Study:
    epsilon = EPS

    def __init__(self, **thresholds: float) -> None:
        block = {"headline": 0.95, "band": [0.95], "ties": "lattice", **thresholds}
        self.thresholds = read_block(Thresholds, block)


def test_the_fit_stage_censors_only_a_registered_ceiling() -> None:
    grades = np.clip(np.round(np.random.default_rng(5).gamma(2.0, 1.5, 2000)), 1, 10)
    assert lattice_step(_Study(), grades) == 1.0  # unregistered: the equal cells of today
    cells = lattice_step(_Study(ceiling=10), grades)
    assert cells == lattice.Cells(1.0, None, ceiling=10.0)
    # a scorer whose bad tail is low: its severities are −s, the ceiling −c
    low = lattice_step(_Study(ceiling=1), -grades, worse="lower")
    assert isinstance(low, lattice.Cells) and low.ceiling == -1.0
    # the logit scale: the ceiling is a probability grade
    probs = np.round(np.random.default_rng(6).random(500) / 0.05) * 0.05
    on_logit = lattice_step(_Study(ceiling=1.0), logit(np.clip(probs, EPS, 1 - EPS)), "c", "logit")
    assert on_logit == lattice.Cells(0.05, EPS, ceiling=1.0)
    with pytest.raises(InputError, match=r"condition 'a'.*lie beyond.*ceiling.*Fix"):
        lattice_step(_Study(ceiling=8), grades, "condition 'a'")
    with pytest.raises(InputError, match=r"not a point of the scores' lattice"):
        lattice_step(_Study(ceiling=9.5), np.minimum(grades, 9.0))


def test_a_pile_up_at_the_top_is_detected_for_advice_only() -> None:
    rng = np.random.default_rng(7)
    free = np.round(rng.gamma(2.0, 1.5, 3000))
    assert lattice.pile_up(free, 0.9) is None
    share = lattice.pile_up(np.minimum(free, 7.0), 0.9)
    assert share is not None and share > 0.3


def test_the_report_says_the_top_grade_was_censored() -> None:
    rec = {"lattice": lattice.to_dict(lattice.Cells(1.0, None, ceiling=10.0), detected=True)}
    assert "right-censored" in _censored_note({"a": rec})
    assert _censored_note({"a": {"lattice": lattice.to_dict(1.0, detected=True)}}) == ""
