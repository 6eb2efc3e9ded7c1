"""The discretised (interval-censored) GPD likelihood for scores on a lattice (methods note P10).

Scores on a lattice of step h (an LLM judge's 1–10 grades, Likert items, counts) are a latent
continuous score rounded to the nearest lattice point. Fitting the continuous GPD density of
Eq. 1 of Zhou (2026) to rounded exceedances biases ξ̂ downwards by up to the whole Δfloor
(ξ = 0.2, h = σ/2: ξ̂ ≈ 0.165; h = σ: 0.10; for ξ < 0 away from zero). Following Ma, Yan &
Zhang (2026, Section 2: the interval-censored MLE for rounded data) and Hitz, Davis &
Samorodnitsky (2024, Journal of Data Science: the discrete generalised Pareto law), each value
contributes the probability mass of its cell:

* the threshold t lies half-way between two lattice points (:func:`exceedances`), so the
  exceedances y = x − t lie on (k + ½)h, k = 0, 1, …, and the value (k + ½)h stands for the latent
  excess in the cell [kh, (k + 1)h);
* ℓ(ξ, σ) = Σ_k c_k log[S(kh) − S((k + 1)h)], S(z) = (1 + ξz/σ)^(−1/ξ) the GPD survival function,
  c_k the number of exceedances in cell k.

The likelihood is bounded for every ξ (a probability mass is at most 1), so unlike the continuous
one it has no ξ ≤ −1 singularity; a converged maximum is reported with status ``ok`` whatever its ξ.

Computation. A sample is held as counts over *groups*: every cell that holds a value is a group
of width 1, the empty runs between them are single groups, and the run beyond the largest value
is the "rest"; the likelihood only needs the cells with values, and the groups give a positive
definite expected information for Fisher scoring (in (ξ, log σ), step-halving whenever a step
lowers the likelihood), vectorised over rows (bootstrap replicates, simulated samples) that share
the group boundaries. Near ξ = 0, log S and its derivatives are evaluated by their power series.

Cells of a transformed lattice. A monotone transform T of lattice scores (the logit of
probability grades) keeps every score in its cell but makes the cells unequal: a score r of the
lattice stands for the latent score in [r − h/2, r + h/2], which is [T(r − h/2), T(r + h/2)] on
the analysed scale. :class:`Cells` holds such a lattice (step h of the scores' own scale, T the
logit after the registered clipping to [ε, 1 − ε], so the bounds beyond 0 and 1 are the clipped
ones) and the threshold t = T(b), b half a step below a lattice value; cell k of the exceedances
is [T(b + kh) − t, T(b + (k + 1)h) − t), and above the cell of the top grade (whose upper bound
is clipped to T(1 − ε)) one more cell reaches to ∞ (only simulated samples reach it). Every
function here that takes a ``step`` takes a :class:`Cells` as well; a number is the lattice of
equal cells [kh, (k + 1)h) and keeps its own arithmetic, so the fits of evenly spaced scores are
those of equal cells, bit for bit.

A censored top grade. A capped scale (a judge's 10 on a 1–10 grid, a clipped score) piles the
latent scores beyond its top grade c onto c: a value at c says only that the latent score is at
least c − h/2. With the registered ``protocol.thresholds.ceiling`` c, :class:`Cells` with
``ceiling`` c makes the ceiling's cell right-censored, [bound of c's cell, ∞), contributing
S(lower bound) to ℓ (Klein & Moeschberger 2003, Section 3.5: right-censored observations in a
likelihood); no cell lies above it, so simulated samples (:func:`sample_cells`) pile up at c the
same way. ``epsilon`` None is the scores' own scale (no transform), used with a ceiling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tailgate.lazy import lazy_module

#: logit and its inverse for the cells of a transformed lattice (loaded with the first of them)
special = lazy_module("scipy.special")

__all__ = [
    "LATTICE_TOLERANCE",
    "MAX_GROUPS",
    "PILE_UP",
    "Cells",
    "Groups",
    "LatticeExceedances",
    "RowFit",
    "ceiling_problem",
    "cells_of",
    "detect_step",
    "exceedances",
    "excesses",
    "fit_groups",
    "groups_of",
    "loglik_groups",
    "moment_start",
    "pile_up",
    "profile_groups",
    "sample_cells",
    "score_info",
    "terms",
    "to_dict",
]

#: relative tolerance (in units of the step) for a value to count as a lattice point
LATTICE_TOLERANCE = 1e-6
#: most distinct cells a lattice fit accepts (a finer "lattice" is continuous data in practice)
MAX_GROUPS = 200_000
_SERIES = 1e-4
_MAX_ITER = 200


# -- the lattice -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Cells:
    """A lattice of step ``step`` on the scores' own scale analysed on the logit scale (scores
    clipped to [``epsilon``, 1 − ``epsilon``] first; ``epsilon`` None: analysed on their own
    scale), with the threshold half a step below a lattice value at ``base`` (on the scores' own
    scale): the cells of the exceedances are unequal on the analysed scale; ``ceiling``: the
    capped top grade, whose cell is right-censored (module docstring)."""

    step: float
    epsilon: float | None
    base: float = 0.0
    ceiling: float | None = None

    def __post_init__(self) -> None:
        if self.epsilon is None and self.ceiling is None:
            raise ValueError("cells on the scores' own scale need a ceiling (else: a step)")

    def at(self, base: float) -> Cells:
        """The same lattice with the threshold at ``base``."""
        return replace(self, base=float(base))

    def analysed(self, r: np.ndarray | float) -> np.ndarray:
        """T(r): the analysed-scale value of the scores' own value ``r`` (clipped first)."""
        if self.epsilon is None:
            return np.asarray(r, dtype=np.float64)
        return special.logit(np.clip(r, self.epsilon, 1.0 - self.epsilon))

    def own(self, z: np.ndarray) -> np.ndarray:
        """The scores' own values of analysed values ``z``; a value on the clip stands for the
        end of the scale it was clipped from (0 or 1)."""
        z = np.asarray(z, dtype=np.float64)
        if self.epsilon is None:
            return z
        lo, hi = self.analysed(np.array([0.0, 1.0]))
        tol = 1e-9 * max(1.0, float(hi))
        return np.where(z >= hi - tol, 1.0, np.where(z <= lo + tol, 0.0, special.expit(z)))

    @property
    def threshold(self) -> float:
        """t = T(base), the threshold on the analysed scale."""
        return float(self.analysed(self.base))

    def bounds(self, k: np.ndarray) -> np.ndarray:
        """The lower bounds of cells ``k`` less the threshold (∞ above the cell beyond the top,
        and above the ceiling's censored cell)."""
        r = self.base + np.asarray(k) * self.step
        z = self.analysed(r) - self.threshold
        beyond = np.zeros(np.shape(r), dtype=bool)
        if self.epsilon is not None:
            beyond |= r - self.step >= 1.0 - self.epsilon
        if self.ceiling is not None:  # r lies h/2 above the ceiling past its cell
            beyond |= r > self.ceiling
        return np.where(beyond, np.inf, z)

    def finite_bounds(self) -> np.ndarray:
        """The finite lower bounds of cells 1, 2, …, up to that of the cell beyond the top (or
        of the ceiling's cell)."""
        top = (1.0 - self.epsilon) if self.epsilon is not None else math.inf
        if self.ceiling is not None:
            top = min(top, self.ceiling)
        last = max(1, math.ceil((top - self.base) / self.step)) + 2
        b = self.bounds(np.arange(1, last + 1))
        return b[np.isfinite(b)]

    def cells_of(self, y: np.ndarray) -> np.ndarray:
        """Cell index of every exceedance ``y`` (analysed value less the threshold); −1 where
        its own value is not a lattice point above the threshold."""
        r = self.own(np.asarray(y, dtype=np.float64) + self.threshold)
        kf = (r - self.base) / self.step - 0.5
        k = np.round(kf)
        off = np.abs(kf - k) > 1e3 * LATTICE_TOLERANCE
        if self.ceiling is not None:  # above the ceiling: no cell of this lattice
            off |= r > self.ceiling + 0.5 * self.step
        return np.where(off | (k < 0) | ~np.isfinite(y), -1, k).astype(np.int64)

    def excesses(self, x: np.ndarray) -> np.ndarray:
        """The values of ``x`` whose own value lies above ``base``, less the threshold."""
        return x[self.own(x) > self.base] - self.threshold


