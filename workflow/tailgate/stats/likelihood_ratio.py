"""The two-sample likelihood-ratio test of a common GPD shape, ξ_A = ξ_B with free scales (P1 of
Zhou (2026), Section 3), from the profile likelihoods of :mod:`tailgate.stats.inference`.

A two-sample likelihood-ratio test of ξ_A = ξ_B with free scales,
Λ = 2[ℓ̂_A + ℓ̂_B − max_ξ (ℓ_p,A(ξ) + ℓ_p,B(ξ))] ~ χ²₁ under the null (:func:`lr_test`), the
direct test of Δξ that CI non-overlap (a test at α ≈ 0.006 for two 95 % CIs) only
approximates. At small n_exc Λ is heavier than χ²₁; P1 divides it by its null mean
(Bartlett correction, :func:`bartlett_corrected`) unless ``protocol.lr_calibration: chi2``.

The gates work from stored statistics only (the :class:`tailgate.stats.inference.ProfileGrid` of
each condition): :func:`lr_test_grids` maximises the summed profile on the common points and refines
the maximum by a parabola through the best three. The joint maximum lies between the two MLEs, so
where it falls beyond the common points one profile is cut off before it: Λ is then at least that
profile's deviance at its end (ℓ_p falls away from its MLE), which is at least
:data:`GRID_DEVIANCE`, and :func:`lr_test_grids` returns that lower bound — a test the grids decide
exactly at every level above χ²₁'s tail beyond it (the grids' maximum alone overstated Λ there: 18.4
against the exact 10.0 in one null pair of 800 on ±0.75 grids).

"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tailgate.lazy import lazy_module
from tailgate.seeds import seed_sequence
from tailgate.stats import gpd
from tailgate.stats.distributions import chi2_1_sf
from tailgate.stats.gof import sample_gpd
from tailgate.stats.inference import (
    XI_MIN,
    XI_MIN_LATTICE,
    ProfileGrid,
    profile_loglik,
    sigma_rows,
)
from tailgate.stats.stored import finite_or_none

optimize = lazy_module("scipy.optimize")

__all__ = [
    "BARTLETT_COEFFICIENTS",
    "LR_BOOTSTRAP_RESAMPLES",
    "LR_CALIBRATIONS",
    "LRTest",
    "bartlett_corrected",
    "bartlett_factor",
    "lr_bootstrap",
    "lr_null_statistics",
    "lr_rows",
    "lr_test",
    "lr_test_grids",
]


@dataclass(frozen=True)
class LRTest:
    """Two-sample likelihood-ratio test of ξ_A = ξ_B (scales free): Λ ~ χ²₁ under the null."""

    statistic: float
    pvalue: float
    xi_common: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": finite_or_none(self.statistic),
            "pvalue": finite_or_none(self.pvalue),
            "xi": finite_or_none(self.xi_common),
        }


#: a(ξ) = c₀ + c₁ξ + c₂ξ² of the Bartlett correction E₀[Λ] = 1 + a(ξ)(1/n_A + 1/n_B), fitted
#: by weighted least squares to the simulated a(ξ) of :mod:`tailgate.stats.make_lr_bartlett` at
#: n = 40 (ξ = −0.4, −0.2, …, 0.8; 1,000 null pairs each) and n = 62 (ξ = −0.2, 0.1, 0.4; 3,000)
BARTLETT_COEFFICIENTS = (3.693, 1.169, -4.207)
#: calibrations of the LR test (``protocol.lr_calibration``)
LR_CALIBRATIONS = ("bartlett", "chi2", "bootstrap")
#: null samples of the LR test's parametric bootstrap ((B + 1)·α is whole at α = 0.05, 0.01)
LR_BOOTSTRAP_RESAMPLES = 999
#: the streams of the LR test's null samples derive from this seed, keyed by (ξ̂₀, n_A, n_B):
#: the null law of Λ depends only on them, so the p-value is a function of the stored statistics
LR_BOOTSTRAP_SEED = 20260534
_GOLDEN_STEPS = 40


def bartlett_factor(xi: float, n_a: int, n_b: int) -> float:
    """E₀[Λ] = 1 + a(ξ)(1/n_A + 1/n_B), with ξ clipped to the simulated range [−0.4, 0.8].

    Parameters
    ----------
    xi : float
        The common ξ̂.
    n_a, n_b : int
        Exceedances of samples A and B.

    Returns
    -------
    float
        The null mean of Λ (a(ξ) is the quadratic of :data:`BARTLETT_COEFFICIENTS`, floored
        at 0).
    """
    x = min(max(float(xi), -0.4), 0.8)
    c0, c1, c2 = BARTLETT_COEFFICIENTS
    return 1.0 + max(0.0, c0 + c1 * x + c2 * x * x) * (1.0 / n_a + 1.0 / n_b)


def bartlett_corrected(test: LRTest, n_a: int, n_b: int) -> LRTest:
    """``test`` with Λ divided by its null mean at the common ξ̂ (Bartlett 1937).

    Λ/E₀[Λ] is χ²₁ to O(n⁻²), where Λ itself is χ²₁ only to O(n⁻¹) (size 0.090 at n = 50/80,
    ξ = −0.2).

    Parameters
    ----------
    test : LRTest
        The uncorrected test.
    n_a, n_b : int
        Exceedances of samples A and B.

    Returns
    -------
    LRTest
        Λ divided by :func:`bartlett_factor`, its χ²₁ p-value and the same common ξ̂; ``test``
        itself when Λ is not finite.

    References
    ----------
    Bartlett (1937).
    """
    if not math.isfinite(test.statistic):
        return test
    stat = test.statistic / bartlett_factor(test.xi_common, n_a, n_b)
    return LRTest(stat, chi2_1_sf(stat), test.xi_common)


def _lr(loglik: float, joint: float, xi_common: float) -> LRTest:
    stat = max(0.0, 2.0 * (loglik - joint))
    return LRTest(stat, chi2_1_sf(stat), xi_common)


def lr_test(y_a: np.ndarray, y_b: np.ndarray) -> LRTest:
    """Λ from the samples: the joint maximum over ξ of ℓ_p,A + ℓ_p,B by bounded Brent search.

    Parameters
    ----------
    y_a, y_b : numpy.ndarray
        Exceedances of samples A and B.

    Returns
    -------
    LRTest
        Λ, its χ²₁ p-value and the common ξ̂; NaN when either fit is not an interior maximum.
    """
    fa, fb = gpd.fit(np.asarray(y_a, float)), gpd.fit(np.asarray(y_b, float))
    if not (fa.converged and fb.converged):
        return LRTest(math.nan, math.nan, math.nan)
    lo, hi = sorted((fa.xi, fb.xi))
    pad = 0.05 + 0.1 * (hi - lo)
    res = optimize.minimize_scalar(
        lambda v: -float(profile_loglik(y_a, v)[0] + profile_loglik(y_b, v)[0]),
        bounds=(max(lo - pad, XI_MIN), hi + pad),
        method="bounded",
        options={"xatol": 1e-9},
    )
    return _lr(fa.loglik + fb.loglik, -float(res.fun), float(res.x))


def _edge_bound(a: ProfileGrid, b: ProfileGrid, k: int, lower: bool) -> float | None:
    """Where the summed profile peaks at the common end point ``k`` (lower or upper): the
    largest deviance 2[ℓ̂ − ℓ_p(ξ_k)] of a grid that ends there, a lower bound on Λ (module
    docstring); None when no grid ends there short of the ξ range (its end is the joint
    maximum's bound too)."""
    lowest = (math.ceil(XI_MIN / a.step), math.ceil(XI_MIN_LATTICE / a.step))
    bounds = []
    for g in (a, b):
        end = g.start if lower else g.start + len(g.values) - 1
        if end != k or (lower and end in lowest):
            continue
        v = g.values[k - g.start]
        if math.isfinite(v):
            bounds.append(2.0 * (g.loglik - v))
    return max(bounds) if bounds else None


def lr_test_grids(a: ProfileGrid | None, b: ProfileGrid | None) -> LRTest:
    """Λ from two stored profile grids (:func:`profile_grid`), parabola-refined on common points.

    Where the summed profile peaks at an end of the common points at which one grid stops, the
    joint maximum lies beyond it and Λ is the lower bound that grid's deviance there gives (module
    docstring): at least :data:`GRID_DEVIANCE` for grids of :func:`profile_grid`.

    Parameters
    ----------
    a, b : ProfileGrid or None
        The stored profiles of samples A and B.

    Returns
    -------
    LRTest
        Λ, its χ²₁ p-value and the common ξ̂; NaN when either grid is missing or they share
        fewer than three points.
    """
    if a is None or b is None:
        return LRTest(math.nan, math.nan, math.nan)
    k0, k1 = max(a.start, b.start), min(a.start + len(a.values), b.start + len(b.values)) - 1
    if k1 - k0 < 2:
        return LRTest(math.nan, math.nan, math.nan)
    va = np.asarray(a.values[k0 - a.start : k1 - a.start + 1], dtype=float)
    vb = np.asarray(b.values[k0 - b.start : k1 - b.start + 1], dtype=float)
    s = va + vb
    i = int(np.nanargmax(s))
    best, xi_best = float(s[i]), float((k0 + i) * a.step)
    if i in (0, s.size - 1):
        bound = _edge_bound(a, b, k0 + i, lower=i == 0)
        if bound is not None:
            stat = max(0.0, bound)
            return LRTest(stat, chi2_1_sf(stat), xi_best)
    if 0 < i < s.size - 1:
        f0, f1, f2 = s[i - 1], s[i], s[i + 1]
        den = f0 - 2 * f1 + f2
        if den < 0:
            t = 0.5 * (f0 - f2) / den
            best = float(f1 - 0.25 * (f0 - f2) * t)
            xi_best += float(t) * a.step
    return _lr(a.loglik + b.loglik, best, xi_best)


def _profile_rows(y: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """ℓ_p(ξ_r) of every row r of ``y`` (shape (r, n)) at its own ξ_r > −1: σ̂(ξ_r) by the
    safeguarded Newton steps of :func:`_sigma_hat`, row-wise."""
    n = y.shape[1]
    sig = sigma_rows(y, xi, y.mean(axis=1), y.max(axis=1))
    x = xi[:, None]
    ls = gpd.log_survival(y, x, sig[:, None])
    return -n * np.log(sig) + (1.0 + xi) * ls.sum(axis=1)


def lr_null_statistics(
    xi: float, n_a: int, n_b: int, n_boot: int = LR_BOOTSTRAP_RESAMPLES
) -> np.ndarray:
    """Λ of ``n_boot`` null pairs of GPD(ξ, 1) samples of sizes ``n_a`` and ``n_b``.

    Λ is scale invariant, so its null law depends only on ξ and the sizes. Each pair's joint
    maximum is found by a golden-section search between the two MLEs (vectorised over pairs). The
    stream is keyed by (ξ rounded to 10⁻⁶, n_A, n_B) under :data:`LR_BOOTSTRAP_SEED`.

    Parameters
    ----------
    xi : float
        The shape of the null samples.
    n_a, n_b : int
        Sizes of samples A and B.
    n_boot : int, default LR_BOOTSTRAP_RESAMPLES
        Null pairs drawn.

    Returns
    -------
    numpy.ndarray
        The finite Λ (at most ``n_boot``): pairs without two interior fits are left out.
    """
    xi = round(float(xi), 6)
    ss = seed_sequence(LR_BOOTSTRAP_SEED, "lr_null", f"{xi:.6f}", int(n_a), int(n_b))
    rng = np.random.Generator(np.random.PCG64(ss))
    ya = sample_gpd(rng, xi, 1.0, (n_boot, int(n_a)))
    yb = sample_gpd(rng, xi, 1.0, (n_boot, int(n_b)))
    lam, _ = lr_rows(ya, yb)
    return lam[np.isfinite(lam)]


def lr_rows(ya: np.ndarray, yb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Λ and the common ξ̂ of every pair of rows of ``ya`` and ``yb`` (vectorised).

    The joint maximum of ℓ_p,A + ℓ_p,B is found by a golden-section search between the two MLEs.

    Parameters
    ----------
    ya, yb : numpy.ndarray
        Samples A and B, one pair per row: shapes (r, n_A) and (r, n_B).

    Returns
    -------
    tuple of numpy.ndarray
        Λ and the common ξ̂, each of length r; NaN for pairs without two interior fits.
    """
    fa, fb = gpd.fit_rows(ya), gpd.fit_rows(yb)
    ok = (fa.status == 0) & (fb.status == 0)
    lam = np.full(ya.shape[0], math.nan)
    common = np.full(ya.shape[0], math.nan)
    ya, yb = ya[ok], yb[ok]
    xa, xb = fa.xi[ok], fb.xi[ok]
    lo = np.maximum(np.minimum(xa, xb), XI_MIN)
    hi = np.maximum(np.maximum(xa, xb), lo)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0

    def joint(v: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        if mask is None:
            return _profile_rows(ya, v) + _profile_rows(yb, v)
        return _profile_rows(ya[mask], v[mask]) + _profile_rows(yb[mask], v[mask])

    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc, fd = joint(c), joint(d)
    for _ in range(_GOLDEN_STEPS):
        left = fc >= fd  # the maximum lies in [lo, d]
        hi = np.where(left, d, hi)
        lo = np.where(left, lo, c)
        c_new = np.where(left, hi - ratio * (hi - lo), d)
        d_new = np.where(left, c, lo + ratio * (hi - lo))
        fc_new = np.where(left, np.nan, fd)
        fd_new = np.where(left, fc, np.nan)
        if left.any():
            fc_new[left] = joint(c_new, left)
        if (~left).any():
            fd_new[~left] = joint(d_new, ~left)
        c, d, fc, fd = c_new, d_new, fc_new, fd_new
    ends = np.stack([fc, fd, joint(lo), joint(hi)])
    best = ends.max(axis=0)
    where = np.stack([c, d, lo, hi])[ends.argmax(axis=0), np.arange(best.size)]
    lam[ok] = np.maximum(0.0, 2.0 * (fa.loglik[ok] + fb.loglik[ok] - best))
    common[ok] = where
    return lam, common


def lr_bootstrap(test: LRTest, n_a: int, n_b: int, n_boot: int = LR_BOOTSTRAP_RESAMPLES) -> LRTest:
    """``test`` with its p-value from the parametric bootstrap of Λ's null law at the common ξ̂.

    The null law is :func:`lr_null_statistics` at the common ξ̂ (floored at −0.5), and
    p = (1 + #{Λ* ≥ Λ}) / (B + 1) over the B usable null pairs (with (B + 1)·α whole the test has
    level α up to the error in ξ̂₀). For small samples, where Λ's law departs from χ²₁ beyond a
    mean correction.

    Parameters
    ----------
    test : LRTest
        The test whose Λ is calibrated.
    n_a, n_b : int
        Exceedances of samples A and B.
    n_boot : int, default LR_BOOTSTRAP_RESAMPLES
        Null pairs drawn.

    Returns
    -------
    LRTest
        Λ and the common ξ̂ of ``test`` with the bootstrap p-value; ``test`` itself when Λ or the
        common ξ̂ is not finite.

    References
    ----------
    Davison & Hinkley (1997), Section 4.2.
    """
    if not math.isfinite(test.statistic) or not math.isfinite(test.xi_common):
        return test
    null = lr_null_statistics(max(test.xi_common, -0.5), n_a, n_b, n_boot)
    p = (1.0 + np.count_nonzero(null >= test.statistic)) / (null.size + 1.0)
    return LRTest(test.statistic, float(p), test.xi_common)
