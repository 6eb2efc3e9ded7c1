"""Scores on a lattice: its step, cells and thresholds (methods note P10).

Scores on a lattice of step h (an LLM judge's 1–10 grades, Likert items, counts) are a latent
continuous score rounded to the nearest lattice point. Fitting the continuous GPD density of
Eq. 1 of Zhou (2026) to rounded exceedances biases ξ̂ downwards by up to the whole Δfloor
(ξ = 0.2, h = σ/2: ξ̂ ≈ 0.165; h = σ: 0.10; for ξ < 0 away from zero). Following Ma, Yan &
Zhang (2026, Section 2: the interval-censored MLE for rounded data) and Hitz, Davis &
Samorodnitsky (2024, Journal of Data Science: the discrete generalised Pareto law), each value
contributes the probability mass of its cell (:mod:`tailgate.stats.lattice_likelihood`: the
likelihood, its fits and simulated samples). The threshold t lies half-way between two lattice
points (:func:`exceedances`), so the exceedances y = x − t lie on (k + ½)h, k = 0, 1, …, and the
value (k + ½)h stands for the latent excess in the cell [kh, (k + 1)h).

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
likelihood); no cell lies above it, so simulated samples
(:func:`tailgate.stats.lattice_likelihood.sample_cells`) pile up at c the same way. ``epsilon``
None is the scores' own scale (no transform), used with a ceiling.
"""

from __future__ import annotations

import math
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
    "LatticeExceedances",
    "ceiling_problem",
    "cells_of",
    "detect_step",
    "exceedances",
    "excesses",
    "pile_up",
    "to_dict",
]

#: relative tolerance (in units of the step) for a value to count as a lattice point
LATTICE_TOLERANCE = 1e-6
#: most distinct cells a lattice fit accepts (a finer "lattice" is continuous data in practice)
MAX_GROUPS = 200_000


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
    """The lattice step of ``x``: the largest h such that every value is a + k·h (integer k).

    Found as the smallest gap between distinct values when every gap is a whole multiple of it
    (within :data:`LATTICE_TOLERANCE`), then refined from the whole range.

    Parameters
    ----------
    x : numpy.ndarray
        The scores (non-finite values are ignored).
    max_levels : int, default MAX_GROUPS
        Most lattice points between the smallest and largest value.

    Returns
    -------
    float or None
        The step; None for continuous data (or fewer than two distinct values, or more than
        ``max_levels`` lattice points between the smallest and largest value).
    """
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
    """Why scores ``x`` cannot have the censored ``ceiling``, or None.

    Parameters
    ----------
    x : numpy.ndarray
        The scores on their own scale, on the lattice of ``step``, larger worse (non-finite
        values are ignored).
    step : float
        The lattice step.
    ceiling : float
        The registered ``protocol.thresholds.ceiling``.

    Returns
    -------
    str or None
        The problem: a score beyond the ceiling, or a ceiling that is not a point of the scores'
        lattice; None when there is none.
    """
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
    """The share of the exceedances of the ``q``-quantile that sit at the largest value of ``x``.

    Reported where they pile up there (more values than at the next lower one, and at least
    :data:`PILE_UP` of the exceedances): the mark of a capped top grade, which only advises
    registering ``protocol.thresholds.ceiling`` (what is registered is what runs).

    Parameters
    ----------
    x : numpy.ndarray
        The scores (non-finite values are ignored).
    q : float
        The threshold quantile; the exceedances are the values at or above it.

    Returns
    -------
    float or None
        The share; None where the values do not pile up (or ``x`` has fewer than three distinct
        values).
    """
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

    Parameters
    ----------
    x : numpy.ndarray
        The sample.
    q : float
        The threshold quantile.
    step : Lattice
        The lattice step h, or the :class:`Cells` of a transformed lattice.

    Returns
    -------
    LatticeExceedances
        The threshold t, the exceedances y (cell midpoints, or values in the cells), the lattice
        (the step, or the :class:`Cells` at this threshold) and the empirical q-quantile.
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
    """The values of ``x`` above the threshold ``t``, less ``t``, snapped to the cell midpoints.

    Snapping to the exact midpoints (k + ½)h removes the rounding noise of x − t.

    Parameters
    ----------
    x : numpy.ndarray
        The sample.
    t : float
        The threshold, half a step below a lattice value; on :class:`Cells`, its ``threshold``
        (the cells' own threshold is used).
    step : Lattice
        The lattice step h, or the :class:`Cells` at the threshold.

    Returns
    -------
    numpy.ndarray
        The exceedances: midpoints (k + ½)h, or on :class:`Cells` the values above its own
        threshold, less that threshold.
    """
    if isinstance(step, Cells):
        return step.excesses(x)
    y = x[x > t] - t
    return (np.round(y / step - 0.5) + 0.5) * step


def cells_of(y: np.ndarray, step: Lattice) -> np.ndarray:
    """Cell index k of every exceedance y ≈ (k + ½)h (or in cell k of :class:`Cells`).

    Parameters
    ----------
    y : numpy.ndarray
        The exceedances.
    step : Lattice
        The lattice step h, or the :class:`Cells` at the threshold.

    Returns
    -------
    numpy.ndarray
        The cell indices (int64, the shape of ``y``); −1 where y is not such a midpoint (or not
        finite, or below the threshold's cell).
    """
    if isinstance(step, Cells):
        return step.cells_of(y)
    y = np.asarray(y, dtype=np.float64)
    k = np.round(y / step - 0.5)
    off = np.abs(y / step - 0.5 - k) > 1e3 * LATTICE_TOLERANCE
    return np.where(off | (k < 0) | ~np.isfinite(y), -1, k).astype(np.int64)


def to_dict(step: Lattice, detected: bool) -> dict[str, Any]:
    """The lattice record of a fit.

    Parameters
    ----------
    step : Lattice
        The lattice step, or its :class:`Cells`.
    detected : bool
        Whether the step was detected in the data (else registered).

    Returns
    -------
    dict of str to Any
        ``step`` and ``detected``; for :class:`Cells`, also ``cells`` ("logit") and ``epsilon``
        (the analysed scale's clipping ε of the logit) where it has one, and
        ``censored_ceiling`` where it has a ceiling.
    """
    if isinstance(step, Cells):
        out: dict[str, Any] = {"step": step.step, "detected": bool(detected)}
        if step.epsilon is not None:
            out.update(cells="logit", epsilon=step.epsilon)
        if step.ceiling is not None:
            out["censored_ceiling"] = step.ceiling
        return out
    return {"step": float(step), "detected": bool(detected)}
