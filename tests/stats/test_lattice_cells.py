"""Cells, not steps (methods note P10): a monotone transform of lattice scores (the logit of
probability grades) keeps each exceedance in the image of its grade's cell, and the discretised
likelihood, G4, G5 and the bootstrap take those unequal cells; evenly spaced scores keep the
arithmetic of equal cells, bit for bit."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit, logit
from tailgate.errors import InputError
from tailgate.prereg.protocol_blocks import Thresholds, read_block
from tailgate.stages.fit import lattice_step
from tailgate.stats import gof, gpd, inference, lattice, lattice_likelihood, risk, stability

EPS = 1e-6
H = 0.05


def _probability_grades(n: int = 3000, seed: int = 61_001) -> np.ndarray:
    """Judge grades on 0, 0.05, …, 1 (a latent logistic score rounded), 1–2 % at the top."""
    rng = np.random.default_rng(seed)
    return np.round(expit(rng.logistic(-1.0, 1.0, n)) / H) * H


def _independent_cells(grades: np.ndarray, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Each exceedance's cell on the logit scale, written out from its grade: the logit of
    [g − h/2, g + h/2] clipped to [ε, 1 − ε], less the logit of the threshold point."""
    t = logit(np.clip(base, EPS, 1 - EPS))
    g = grades[grades > base]
    lo = logit(np.clip(g - H / 2, EPS, 1 - EPS)) - t
    hi = logit(np.clip(g + H / 2, EPS, 1 - EPS)) - t
    return lo, hi


def _censored_loglik(lo: np.ndarray, hi: np.ndarray, xi: float, sigma: float) -> float:
    p = stats.genpareto.cdf(hi, xi, scale=sigma) - stats.genpareto.cdf(lo, xi, scale=sigma)
    return float(np.sum(np.log(p))) if np.all(p > 0) else -1e300


def independent_mle(lo: np.ndarray, hi: np.ndarray) -> optimize.OptimizeResult:
    """The interval-censored MLE (hi = ∞: right-censored) by scipy's Nelder–Mead from three
    starts, the best kept."""
    return min(
        (
            optimize.minimize(
                lambda p: -_censored_loglik(lo, hi, p[0], math.exp(p[1])),
                np.array([xi0, 0.0]),
                method="Nelder-Mead",
                options={"xatol": 1e-11, "fatol": 1e-12, "maxiter": 20_000},
            )
            for xi0 in (-0.3, 0.1, 0.4)
        ),
        key=lambda r: r.fun,
    )


def test_the_cell_likelihood_is_the_interval_censored_mle_of_logit_grades() -> None:
    grades = _probability_grades()
    x = logit(np.clip(grades, EPS, 1 - EPS))
    assert np.count_nonzero(grades == 1.0) > 10  # the clipped top grade is among the exceedances
    ex = risk.exceedances(x, 0.8, "lattice", lattice.Cells(H, EPS))
    cells = ex.step
    assert isinstance(cells, lattice.Cells)
    fit = gpd.fit(ex.y, cells)
    assert fit.status == "ok"
    # the threshold: half a grade below the grade on or above the grades' 0.8-quantile
    base = grades[grades >= np.quantile(grades, 0.8) - 1e-12].min() - H / 2
    assert cells.base == pytest.approx(base, abs=1e-12)
    lo, hi = _independent_cells(grades, base)
    assert lo.size == ex.n_exc and lo.min() == 0.0
    # the same likelihood at the fitted point, and the same maximum from an independent search
    assert fit.loglik == pytest.approx(_censored_loglik(lo, hi, fit.xi, fit.sigma), rel=1e-12)
    best = independent_mle(lo, hi)
    assert fit.xi == pytest.approx(best.x[0], abs=1e-6)
    assert fit.sigma == pytest.approx(math.exp(best.x[1]), rel=1e-6)
    assert fit.loglik >= -best.fun - 1e-9
    # equal steps on the logit scale would be a different (and wrong) likelihood
    assert lattice.detect_step(x) is None


def test_the_bootstrap_g4_and_g5_run_on_the_cells() -> None:
    grades = _probability_grades()
    x = logit(np.clip(grades, EPS, 1 - EPS))
    ex = risk.exceedances(x, 0.8, "lattice", lattice.Cells(H, EPS))
    fit = gpd.fit(ex.y, ex.step)
    boot = gpd.bootstrap(ex.y, 64, 5, full_fit=fit, workers=1, step=ex.step)
    assert boot.n_failed == 0 and boot.ci(0.9).low < fit.xi < boot.ci(0.9).high
    ad = gof.anderson_darling_lattice(ex.y, ex.step, fit, n_boot=49, seed=3)
    assert ad.method == "lattice_bootstrap" and 0.0 < ad.pvalue <= 1.0
    prof = inference.profile_ci(ex.y, 0.95, fit, step=ex.step)
    assert prof.low < fit.xi < prof.high
    # G5's sides: distinct lattice thresholds, one grade (not one logit unit) apart at least
    xi_minus, n_minus, _ = stability.lattice_side(x, 0.78, ex.u, ex.step, 50, -1)
    xi_plus, n_plus, _ = stability.lattice_side(x, 0.82, ex.u, ex.step, 50, +1)
    assert n_minus > ex.n_exc > n_plus and math.isfinite(xi_minus) and math.isfinite(xi_plus)
    side, why = stability.lattice_side_threshold(x, 0.8, ex.u, ex.step, +1)
    assert "one lattice step higher" in why
    assert side.base == pytest.approx(ex.step.base + H)


