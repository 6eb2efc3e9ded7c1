"""Likelihood inference for ξ beside the registered percentile bootstrap (Section 3 of Zhou (2026)).

A referee expects, next to the percentile CI of Tables 2–4 of Zhou (2026):

* **observed-information standard errors** of (ξ̂, σ̂): the inverse of the negative Hessian of
  the GPD log-likelihood (Eq. 1 of Zhou (2026)) at the MLE (:func:`observed_information`);
* **profile-likelihood CIs** for ξ: {ξ : 2[ℓ̂ − ℓ_p(ξ)] ≤ χ²₁(level)}, where
  ℓ_p(ξ) = max_σ ℓ(ξ, σ) (:func:`profile_loglik`, :func:`profile_ci`). They are not symmetric
  and do not under-cover at small n_exc the way the percentile interval does.

The two-sample likelihood-ratio test of ξ_A = ξ_B that P1 uses is
:mod:`tailgate.stats.likelihood_ratio`, from the profiles here.

For fixed ξ > −1 the scale σ̂(ξ) solves (1 + ξ) Σ y/(σ + ξy) = n, whose left side decreases
in σ from +∞ (or n/ξ·(1 + ξ) > n) to 0 on σ > max(0, −ξ·max y); it is found row-wise by Newton
steps in log σ safeguarded by bisection, vectorised over a grid of ξ.

With ``step`` (scores on a lattice of that step, exceedances on the cell midpoints) every function
here uses the discretised likelihood of :mod:`tailgate.stats.lattice_likelihood` instead of the
density: the standard errors come from its expected (grouped multinomial) information, ℓ_p(ξ)
maximises it over σ, and its ξ is not limited to ξ > −1 (the discretised likelihood is bounded).

The gates work from stored statistics only, so :class:`ProfileGrid` keeps ℓ_p on a fixed grid of
ξ (step :data:`GRID_STEP`, within :data:`GRID_HALF_WIDTH` of ξ̂, aligned to multiples of the step
so that two conditions share grid points, and widened until 2[ℓ̂ − ℓ_p] reaches
:data:`GRID_DEVIANCE` at both ends).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tailgate.lazy import lazy_module
from tailgate.stats import gpd, lattice_likelihood
from tailgate.stats.distributions import chi2_1_ppf
from tailgate.stats.stored import none_to_nan

optimize = lazy_module("scipy.optimize")

__all__ = [
    "GRID_DEVIANCE",
    "GRID_HALF_WIDTH",
    "GRID_MAX_HALF_WIDTH",
    "GRID_STEP",
    "ObservedInformation",
    "ProfileCI",
    "ProfileGrid",
    "observed_information",
    "profile_ci",
    "profile_grid",
    "profile_loglik",
]

#: spacing of the stored profile grid of ξ
GRID_STEP = 0.01
#: the stored grid covers ξ̂ ± this (clipped to ξ > −1) at least
GRID_HALF_WIDTH = 0.75
#: ... and is widened (to ξ̂ ± :data:`GRID_MAX_HALF_WIDTH`) until 2[ℓ̂ − ℓ_p] reaches this at
#: both ends: a joint maximum beyond two such grids' common points means Λ ≥ this (χ²₁ p 6·10⁻⁷,
#: 2·10⁻⁵ after the largest Bartlett factor at 20 exceedances each)
GRID_DEVIANCE = 25.0
GRID_MAX_HALF_WIDTH = 4.0
XI_MIN = -0.999
#: the lowest ξ a discretised profile CI searches down to
XI_MIN_LATTICE = -4.0


@dataclass(frozen=True)
class ObservedInformation:
    """Observed-information standard errors of the GPD MLE and the covariance (ξ, σ)."""

    xi: float
    sigma: float
    se_xi: float
    se_sigma: float
    cov_xi_sigma: float

    def confidence_interval(self, level: float = 0.95) -> gpd.Interval:
        """Wald interval ξ̂ ± z·se."""
        z = math.sqrt(chi2_1_ppf(level))
        return gpd.Interval(self.xi - z * self.se_xi, self.xi + z * self.se_xi)


def _hessian(y: np.ndarray, xi: float, sigma: float) -> np.ndarray:
    """Hessian of the GPD log-likelihood in (ξ, σ) (analytic; ξ ≠ 0)."""
    d = sigma + xi * y
    logw = np.log1p(xi * y / sigma)
    l_ss = np.sum(1.0 / sigma**2 - (1.0 + xi) * y * (d + sigma) / (sigma**2 * d**2))
    l_sx = np.sum(y / (sigma * d) - (1.0 + xi) * y**2 / (sigma * d**2))
    l_xx = np.sum(2.0 * y / (xi**2 * d) - 2.0 * logw / xi**3 + (1.0 + 1.0 / xi) * y**2 / d**2)
    return np.array([[l_xx, l_sx], [l_sx, l_ss]])


def observed_information(
    y: np.ndarray, fit: gpd.GPDFit | None = None, *, step: float | None = None
) -> ObservedInformation:
    """Standard errors of (ξ̂, σ̂) from the observed information (inverse negative Hessian).

    Near ξ̂ = 0 the analytic Hessian cancels badly, so it is interpolated linearly between
    ξ̂ ± 10⁻³ (the Hessian is smooth in ξ).

    Parameters
    ----------
    y : numpy.ndarray
        Exceedances over the threshold.
    fit : GPDFit or None, default None
        The MLE of ``y`` when already computed (default: :func:`tailgate.stats.gpd.fit`).
    step : float or None, default None
        Lattice step: the standard errors come from the discretised model's expected information.

    Returns
    -------
    ObservedInformation
        ξ̂, σ̂, their standard errors and covariance; the last three NaN when the fit is not an
        interior maximum or the information is not positive definite.
    """
    y = np.asarray(y, dtype=np.float64)
    fit = fit if fit is not None else gpd.fit(y, step)
    xi, sigma = fit.xi, fit.sigma
    nan = ObservedInformation(xi, sigma, math.nan, math.nan, math.nan)
    if not fit.converged:
        return nan
    # the information's second parameter: σ, or log σ on a lattice (dσ = σ d log σ)
    h, scale = 1e-3, 1.0
    if step is not None:  # the expected information of the grouped (discretised) model
        g = gpd.lattice_groups(y, step)
        if g is None:
            return nan
        _, info = lattice_likelihood.score_info(
            g, np.array([xi]), np.array([math.log(sigma)]), np.array([0])
        )
        info, scale = info[0], sigma
    elif abs(xi) < h:
        w = (xi + h) / (2 * h)
        info = -((1 - w) * _hessian(y, -h, sigma) + w * _hessian(y, h, sigma))
    else:
        info = -_hessian(y, xi, sigma)
    if not np.all(np.isfinite(info)) or np.linalg.det(info) <= 0 or info[0, 0] <= 0:
        return nan
    cov = np.linalg.inv(info)
    return ObservedInformation(
        xi,
        sigma,
        float(np.sqrt(cov[0, 0])),
        float(scale * np.sqrt(cov[1, 1])),
        float(scale * cov[0, 1]),
    )


def _sigma_hat(y: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """σ̂(ξ) for every ξ > −1 of ``xi`` (module docstring), vectorised over ``xi``."""
    return sigma_rows(y[None, :], xi, float(y.mean()), float(y.max()))


def sigma_rows(y: np.ndarray, xi: np.ndarray, ybar: Any, ymax: Any) -> np.ndarray:
    """σ̂(ξ_r) for each row r of ``y`` (shape (r, n), or (1, n) shared by every ξ) with mean
    ``ybar`` and maximum ``ymax``: safeguarded Newton steps on log σ, bracketed by the
    feasible range (module docstring); a row stops once its step is below 10⁻¹³ (relative).

    With b = y/(σ + ξy) the score is (1 + ξ)·Σb − n and its derivative in log σ is
    −(1 + ξ)·Σ b(1 − ξb), since σ/(σ + ξy) = 1 − ξb: two sums of one pass's b."""
    n = y.shape[1]
    shared = y.shape[0] == 1
    lo_sigma = np.maximum(0.0, -xi * ymax)
    hi_sigma = 1.01 * ((1.0 + xi) * ybar + np.abs(xi) * ymax) + 1e-300
    lo = np.log(np.where(lo_sigma > 0, lo_sigma, hi_sigma * 1e-12))
    hi = np.log(hi_sigma)
    s = np.log(np.clip(ybar * (1.0 - np.minimum(xi, 0.9)), np.exp(lo) * 1.001, hi_sigma))
    s = np.clip(s, lo, hi)
    active = np.arange(xi.size)
    for _ in range(200):
        if active.size == 0:
            break
        xa, sa = xi[active], s[active]
        ya = y if shared else y[active]
        b = ya / (np.exp(sa)[:, None] + xa[:, None] * ya)
        sb = b.sum(axis=1)
        f = (1.0 + xa) * sb - n
        fp = -(1.0 + xa) * (sb - xa * np.einsum("ij,ij->i", b, b))
        pos = f > 0  # root lies above s
        lo[active] = np.where(pos, sa, lo[active])
        hi[active] = np.where(pos, hi[active], sa)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(fp < 0, -f / fp, 0.0)
        new = sa + step
        bad = ~((new > lo[active]) & (new < hi[active])) | ~np.isfinite(new)
        new = np.where(bad, 0.5 * (lo[active] + hi[active]), new)
        done = np.abs(new - sa) < 1e-13 * np.maximum(1.0, np.abs(sa))
        s[active] = new
        active = active[~done]
    return np.exp(s)