#: a lattice: its step (equal cells) or its :class:`Cells`
Lattice = float | Cells


def step_of(step: Lattice) -> float:
    """The step of a lattice on the scores' own scale."""
    return step.step if isinstance(step, Cells) else float(step)


def detect_step(x: np.ndarray, *, max_levels: int = MAX_GROUPS) -> float | None:
    """The lattice step of ``x``: the largest h such that every value is a + k·h (integer k), found
    as the smallest gap between distinct values when every gap is a whole multiple of it (within
    :data:`LATTICE_TOLERANCE`); None for continuous data (or fewer than two distinct values,
    or more than ``max_levels`` lattice points between the smallest and largest value)."""
    x = np.asarray(x, dtype=np.float64)
    v = np.unique(x[np.isfinite(x)])
    if v.size < 2:
        return None
    gaps = np.diff(v)
    h = float(gaps.min())
    if h <= 0 or (v[-1] - v[0]) / h > max_levels:
        return None
    k = gaps / h
    if np.max(np.abs(k - np.round(k))) > 1e3 * LATTICE_TOLERANCE:
        return None
    # refine h from the whole range (the smallest gap carries the most rounding error)
    span = round(float((v[-1] - v[0]) / h))
    return float((v[-1] - v[0]) / span) if span > 0 else h


