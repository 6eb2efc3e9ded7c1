"""The distribution functions the stages evaluate, as the ``scipy.special`` functions
``scipy.stats`` itself calls: the same bits, without importing ``scipy.stats``.

Importing ``scipy.stats`` costs about 1 s of CPU per process (most of it parsing the docstrings of
its distributions), and every generation, fit and operating-characteristics job is its own
process. Measured on one job of the demo: a simulated generation shard 0.4 s of work after 1.2 s
of imports. These functions follow ``scipy.stats.rv_continuous.ppf``/``cdf`` exactly: the
standardised core function (``ndtri``, ``logit``, ``boxcox1p``…) times scale plus location inside
the support, the support's end points at probabilities 0 and 1, NaN outside [0, 1].
``tests/stats/test_distributions.py`` compares them bit for bit with ``scipy.stats`` on grids
that include the end points.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tailgate.lazy import lazy_module

# loaded on the first evaluation: the workflow's main process and the CLI import this module
# (through the gates) without evaluating any of it
special = lazy_module("scipy.special")

__all__ = [
    "chi2_1_ppf",
    "chi2_1_sf",
    "gpd_cdf",
    "gpd_ppf",
    "logistic_cdf",
    "logistic_ppf",
    "norm_cdf",
    "norm_ppf",
    "norm_sf",
]


def _scalar_or_array(out: np.ndarray) -> Any:
    return out[()] if out.ndim == 0 else out


def _ppf(
    core: Callable[[np.ndarray], np.ndarray],
    q: Any,
    loc: float,
    scale: float,
    support: tuple[float, float],
) -> Any:
    """``rv_continuous.ppf``: core(q)·scale + loc on (0, 1), the support's ends at 0 and 1."""
    q = np.asarray(q, dtype=np.float64)
    out = np.full(q.shape, np.nan)
    inside = (q > 0) & (q < 1)
    out[q == 0] = support[0] * scale + loc
    out[q == 1] = support[1] * scale + loc
    if inside.any():
        out[inside] = core(q[inside]) * scale + loc
    return _scalar_or_array(out)


def _cdf(
    core: Callable[[np.ndarray], np.ndarray],
    x: Any,
    loc: float,
    scale: float,
    support: tuple[float, float],
) -> Any:
    """``rv_continuous.cdf``: core((x − loc)/scale) inside the open support, 0 below, 1 above."""
    z = np.asarray((np.asarray(x, dtype=np.float64) - loc) / scale, dtype=np.float64)
    out = np.zeros(z.shape)
    out[np.isnan(z)] = np.nan
    out[z >= support[1]] = 1.0
    inside = (z > support[0]) & (z < support[1])
    if inside.any():
        out[inside] = core(z[inside])
    return _scalar_or_array(out)


_REAL_LINE = (-math.inf, math.inf)


def norm_ppf(q: Any, loc: float = 0.0, scale: float = 1.0) -> Any:
    """``scipy.stats.norm.ppf(q, loc, scale)``.

    Parameters
    ----------
    q : array_like
        The probabilities.
    loc : float, default 0.0
        The location.
    scale : float, default 1.0
        The scale.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The quantiles (a scalar for a scalar ``q``): −∞ at 0, ∞ at 1, NaN outside [0, 1].
    """
    return _ppf(special.ndtri, q, loc, scale, _REAL_LINE)


def norm_cdf(x: Any, loc: float = 0.0, scale: float = 1.0) -> Any:
    """``scipy.stats.norm.cdf(x, loc, scale)``.

    Parameters
    ----------
    x : array_like
        The values.
    loc : float, default 0.0
        The location.
    scale : float, default 1.0
        The scale.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        P(X ≤ x) (a scalar for a scalar ``x``): 0 at −∞, 1 at ∞, NaN for NaN.
    """
    return _cdf(special.ndtr, x, loc, scale, _REAL_LINE)


def norm_sf(x: Any) -> Any:
    """``scipy.stats.norm.sf(x)`` (standard normal): ndtr(−x).

    Parameters
    ----------
    x : array_like
        The values.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        P(Z > x) (a scalar for a scalar ``x``): 1 at −∞, 0 at ∞, NaN for NaN.
    """
    z = np.asarray(x, dtype=np.float64)
    out = np.ones(z.shape)
    out[np.isnan(z)] = np.nan
    out[z == math.inf] = 0.0
    inside = np.isfinite(z)
    if inside.any():
        out[inside] = special.ndtr(-z[inside])
    return _scalar_or_array(out)