def profile_loglik(
    y: np.ndarray, xi: np.ndarray | float, *, step: float | None = None
) -> np.ndarray:
    """ℓ_p(ξ) = max_σ ℓ(ξ, σ) of Eq. 1 of Zhou (2026) at every ξ > −1 of ``xi`` (NaN at ξ ≤ −1).

    Parameters
    ----------
    y : numpy.ndarray
        Exceedances over the threshold.
    xi : numpy.ndarray or float
        The values of ξ.
    step : float or None, default None
        Lattice step: the profile of the discretised likelihood, at every ξ (NaN where it has no
        maximum in σ).

    Returns
    -------
    numpy.ndarray
        ℓ_p (a total log-likelihood) at every ξ, shaped as ``xi`` (at least 1-D); all NaN when
        ``y`` is off the ``step`` lattice.

    References
    ----------
    Zhou (2026), Eq. 1.
    """
    y = np.asarray(y, dtype=np.float64)
    xi = np.atleast_1d(np.asarray(xi, dtype=np.float64))
    if step is not None:
        g = gpd.lattice_groups(y, step)
        if g is None:
            return np.full(xi.shape, math.nan)
        return lattice_likelihood.profile_groups(g, xi, float(np.mean(y)))
    out = np.full(xi.shape, math.nan)
    ok = xi > -1.0
    if ok.any():
        x = xi[ok]
        sig = _sigma_hat(y, x)
        ls = gpd.log_survival(y[None, :], x[:, None], sig[:, None])
        out[ok] = -y.size * np.log(sig) + (1.0 + x) * ls.sum(axis=1)
    return out