def ceiling_problem(x: np.ndarray, step: float, ceiling: float) -> str | None:
    """Why scores ``x`` (on their own scale, on the lattice of ``step``, larger worse) cannot
    have the censored ``ceiling``, or None: a score beyond it, or a ceiling that is not a point
    of their lattice."""
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    tol = 1e3 * LATTICE_TOLERANCE * step
    beyond = int(np.count_nonzero(x > ceiling + tol))
    if beyond:
        return f"{beyond} score(s) lie beyond protocol.thresholds.ceiling"
    k = (ceiling - x.max()) / step if x.size else 0.0
    if abs(k - round(k)) * step > tol:
        return f"protocol.thresholds.ceiling is not a point of the scores' lattice of step {step:g}"
    return None


#: share of the exceedances at the largest value from which :func:`pile_up` reports a pile-up
PILE_UP = 0.05


def pile_up(x: np.ndarray, q: float) -> float | None:
    """The share of the exceedances of the ``q``-quantile that sit at the largest value of ``x``
    where they pile up there (more values than at the next lower one, and at least
    :data:`PILE_UP` of the exceedances), else None: the mark of a capped top grade, which only
    advises registering ``protocol.thresholds.ceiling`` (what is registered is what runs)."""
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    v, c = np.unique(x, return_counts=True)
    if v.size < 3:
        return None
    share = c[-1] / max(1, np.count_nonzero(x >= np.quantile(x, q)))
    return float(share) if c[-1] > c[-2] and share >= PILE_UP else None


def _lattice_point_at_or_above(x: np.ndarray, u: float, step: float) -> float | None:
    above = x[x >= u - LATTICE_TOLERANCE * step]
    return None if above.size == 0 else float(above.min())


@dataclass(frozen=True, eq=False)
class LatticeExceedances:
    """Threshold t between lattice points and the exceedances y = x[x > t] − t on (k + ½)h
    (``step`` a number), or in the cells of ``step`` (a :class:`Cells` at this threshold)."""

    q: float
    u: float
    n: int
    y: np.ndarray
    step: Lattice
    quantile_value: float

    @property
    def n_exc(self) -> int:
        return int(self.y.size)

    @property
    def cells(self) -> np.ndarray:
        return cells_of(self.y, self.step)


def exceedances(x: np.ndarray, q: float, step: Lattice) -> LatticeExceedances:
    """Exceedances of the ``q``-quantile on a lattice of ``step`` (registered rule ``lattice``).

    The empirical q-quantile (numpy "linear") is rounded up to the nearest value of the sample on
    or above it, x_q; the threshold is t = x_q − h/2, so every value ≥ x_q (those tied at x_q
    too) is an exceedance and each exceedance is a cell midpoint (k + ½)h. On :class:`Cells` the
    threshold is T(r_q − h/2), r_q the own value of x_q, and the result's ``step`` holds it.
    Where the GPD holds only from the latent q-quantile, the tied cell's part below it biases
    ξ̂ down (−0.03 at h = σ/2, −0.05 to −0.08 at h = σ); leaving the tied values out halves
    that but loses a third of the exceedances, a larger mean square error (methods note P10).
    """
    x = np.asarray(x, dtype=np.float64)
    uq = float(np.quantile(x, q))
    if isinstance(step, Cells):
        own = step.own(x[x >= uq - LATTICE_TOLERANCE * step.step])
        cells = step.at(float(own.min()) - 0.5 * step.step)
        return LatticeExceedances(float(q), cells.threshold, x.size, cells.excesses(x), cells, uq)
    xq = _lattice_point_at_or_above(x, uq, step)
    if xq is None:  # cannot happen for q < 1; kept for safety
        return LatticeExceedances(float(q), uq, int(x.size), x[:0], step, uq)
    t = xq - 0.5 * step
    return LatticeExceedances(float(q), t, int(x.size), excesses(x, t, step), float(step), uq)


