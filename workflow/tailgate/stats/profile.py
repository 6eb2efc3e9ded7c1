"""Grimshaw (1993) profile likelihood of the GPD, maximised row-wise by safeguarded Newton.

For exceedances y_1..y_n > 0 of the GPD (Eq. 1 of Zhou (2026)) write θ = ξ/σ. For fixed θ the
likelihood is maximised by ξ(θ) = mean(log1p(θ y)) and σ = ξ(θ)/θ, so the per-observation
profile log-likelihood is one-dimensional:

    f(θ) = ℓ*(θ)/n = −log(ξ(θ)/θ) − ξ(θ) − 1,   θ > −1/max(y).

At θ = 0 the model is exponential (ξ = 0, σ = mean(y)); near θ = 0 the ratio ξ(θ)/θ is evaluated
by its power series in θ, so the profile and its derivatives are smooth across the exponential
case. Newton steps are taken in η = log1p(θ·max(y)), which maps the feasible half-line onto the
real line (a step can never leave the support), with step caps, ascent steps where the profile is
not concave and step halving whenever a step lowers the likelihood. Where the profile is concave
the step is Halley's (Newton's step corrected by the third derivative: cubic convergence), so a
warm-started replicate needs about one pass fewer over its data.

The likelihood is unbounded as θ → −1/max(y) (ξ → −∞), so only a local maximum with ξ > −1 is an
interior MLE (Smith 1985). Rows whose iteration runs into ξ ≤ −1 are reported as boundary rows.

Everything here works on a 2-D array with one sample per row, so bootstrap replicates and
simulated samples are fitted together; :mod:`tailgate.stats.gpd` builds the public API on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tailgate.lazy import lazy_module

#: the sums of a profile evaluation in one compiled pass: numba loads with the first fit
profile_sums = lazy_module("tailgate.stats.profile_sums")

__all__ = [
    "STATUS_BOUNDARY",
    "STATUS_NO_CONVERGENCE",
    "STATUS_OK",
    "NewtonResult",
    "newton_rows",
    "profile_rows",
]

STATUS_OK = 0
STATUS_BOUNDARY = 1
STATUS_NO_CONVERGENCE = 2

#: |θ|·max(y) below which ξ(θ)/θ is evaluated by its power series (truncation < 1e-24)
SERIES_LIMIT = 1e-3
_SERIES_TERMS = 8
#: η below which 1 + θ·max(y) < e^-30: the iteration is at the support boundary
_ETA_FLOOR = -30.0
_ETA_CEIL = 700.0
_MAX_STEP = 2.0


def _series_rows(x: np.ndarray, t: np.ndarray, ymax: np.ndarray) -> tuple[np.ndarray, ...]:
    """Profile terms from the power series of log1p(θy)/θ (rows with |θ|·max(y) small)."""
    u = x / ymax[:, None]
    tau = t * ymax
    p = u.copy()
    g = np.zeros_like(t)
    g1 = np.zeros_like(t)
    g2 = np.zeros_like(t)
    for k in range(1, _SERIES_TERMS + 1):
        mk = p.mean(axis=1) * ((-1.0) ** (k + 1)) / k
        g += mk * tau ** (k - 1)
        if k >= 2:
            g1 += mk * (k - 1) * tau ** (k - 2)
        if k >= 3:
            g2 += mk * (k - 1) * (k - 2) * tau ** (k - 3)
        p *= u
    # back to θ units: g(θ) = ymax·G(τ), g' = ymax²·G', g'' = ymax³·G''
    g, g1, g2 = g * ymax, g1 * ymax**2, g2 * ymax**3
    xi = t * g
    dxi = g + t * g1
    ddxi = 2.0 * g1 + t * g2
    f = -np.log(g) - xi - 1.0
    d1 = -g1 / g - dxi
    d2 = -(g2 / g - (g1 / g) ** 2) - ddxi
    return xi, f, d1, d2, dxi


def _profile_terms(
    xi: np.ndarray, s1: np.ndarray, s2: np.ndarray, s3: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """f, f′, f″, f‴ at θ = t from ξ(θ) = mean log1p(θy) and s_k = mean (y/(1 + θy))^k."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = -np.log(xi / t) - xi - 1.0
        q = s1 / xi
        d1 = -q + 1.0 / t - s1
        d2 = s2 / xi + q * q - 1.0 / t**2 + s2
        d3 = -2.0 * s3 / xi - 3.0 * s2 * q / xi - 2.0 * q**3 + 2.0 / t**3 - 2.0 * s3
    return f, d1, d2, d3