@dataclass(frozen=True)
class ProfileCI:
    """Profile-likelihood CI for ξ; ``low`` is −1 when the profile stays above the cut-off down
    to the ξ = −1 limit (``low_at_limit``)."""

    xi: float
    loglik: float
    level: float
    low: float
    high: float
    low_at_limit: bool = False

    @property
    def confidence_interval(self) -> gpd.Interval:
        return gpd.Interval(self.low, self.high)


def profile_ci(
    y: np.ndarray,
    level: float = 0.95,
    fit: gpd.GPDFit | None = None,
    *,
    step: float | None = None,
) -> ProfileCI:
    """Profile-likelihood CI for ξ at ``level`` (χ²₁ cut-off), endpoints by Brent's method.

    Parameters
    ----------
    y : numpy.ndarray
        Exceedances over the threshold.
    level : float, default 0.95
        Confidence level; the cut-off is ℓ̂ − χ²₁(level)/2.
    fit : GPDFit or None, default None
        The MLE of ``y`` when already computed (default: :func:`tailgate.stats.gpd.fit`).
    step : float or None, default None
        Lattice step: the profile of the discretised likelihood; the lower end is searched down to
        ξ = −4 (and reported there, ``low_at_limit``, when the profile stays above the cut-off).

    Returns
    -------
    ProfileCI
        ξ̂, ℓ̂, ``level`` and the endpoints: NaN when the fit is not an interior maximum; ``low``
        −1 with ``low_at_limit`` when the continuous profile stays above the cut-off down to the
        ξ = −1 limit; ``high`` inf (``low`` NaN) when the doubling search finds no upper crossing.
    """
    y = np.asarray(y, dtype=np.float64)
    lattice_step = step
    fit = fit if fit is not None else gpd.fit(y, lattice_step)
    if not fit.converged:
        return ProfileCI(fit.xi, fit.loglik, level, math.nan, math.nan)
    cut = fit.loglik - 0.5 * chi2_1_ppf(level)

    def g(v: float) -> float:
        val = float(profile_loglik(y, v, step=lattice_step)[0])
        return (val if math.isfinite(val) else -math.inf) - cut

    lo_bracket = hi_bracket = None
    if lattice_step is not None:
        lo_bracket, hi_bracket = _lattice_brackets(fit, y, lattice_step, cut)

    high, step = fit.xi, 0.05
    if hi_bracket is not None:
        high = optimize.brentq(g, *hi_bracket, xtol=1e-10)
    else:
        while g(high + step) > 0:
            step *= 2.0
            if step > 64:
                return ProfileCI(fit.xi, fit.loglik, level, math.nan, math.inf)
        high = optimize.brentq(g, fit.xi, fit.xi + step, xtol=1e-10)
    low_at_limit = False
    floor = XI_MIN if lattice_step is None else XI_MIN_LATTICE
    if lo_bracket is not None:
        low = optimize.brentq(g, *lo_bracket, xtol=1e-10)
    elif fit.xi <= floor or g(floor) > 0:
        low, low_at_limit = (-1.0 if lattice_step is None else floor), True
    else:
        lo, step = fit.xi, 0.05
        while lo - step > floor and g(lo - step) > 0:
            step *= 2.0
        low = optimize.brentq(g, max(lo - step, floor), fit.xi, xtol=1e-10)
    return ProfileCI(fit.xi, fit.loglik, level, float(low), float(high), low_at_limit)