def excesses(x: np.ndarray, t: float, step: Lattice) -> np.ndarray:
    """The values of ``x`` above the threshold ``t`` half a step below a lattice value, less
    ``t``, snapped to the exact cell midpoints (k + ½)h (removes the rounding noise of x − t);
    on :class:`Cells`, the values above its own threshold (``t`` is its ``threshold``)."""
    if isinstance(step, Cells):
        return step.excesses(x)
    y = x[x > t] - t
    return (np.round(y / step - 0.5) + 0.5) * step


def cells_of(y: np.ndarray, step: Lattice) -> np.ndarray:
    """Cell index k of every exceedance y ≈ (k + ½)h (or in cell k of :class:`Cells`); −1 where
    y is not such a midpoint."""
    if isinstance(step, Cells):
        return step.cells_of(y)
    y = np.asarray(y, dtype=np.float64)
    k = np.round(y / step - 0.5)
    off = np.abs(y / step - 0.5 - k) > 1e3 * LATTICE_TOLERANCE
    return np.where(off | (k < 0) | ~np.isfinite(y), -1, k).astype(np.int64)


# -- groups of cells ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Groups:
    """Group boundaries ``edges`` (cell units, 0 = e_0 < e_1 < … < e_G; group g = [e_g, e_{g+1}),
    the rest [e_G, ∞)) and the counts of every row in the G finite groups."""

    edges: np.ndarray
    counts: np.ndarray  # (rows, G) float
    step: Lattice

    @property
    def n(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @property
    def positions(self) -> np.ndarray:
        """The edges on the analysed scale, less the threshold (∞ beyond the top cell)."""
        if isinstance(self.step, Cells):
            return self.step.bounds(self.edges)
        return self.edges * self.step

    @property
    def top(self) -> float:
        """The largest finite edge on the analysed scale."""
        p = self.positions
        return p[-1] if np.isfinite(p[-1]) else p[-2]

    @property
    def unit(self) -> float:
        """A length of the scale: the step, or the width of the lowest cell of :class:`Cells`."""
        return float(self.step.bounds(1)) if isinstance(self.step, Cells) else self.step


def groups_of(cells: Sequence[np.ndarray] | np.ndarray, step: Lattice) -> Groups:
    """Groups over the union of the rows' cells, with every row's counts (rows: int arrays)."""
    rows = [np.asarray(c, dtype=np.int64) for c in cells]
    allc = np.unique(np.concatenate(rows)) if rows else np.zeros(0, dtype=np.int64)
    edges = np.unique(np.concatenate([[0], allc, allc + 1]))
    counts = np.zeros((len(rows), edges.size - 1))
    for i, c in enumerate(rows):
        g = np.searchsorted(edges, c, side="right") - 1
        counts[i] = np.bincount(g, minlength=edges.size - 1)
    return Groups(edges, counts, step if isinstance(step, Cells) else float(step))


def terms(
    xi: np.ndarray, s: np.ndarray, z: np.ndarray, deriv: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """S(z), ∂S/∂ξ and ∂S/∂(log σ) for every row (ξ_r, log σ_r) at the points z (shape (M,));
    0 at z = ∞."""
    if not np.all(np.isfinite(z)):
        at_inf = ~np.isfinite(z)
        out = terms(xi, s, np.where(at_inf, 0.0, z), deriv)
        return tuple(None if v is None else np.where(at_inf, 0.0, v) for v in out)  # type: ignore[return-value]
    x = xi[:, None]
    u = z[None, :] / np.exp(s)[:, None]
    w = x * u
    inside = w > -1.0
    wi = np.where(inside, w, 0.0)
    small = np.abs(wi) < _SERIES
    with np.errstate(divide="ignore", invalid="ignore"):
        l1w = np.log1p(wi)
        ratio = np.where(
            small, 1.0 - wi * (0.5 - wi * (1.0 / 3 - wi * (0.25 - 0.2 * wi))), l1w / wi
        )
        log_s = -u * ratio
        s_val = np.where(inside, np.exp(log_s), 0.0)
        if not deriv:
            return s_val, None, None
        d_s = u / (1.0 + wi)
        phi_series = 0.5 - wi * (2.0 / 3 - wi * (0.75 - wi * (0.8 - wi * 5.0 / 6)))
        phi = np.where(small, phi_series, l1w / wi**2 - 1.0 / (wi * (1.0 + wi)))
        d_x = u * u * phi
    ds_xi = np.where(inside, s_val * d_x, 0.0)
    ds_s = np.where(inside, s_val * d_s, 0.0)
    return s_val, ds_xi, ds_s


def _ll_rows(
    g: Groups, xi: np.ndarray, s: np.ndarray, rows: np.ndarray | None = None
) -> np.ndarray:
    c = g.counts if rows is None else g.counts[rows]
    sv, _, _ = terms(xi, s, g.positions, False)
    p = sv[:, :-1] - sv[:, 1:]
    with np.errstate(divide="ignore"):
        lp = np.log(np.where(c > 0, p, 1.0))
    lp = np.where(c > 0, lp, 0.0)
    out = np.sum(c * lp, axis=1)
    return np.where(np.isnan(out), -np.inf, out)


def loglik_groups(g: Groups, xi: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """The discretised log-likelihood of every row at (ξ_r, σ_r)."""
    return _ll_rows(g, np.asarray(xi, float), np.log(np.asarray(sigma, float)))


def _score_info_raw(
    g: Groups, xi: np.ndarray, s: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Score (r, 2) and expected information (r, 2, 2) of the grouped multinomial in (ξ, log σ)."""
    c = g.counts[rows]
    n = c.sum(axis=1)
    sv, sx, ss = terms(xi, s, g.positions, True)
    p = sv[:, :-1] - sv[:, 1:]
    dpx = sx[:, :-1] - sx[:, 1:]
    dps = ss[:, :-1] - ss[:, 1:]
    # the rest [e_G, ∞): probability S(e_G)
    p = np.concatenate([p, sv[:, -1:]], axis=1)
    dpx = np.concatenate([dpx, sx[:, -1:]], axis=1)
    dps = np.concatenate([dps, ss[:, -1:]], axis=1)
    cc = np.concatenate([c, np.zeros((c.shape[0], 1))], axis=1)
    pos = p > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(pos, 1.0 / np.where(pos, p, 1.0), 0.0)
    w = cc * inv
    score = np.stack([np.sum(w * dpx, axis=1), np.sum(w * dps, axis=1)], axis=1)
    ixx = n * np.sum(dpx * dpx * inv, axis=1)
    ixs = n * np.sum(dpx * dps * inv, axis=1)
    iss = n * np.sum(dps * dps * inv, axis=1)
    info = np.stack([np.stack([ixx, ixs], -1), np.stack([ixs, iss], -1)], -2)
    return score, info


def score_info(
    g: Groups, xi: np.ndarray, s: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Score (r, 2) and expected information (r, 2, 2) of the grouped multinomial in (ξ, log σ);
    cells of vanishing probability (far in a heavy tail, beyond a bounded one) give NaN or
    infinite terms, which the fit treats as a failed step, without floating-point warnings."""
    with np.errstate(all="ignore"):
        return _score_info_raw(g, xi, s, rows)


#: relative step of the central differences of the score (the observed information)
_FD_STEP = 1e-5


def _newton_information(
    g: Groups, xi: np.ndarray, s: np.ndarray, rows: np.ndarray, info: np.ndarray, fixed: bool
) -> np.ndarray:
    """The observed information −∂²ℓ (central differences of the analytic score) where it is
    positive definite, else the expected information ``info``: Newton steps near the maximum
    (Fisher scoring alone converges only linearly where the two differ, e.g. on a few cells)."""
    e = _FD_STEP
    sp, _ = score_info(g, xi, s + e, rows)
    sm, _ = score_info(g, xi, s - e, rows)
    obs = np.empty_like(info)
    with np.errstate(all="ignore"):
        obs[:, :, 1] = -(sp - sm) / (2 * e)
    if fixed:
        ok = np.isfinite(obs[:, 1, 1]) & (obs[:, 1, 1] > 0)
        out = info.copy()
        out[ok, 1, 1] = obs[ok, 1, 1]
        return out
    xp, _ = score_info(g, xi + e, s, rows)
    xm, _ = score_info(g, xi - e, s, rows)
    with np.errstate(all="ignore"):
        obs[:, :, 0] = -(xp - xm) / (2 * e)
        sym = 0.5 * (obs + np.swapaxes(obs, 1, 2))
        det = sym[:, 0, 0] * sym[:, 1, 1] - sym[:, 0, 1] ** 2
    ok = np.all(np.isfinite(sym), axis=(1, 2)) & (sym[:, 0, 0] > 0) & (det > 0)
    return np.where(ok[:, None, None], sym, info)


@dataclass(frozen=True, eq=False)
class RowFit:
    """Discretised-GPD fits of the rows of a :class:`Groups` (arrays of length r)."""

    xi: np.ndarray
    sigma: np.ndarray
    loglik: np.ndarray
    converged: np.ndarray
    iterations: np.ndarray


def moment_start(g: Groups) -> tuple[np.ndarray, np.ndarray]:
    """Moment estimates of (ξ, log σ) from the groups' midpoints, less Sheppard's correction."""
    n = g.n
    if isinstance(g.step, Cells):
        lo, hi = g.positions[:-1], g.positions[1:]
        hi = np.where(np.isfinite(hi), hi, lo)
        mid = 0.5 * (lo + hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            sheppard = g.counts @ ((hi - lo) ** 2) / n / 12.0
    else:
        mid = (g.edges[:-1] + 0.5 * (g.edges[1:] - g.edges[:-1])) * g.step
        sheppard = g.step**2 / 12.0
    with np.errstate(divide="ignore", invalid="ignore"):
        m = g.counts @ mid / n
        v = g.counts @ (mid * mid) / n - m * m - sheppard
        v = np.where(v > 0, v, m * m)
        xi0 = np.clip(0.5 * (1.0 - m * m / v), -0.4, 0.8)
        sig0 = 0.5 * m * (1.0 + m * m / v)
    return np.nan_to_num(xi0, nan=0.1), np.log(np.where(sig0 > 0, sig0, g.unit))


def fit_groups(
    g: Groups,
    xi0: np.ndarray | None = None,
    sigma0: np.ndarray | None = None,
    *,
    fixed_xi: bool = False,
    tol: float = 1e-10,
) -> RowFit:
    """Maximise the discretised likelihood of every row by Fisher scoring with step halving.

    ``fixed_xi``: keep ξ at ``xi0`` and maximise over σ only (the profile likelihood ℓ_p(ξ)).
    Rows whose start has likelihood −inf are restarted at ξ = 0.1 (unbounded support).
    """
    r = g.counts.shape[0]
    mx, ms = moment_start(g)
    xi = np.asarray(xi0, float).copy() if xi0 is not None else mx
    s = np.log(np.asarray(sigma0, float)) if sigma0 is not None else ms.copy()
    xi = np.broadcast_to(xi, (r,)).copy()
    s = np.broadcast_to(s, (r,)).copy()
    ll = _ll_rows(g, xi, s)
    bad = ~np.isfinite(ll)
    if bad.any():
        if not fixed_xi:
            xi[bad] = np.maximum(xi[bad], 0.1)
        s[bad] = np.maximum(s[bad], np.log(np.maximum(-xi[bad], 0.0) * g.top * 1.5 + g.unit))
        ll[bad] = _ll_rows(g, xi[bad], s[bad], np.flatnonzero(bad))
    done = ~np.isfinite(ll)
    conv = np.zeros(r, dtype=bool)
    iters = np.zeros(r, dtype=np.int64)
    for _ in range(_MAX_ITER):
        act = np.flatnonzero(~done)
        if act.size == 0:
            break
        iters[act] += 1
        score, info = score_info(g, xi[act], s[act], act)
        info = _newton_information(g, xi[act], s[act], act, info, fixed_xi)
        if fixed_xi:
            with np.errstate(divide="ignore", invalid="ignore"):
                step = np.stack([np.zeros(act.size), score[:, 1] / info[:, 1, 1]], 1)
        else:
            det = info[:, 0, 0] * info[:, 1, 1] - info[:, 0, 1] ** 2
            with np.errstate(divide="ignore", invalid="ignore"):
                dx = (info[:, 1, 1] * score[:, 0] - info[:, 0, 1] * score[:, 1]) / det
                ds = (info[:, 0, 0] * score[:, 1] - info[:, 0, 1] * score[:, 0]) / det
            step = np.stack([dx, ds], 1)
        step = np.where(np.isfinite(step), step, 0.0)
        with np.errstate(all="ignore"):
            decrement = np.sum(step * score, axis=1)
        # caps: |Δξ| ≤ 0.5, |Δ log σ| ≤ 1
        scale = np.minimum(
            1.0,
            np.minimum(0.5 / (np.abs(step[:, 0]) + 1e-300), 1.0 / (np.abs(step[:, 1]) + 1e-300)),
        )
        step *= scale[:, None]
        t = np.ones(act.size)
        new_ll = np.full(act.size, -np.inf)
        pending = np.ones(act.size, dtype=bool)
        for _h in range(60):
            idx = np.flatnonzero(pending)
            if idx.size == 0:
                break
            cand_x = xi[act[idx]] + t[idx] * step[idx, 0]
            cand_s = s[act[idx]] + t[idx] * step[idx, 1]
            val = _ll_rows(g, cand_x, cand_s, act[idx])
            ok = np.isfinite(val) & (val >= ll[act[idx]] - 1e-12 * np.abs(ll[act[idx]]))
            new_ll[idx[ok]] = val[ok]
            pending[idx[ok]] = False
            t[idx[~ok]] *= 0.5
        moved = ~pending
        a = act[moved]
        xi[a] += t[moved] * step[moved, 0]
        s[a] += t[moved] * step[moved, 1]
        old = ll[a].copy()
        ll[a] = new_ll[moved]
        small = (np.abs(decrement) < tol * np.maximum(1.0, np.abs(ll[act]))) | (
            np.max(np.abs(step), axis=1) < 1e-12
        )
        fin = act[small]
        conv[fin] = True
        done[fin] = True
        stuck = act[~moved]
        done[stuck] = True
        conv[stuck] = np.abs(decrement[~moved]) < 1e-6 * np.maximum(1.0, np.abs(ll[stuck]))
        # converged by a vanishing change in ℓ after a full step
        tiny = a[(np.abs(ll[a] - old) < 1e-13 * np.maximum(1.0, np.abs(old))) & (t[moved] == 1.0)]
        conv[tiny] = True
        done[tiny] = True
    return RowFit(xi, np.exp(s), ll, conv & np.isfinite(ll), iters)


def profile_groups(g: Groups, xi: np.ndarray, sigma0: float) -> np.ndarray:
    """ℓ_p(ξ) = max_σ ℓ(ξ, σ) of row 0 of ``g`` at every ξ of ``xi`` (NaN where no maximum)."""
    xi = np.atleast_1d(np.asarray(xi, float))
    rep = Groups(g.edges, np.broadcast_to(g.counts[:1], (xi.size, g.counts.shape[1])), g.step)
    # a start inside the support for ξ < 0: σ > −ξ·(upper edge of the top cell with a value)
    s0 = np.maximum(sigma0, np.maximum(-xi, 0.0) * g.top * 1.05 + 1e-3 * g.unit)
    f = fit_groups(rep, xi, s0, fixed_xi=True)
    return np.where(f.converged, f.loglik, np.nan)


def sample_cells(
    rng: np.random.Generator, xi: float, sigma: float, step: Lattice, size: tuple[int, int]
) -> np.ndarray:
    """Cells ⌊Y/h⌋ of draws Y from GPD(ξ, σ) (the discretised model's samples), as int64; on
    :class:`Cells`, the cell that holds Y."""
    e = -np.log(rng.random(size))
    y = e if abs(xi) < 1e-12 else np.expm1(xi * e) / xi
    if isinstance(step, Cells):
        return np.searchsorted(step.finite_bounds(), sigma * y, side="right").astype(np.int64)
    return np.floor(sigma * y / step).astype(np.int64)


def to_dict(step: Lattice, detected: bool) -> dict[str, Any]:
    """The lattice record of a fit (``step`` and whether it was detected or registered; for
    :class:`Cells`, the analysed scale's clipping ε of the logit, and the censored ceiling)."""
    if isinstance(step, Cells):
        out: dict[str, Any] = {"step": step.step, "detected": bool(detected)}
        if step.epsilon is not None:
            out.update(cells="logit", epsilon=step.epsilon)
        if step.ceiling is not None:
            out["censored_ceiling"] = step.ceiling
        return out
    return {"step": float(step), "detected": bool(detected)}