def profile_rows(
    x: np.ndarray, t: np.ndarray, ymax: np.ndarray, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ξ(θ), f(θ), f'(θ), f''(θ), ξ'(θ) for every row of ``x`` (shape (r, n)) at its own θ = ``t``.

    Parameters
    ----------
    x : numpy.ndarray
        Exceedances, shape (r, n): one sample per row.
    t : numpy.ndarray
        The values of θ = ξ/σ.
    ymax : numpy.ndarray
        The maximum of the row each θ is evaluated on.
    rows : numpy.ndarray or None, default None
        The row of ``x`` each θ is evaluated on (by default row i for ``t[i]``; one sample at many
        θ is ``x`` of one row and ``rows`` all zeros).

    Returns
    -------
    tuple of numpy.ndarray
        ξ(θ), f(θ), f'(θ), f''(θ) and ξ'(θ), each of the length of ``t``; f is the profile
        log-likelihood per observation, ℓ*(θ)/n.

    References
    ----------
    Grimshaw (1993).
    """
    return _evaluate(x, t, ymax, rows)[:5]


def _evaluate(
    x: np.ndarray, t: np.ndarray, ymax: np.ndarray, rows: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """:func:`profile_rows` and f‴(θ) (NaN for the rows evaluated by the series)."""
    n = x.shape[1]
    near = np.abs(t) * ymax < SERIES_LIMIT
    ts = np.where(near, 1.0 / ymax, t)
    xi, s1, s2, s3 = (profile_sums.row_sums(x, ts, rows) / n).T
    f, d1, d2, d3 = _profile_terms(xi, s1, s2, s3, ts)
    if near.any():
        at = np.flatnonzero(near)
        xs = x[at if rows is None else rows[at]]
        xs, fs, d1s, d2s, dxs = _series_rows(xs, t[at], ymax[at])
        xi[at], f[at], d1[at], d2[at], s1[at] = xs, fs, d1s, d2s, dxs
        d3[at] = np.nan
    return xi, f, d1, d2, s1, d3


def _first_evaluation(
    x: np.ndarray, t0: np.ndarray, ymax: np.ndarray, start: np.ndarray
) -> tuple[np.ndarray, ...]:
    """:func:`_evaluate` at ``t0`` from the rows' sums at it (:func:`newton_rows`)."""
    n = x.shape[1]
    xi, s1, s2, s3 = (start[:, k] / n for k in range(4))
    f, d1, d2, d3 = _profile_terms(xi, s1, s2, s3, t0)
    out = [xi, f, d1, d2, s1, d3]
    redo = np.flatnonzero(
        (np.abs(t0) * ymax < SERIES_LIMIT) | (t0 * ymax <= np.expm1(_ETA_FLOOR + 5.0))
    )
    if redo.size:
        t = np.expm1(np.log1p(np.maximum(t0[redo] * ymax[redo], np.expm1(_ETA_FLOOR + 5.0))))
        again = _evaluate(x[redo], t / ymax[redo], ymax[redo])
        for a, b in zip(out, again, strict=True):
            a[redo] = b
    return tuple(out)


@dataclass(frozen=True, eq=False)
class NewtonResult:
    """Row-wise result of :func:`newton_rows` (arrays of length r)."""

    t: np.ndarray
    xi: np.ndarray
    f: np.ndarray
    status: np.ndarray
    iterations: np.ndarray


def newton_rows(
    x: np.ndarray,
    t0: np.ndarray,
    *,
    ymax: np.ndarray | None = None,
    start: np.ndarray | None = None,
    tol: float = 1e-11,
    max_iter: int = 100,
) -> NewtonResult:
    """Maximise the profile f(θ) of every row of ``x`` from the starting values ``t0``.

    Newton in η = log1p(θ·max(y)) with |Δη| ≤ 2, an ascent step of 0.5 where f is not concave in η,
    and step halving when a step lowers f. Each evaluation reads only the rows still iterating
    (:func:`tailgate.stats.profile_sums.row_sums`), so the tail of slow rows costs little.

    Parameters
    ----------
    x : numpy.ndarray
        Exceedances, shape (r, n): one sample per row.
    t0 : numpy.ndarray
        Starting θ = ξ/σ of every row.
    ymax : numpy.ndarray or None, default None
        Every row's maximum (default: computed from ``x``).
    start : numpy.ndarray or None, default None
        Rows × 4: each row's sums of log1p(t0·y) and of y/(1 + t0·y) to the powers 1, 2, 3,
        gathered with the resample (:meth:`tailgate.stats.draws.IndexStream.take_sums`), so the
        first evaluation needs no pass over ``x`` (rows near θ = 0, where the profile is evaluated
        by its series, and rows whose start is clipped at the support boundary are evaluated).
    tol : float, default 1e-11
        A row converges when its Newton step is below ``tol`` in η (ξ then moves by less than
        ~``tol``).
    max_iter : int, default 100
        Most evaluations of a row; a row still iterating then keeps
        :data:`STATUS_NO_CONVERGENCE`.

    Returns
    -------
    NewtonResult
        Per row: θ, ξ and f at the accepted point, the status (:data:`STATUS_BOUNDARY` where the
        iteration runs into the support boundary or ends at ξ ≤ −1) and the evaluations taken.

    References
    ----------
    Grimshaw (1993); Smith (1985).
    """
    x = np.asarray(x, dtype=np.float64)
    r = x.shape[0]
    if ymax is None:
        ymax = x.max(axis=1)
    t0 = np.asarray(t0, dtype=np.float64)
    eta = np.log1p(np.maximum(t0 * ymax, np.expm1(_ETA_FLOOR + 5.0)))
    f_acc = np.full(r, -np.inf)
    xi_acc = np.full(r, np.nan)
    eta_acc = eta.copy()
    step = np.zeros(r)
    status = np.full(r, STATUS_NO_CONVERGENCE, dtype=np.int8)
    iters = np.zeros(r, dtype=np.int32)
    active = np.arange(r)
    for _ in range(max_iter):
        if active.size == 0:
            break
        e = eta[active]
        ym = ymax[active]
        if start is not None:
            xi, f, d1, d2, dxi, d3 = _first_evaluation(x, t0, ymax, start)
            start = None
        else:  # the rows still iterating, read where they lie in ``x``
            xi, f, d1, d2, dxi, d3 = _evaluate(x, np.expm1(e) / ym, ym, active)
        iters[active] += 1
        fa = f_acc[active]
        bad = ~np.isfinite(f) | (f < fa - 1e-14 * np.abs(fa))
        if bad.any():
            # rejected step: halve it from the accepted point
            rb = active[bad]
            step[rb] *= 0.5
            eta[rb] = eta_acc[rb] + step[rb]
            status[rb[np.abs(step[rb]) < tol]] = STATUS_OK
        good = ~bad
        if good.any():
            rg = active[good]
            eg, ym_g = e[good], ym[good]
            f_acc[rg], xi_acc[rg], eta_acc[rg] = f[good], xi[good], eg
            jac = np.exp(eg) / ym_g
            dxi_deta = dxi[good] * jac
            g1 = d1[good] * jac
            g2 = d2[good] * jac * jac + d1[good] * jac
            # dⁿt/dηⁿ = jac for every n: f‴ in η by the chain rule
            g3 = (d3[good] * jac * jac + 3.0 * d2[good] * jac + d1[good]) * jac
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                s = np.where(g2 < 0, -g1 / g2, np.sign(g1) * 0.5)
                # Halley's step (cubic convergence) where f is concave and its correction to
                # Newton's step is a factor in (0, 2)
                denom = 2.0 * g2 * g2 - g1 * g3
                halley = (g2 < 0) & np.isfinite(g3) & (denom > g2 * g2)
                s = np.where(halley, -2.0 * g1 * g2 / denom, s)
            s = np.clip(np.nan_to_num(s), -_MAX_STEP, _MAX_STEP)
            # a Newton step below √tol (a Halley step below ∛tol / 10: its error's constant is
            # large) leaves an error ~step² (~step³) < tol after it is taken, so the last step is
            # applied to first order without another pass over the data
            small = np.where(halley, 0.1 * np.cbrt(tol), math.sqrt(tol))
            done = (np.abs(s) < small) & (g2 < 0)
            step[rg] = s
            eta[rg] = np.clip(eg + s, _ETA_FLOOR - 1.0, _ETA_CEIL)
            if done.any():
                rd = rg[done]
                sd = s[done]
                eta_acc[rd] = eg[done] + sd
                xi_acc[rd] += dxi_deta[done] * sd
                f_acc[rd] += g1[done] * sd + 0.5 * g2[done] * sd * sd
            status[rg[done]] = STATUS_OK
            # running into the support boundary: no interior maximum on this side
            status[rg[(~done) & (eg + s < _ETA_FLOOR)]] = STATUS_BOUNDARY
        active = active[status[active] == STATUS_NO_CONVERGENCE]
    t_acc = np.expm1(eta_acc) / ymax
    # an interior maximum needs ξ > −1; the likelihood is unbounded for ξ ≤ −1
    status[(status == STATUS_OK) & ~(xi_acc > -1.0)] = STATUS_BOUNDARY
    return NewtonResult(t_acc, xi_acc, f_acc, status, iters)