#: the grid (spacing, half-width in ξ) on which a discretised profile is scanned for its CI
_LATTICE_SCAN = (0.05, 1.0)


def _lattice_brackets(
    fit: gpd.GPDFit, y: np.ndarray, step: float, cut: float
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """Brackets of the lower and upper crossings of the cut-off by the discretised ℓ_p, from
    a grid within ±1 of ξ̂ (one vectorised fit); None where the grid holds no crossing."""
    spacing, half = _LATTICE_SCAN
    n = round(half / spacing)
    grid = fit.xi + spacing * np.arange(-n, n + 1)
    grid = grid[grid >= XI_MIN_LATTICE]
    vals = profile_loglik(y, grid, step=step)
    above = np.where(np.isfinite(vals), vals, -np.inf) > cut
    k = int(np.argmin(np.abs(grid - fit.xi)))
    above[k] = True
    up = np.flatnonzero(~above[k:])
    down = np.flatnonzero(~above[:k][::-1])
    hi = None if up.size == 0 else (float(grid[k + up[0] - 1]), float(grid[k + up[0]]))
    lo = None if down.size == 0 else (float(grid[k - 1 - down[0]]), float(grid[k - down[0]]))
    return lo, hi


@dataclass(frozen=True)
class ProfileGrid:
    """ℓ_p(ξ) stored at ξ_k = k·step for k = start, start + 1, …, and the maximum ℓ̂."""

    start: int
    step: float
    values: tuple[float, ...]
    loglik: float

    @property
    def xi(self) -> np.ndarray:
        return (self.start + np.arange(len(self.values))) * self.step

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "step": self.step,
            "loglik": self.loglik,
            # a point without a maximum in σ (possible only on a lattice) is written as null
            "values": [round(float(v), 6) if math.isfinite(v) else None for v in self.values],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProfileGrid:
        values = tuple(none_to_nan(v) for v in d["values"])
        return cls(int(d["start"]), float(d["step"]), values, float(d["loglik"]))


def profile_grid(
    y: np.ndarray, fit: gpd.GPDFit | None = None, *, step: float | None = None
) -> ProfileGrid | None:
    """ℓ_p on the aligned grid of ξ within :data:`GRID_HALF_WIDTH` of ξ̂, widened as needed.

    Each end is widened by :data:`GRID_HALF_WIDTH` at a time while 2[ℓ̂ − ℓ_p] there is below
    :data:`GRID_DEVIANCE` (up to ξ̂ ± :data:`GRID_MAX_HALF_WIDTH`; module docstring).

    Parameters
    ----------
    y : numpy.ndarray
        Exceedances over the threshold.
    fit : GPDFit or None, default None
        The MLE of ``y`` when already computed (default: :func:`tailgate.stats.gpd.fit`).
    step : float or None, default None
        Lattice step: the profile of the discretised likelihood (the grid is not clipped at
        ξ = −1).

    Returns
    -------
    ProfileGrid or None
        ℓ_p at multiples of :data:`GRID_STEP`, and ℓ̂; None without an interior fit.
    """
    y = np.asarray(y, dtype=np.float64)
    fit = fit if fit is not None else gpd.fit(y, step)
    if not fit.converged:
        return None
    lowest = math.ceil((XI_MIN if step is None else XI_MIN_LATTICE) / GRID_STEP)
    k0 = max(math.ceil((fit.xi - GRID_HALF_WIDTH) / GRID_STEP), lowest)
    k1 = math.floor((fit.xi + GRID_HALF_WIDTH) / GRID_STEP)
    values = profile_loglik(y, np.arange(k0, k1 + 1) * GRID_STEP, step=step)
    block = round(GRID_HALF_WIDTH / GRID_STEP)
    k_min = max(math.ceil((fit.xi - GRID_MAX_HALF_WIDTH) / GRID_STEP), lowest)
    k_max = math.floor((fit.xi + GRID_MAX_HALF_WIDTH) / GRID_STEP)

    def short(v: float) -> bool:  # the profile at an end is still within the deviance
        return bool(2.0 * (fit.loglik - v) < GRID_DEVIANCE)

    while k0 > k_min and short(values[0]):
        new = np.arange(max(k0 - block, k_min), k0)
        values = np.concatenate([profile_loglik(y, new * GRID_STEP, step=step), values])
        k0 = int(new[0])
    while k1 < k_max and short(values[-1]):
        new = np.arange(k1 + 1, min(k1 + block, k_max) + 1)
        values = np.concatenate([values, profile_loglik(y, new * GRID_STEP, step=step)])
        k1 = int(new[-1])
    return ProfileGrid(k0, GRID_STEP, tuple(values.tolist()), float(fit.loglik))