def logistic_ppf(q: Any, loc: float = 0.0, scale: float = 1.0) -> Any:
    """``scipy.stats.logistic.ppf(q, loc, scale)``.

    Parameters
    ----------
    q : array_like
        The probabilities.
    loc : float, default 0.0
        The location.
    scale : float, default 1.0
        The scale.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The quantiles (a scalar for a scalar ``q``): −∞ at 0, ∞ at 1, NaN outside [0, 1].
    """
    return _ppf(special.logit, q, loc, scale, _REAL_LINE)


def logistic_cdf(x: Any, loc: float = 0.0, scale: float = 1.0) -> Any:
    """``scipy.stats.logistic.cdf(x, loc, scale)``.

    Parameters
    ----------
    x : array_like
        The values.
    loc : float, default 0.0
        The location.
    scale : float, default 1.0
        The scale.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        P(X ≤ x) (a scalar for a scalar ``x``): 0 at −∞, 1 at ∞, NaN for NaN.
    """
    return _cdf(special.expit, x, loc, scale, _REAL_LINE)


def _gpd_support(xi: float) -> tuple[float, float]:
    return (0.0, -1.0 / xi if xi < 0 else math.inf)


def gpd_ppf(q: Any, xi: float, sigma: float, loc: float = 0.0) -> Any:
    """``scipy.stats.genpareto.ppf(q, xi, loc, sigma)`` (Eq. 1 of Zhou (2026) inverted).

    Parameters
    ----------
    q : array_like
        The probabilities.
    xi : float
        The shape ξ.
    sigma : float
        The scale σ.
    loc : float, default 0.0
        The location (the threshold).

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The quantiles (a scalar for a scalar ``q``): ``loc`` at 0, the support's upper end at 1
        (∞, or loc − σ/ξ for ξ < 0), NaN outside [0, 1].

    References
    ----------
    Zhou (2026), Eq. 1.
    """
    return _ppf(lambda p: -special.boxcox1p(-p, -xi), q, loc, sigma, _gpd_support(xi))


def gpd_cdf(x: Any, xi: float, sigma: float, loc: float = 0.0) -> Any:
    """``scipy.stats.genpareto.cdf(x, xi, loc, sigma)`` (Eq. 1 of Zhou (2026)).

    Parameters
    ----------
    x : array_like
        The values.
    xi : float
        The shape ξ.
    sigma : float
        The scale σ.
    loc : float, default 0.0
        The location (the threshold).

    Returns
    -------
    numpy.float64 or numpy.ndarray
        P(X ≤ x) (a scalar for a scalar ``x``): 0 below the support, 1 above it, NaN for NaN.

    References
    ----------
    Zhou (2026), Eq. 1.
    """
    return _cdf(lambda z: -special.inv_boxcox1p(-z, -xi), x, loc, sigma, _gpd_support(xi))


def chi2_1_ppf(p: float) -> float:
    """``scipy.stats.chi2.ppf(p, 1)``: 2·gammaincinv(1/2, p).

    Parameters
    ----------
    p : float
        The probability.

    Returns
    -------
    float
        The quantile of χ²₁: 0 at p = 0, ∞ at 1, NaN outside [0, 1].
    """
    return float(_ppf(lambda v: 2 * special.gammaincinv(0.5, v), p, 0.0, 1.0, (0.0, math.inf)))


def chi2_1_sf(x: float) -> float:
    """P(χ²₁ > x): ``scipy.stats.chi2.sf(x, 1)``.

    Calls ``scipy.special.chdtrc``, the function ``scipy.stats`` evaluates, without its per-call
    argument checks (the audit re-derives thousands of P1 tests).

    Parameters
    ----------
    x : float
        The statistic.

    Returns
    -------
    float
        The upper-tail probability: NaN for NaN, 1 at and below 0.
    """
    x = float(x)
    return 1.0 if x <= 0.0 else float(special.chdtrc(1.0, x))