def test_simulated_samples_fill_the_cells_and_the_cell_beyond_the_clipped_top() -> None:
    cells = lattice.Cells(H, EPS).at(0.825)
    drawn = lattice_likelihood.sample_cells(np.random.default_rng(2), 0.3, 2.0, cells, (4, 400))
    top = cells.finite_bounds().size  # the cell beyond the top grade's clipped upper bound
    assert drawn.max() == top and drawn.min() == 0
    g = lattice_likelihood.groups_of(list(drawn), cells)
    assert np.isinf(g.positions[-1])
    fits = lattice_likelihood.fit_groups(g, np.full(4, 0.3), np.full(4, 2.0))
    assert fits.converged.all() and np.all(np.isfinite(fits.loglik))
    # a value on the clip stands for the top grade 1
    y = cells.excesses(logit(np.clip(np.array([0.9, 1.0, 0.5]), EPS, 1 - EPS)))
    assert cells.cells_of(y).tolist() == [1, 3]


def test_the_fit_stage_reads_the_probability_lattice_on_the_logit_scale() -> None:
    class Study:
        def __init__(self, epsilon: float) -> None:
            block = {"headline": 0.95, "band": [0.95], "ties": "lattice"}
            self.thresholds, self.epsilon = read_block(Thresholds, block), epsilon

    x = logit(np.clip(_probability_grades(400), EPS, 1 - EPS))
    cells = lattice_step(Study(EPS), x, "condition 'a'", "logit")
    assert isinstance(cells, lattice.Cells)
    assert (cells.step, cells.epsilon) == (pytest.approx(H), EPS)
    with pytest.raises(InputError, match=r"condition 'a'.*transform.epsilon 0.03.*half"):
        lattice_step(
            Study(0.03),
            logit(np.clip(_probability_grades(400), 0.03, 0.97)),
            "condition 'a'",
            "logit",
        )


def _today_sample() -> np.ndarray:
    rng = np.random.default_rng(7)
    e = -np.log(rng.random(3000))
    return np.round(np.expm1(0.2 * e) / 0.2 / 0.5) * 0.5 + 1.0


def test_equal_cells_give_todays_lattice_fits() -> None:
    """Evenly spaced scores keep the equal-cell arithmetic: the values below were computed
    before unequal cells existed, and every one is reproduced to 1e-9 (the last bits of
    numpy's log and exp depend on the CPU's vector instructions: AVX-512 or not)."""
    same = functools.partial(pytest.approx, rel=1e-9, abs=1e-12)
    x = _today_sample()
    step = risk.lattice_step_of(x)
    ex = risk.exceedances(x, 0.9, "lattice", step)
    assert (step, ex.u, ex.step) == (0.5, 3.75, 0.5)
    fit = gpd.fit(ex.y, ex.step)
    assert (fit.xi, fit.sigma, fit.loglik) == same(
        (0.11441542779794829, 1.5644400667004676, -752.3721955146798)
    )
    assert fit.iterations == 30
    boot = gpd.bootstrap(ex.y, 300, 5, full_fit=fit, workers=1, step=ex.step)
    assert boot.xi[:4].tolist() == same(
        [0.16703589478561567, 0.0307566745832417, 0.09948602019016857, -0.007097027087764008]
    )
    ad = gof.anderson_darling_lattice(ex.y, ex.step, fit, n_boot=99, seed=3)
    assert (ad.statistic, ad.pvalue) == same((0.2310832906690781, 0.66))
    oi = inference.observed_information(ex.y, fit, step=ex.step)
    assert (oi.se_xi, oi.se_sigma) == same((0.06364895051929628, 0.13096050885311258))
    prof = inference.profile_ci(ex.y, 0.95, fit, step=ex.step)
    assert (prof.low, prof.high) == same((-0.0034491155983613743, 0.26118649530351595))
    xi, n_exc, kind = stability.lattice_side(x, 0.9, ex.u, ex.step, 50, -1)
    assert (xi, n_exc, kind) == (same(0.11441542779794829), ex.n_exc, stability.SAME_THRESHOLD)
