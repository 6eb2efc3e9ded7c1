"""The asymptotic s.e. of G5's side difference on a lattice, from the discretised model's expected
information: the reference the parametric bootstrap of
:func:`tailgate.stats.stability.bootstrap_difference_se` is measured against (it tends to Smith's
(1 + ξ)² on fine lattices and understates the spread at 100 exceedances)."""

from __future__ import annotations

import math

import numpy as np
from tailgate.stats import lattice, lattice_likelihood


def lattice_difference_se(
    xi: float,
    sigma: float,
    t_q: float,
    step: lattice.Lattice,
    side: float | lattice.Cells | None,
    n_q: int | None,
    n_side: int | None,
) -> float:
    """The s.e. of ξ̂(side) − ξ̂(q) on a lattice, at q's fit (ξ, σ) with threshold ``t_q`` and
    lattice ``step`` (q's cells), ``side`` the side's threshold (:func:`lattice_side_threshold`).

    Above a lattice threshold a discretised GPD is again one with the same ξ and σ + ξ·(t − t_q)
    (the cells of the side's threshold are lattice cells), so under a stable tail the side's and
    q's ξ̂ estimate one ξ from nested samples; the ML estimator of the larger sample is efficient,
    hence Var(ξ̂_small − ξ̂_large) = Var(ξ̂_small) − Var(ξ̂_large) (Hausman 1978, Lemma 2.1), each
    from the discretised model's information (:func:`lattice_xi_variance`). Fine lattices give
    :func:`side_difference_se`; coarse ones more, as the cells lose information on ξ. ∞ for q's
    own threshold (the same exceedances: the difference is 0), NaN without a side count.
    """
    if side is None or not n_q or not n_side:
        return math.nan
    t_side = side.threshold if isinstance(side, lattice.Cells) else float(side)
    if math.isclose(t_side, t_q, rel_tol=0.0, abs_tol=1e-9 * max(1.0, abs(t_q))):
        return math.inf
    v_q = lattice_xi_variance(xi, sigma, step) / n_q
    cells = side if isinstance(side, lattice.Cells) else step
    v_side = lattice_xi_variance(xi, sigma + xi * (t_side - t_q), cells) / n_side
    return math.sqrt(abs(v_side - v_q))


#: cells of :func:`lattice_xi_variance` taken one by one (beyond them: groups of equal mass)
_INFO_CELLS = 256


def lattice_xi_variance(xi: float, sigma: float, step: lattice.Lattice) -> float:
    """n·Var(ξ̂) of the discretised likelihood's ξ̂ from n exceedances of the discretised
    GPD(ξ, σ) on ``step``'s cells: the (ξ, ξ) element of the inverse expected information of
    one exceedance (every cell up to :data:`_INFO_CELLS`, beyond them the cells of survival
    levels 10⁻³ apart and then log-spaced to 10⁻¹⁴; all cells of
    :class:`tailgate.stats.lattice.Cells`). It tends to
    (1 + ξ)², the continuous value, as the step shrinks. NaN where the information is
    singular."""
    if not (math.isfinite(xi) and math.isfinite(sigma) and sigma > 0):
        return math.nan
    if isinstance(step, lattice.Cells):
        edges = np.arange(step.finite_bounds().size + 2)
    else:
        # group edges at the cells of survival levels 10⁻³ apart, then log-spaced to 10⁻¹⁴
        surv = np.concatenate([np.linspace(1.0, 0.0, 1001)[1:-1], np.logspace(-3, -14, 441)])
        z = -np.log(surv) if xi == 0 else np.expm1(-xi * np.log(surv)) / xi
        cells = np.ceil(np.minimum(sigma * z / float(step), 1e15))
        edges = np.unique(np.concatenate([np.arange(_INFO_CELLS + 1), cells])).astype(np.int64)
    counts = np.zeros((1, edges.size - 1))
    counts[0, 0] = 1.0
    g = lattice_likelihood.Groups(edges, counts, step)
    _, info = lattice_likelihood.score_info(
        g, np.array([xi]), np.array([math.log(sigma)]), np.array([0])
    )
    m = info[0]
    det = m[0, 0] * m[1, 1] - m[0, 1] ** 2
    if not (np.all(np.isfinite(m)) and det > 0 and m[0, 0] > 0):
        return math.nan
    return float(m[1, 1] / det)
