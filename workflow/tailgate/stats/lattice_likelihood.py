"""The discretised (interval-censored) GPD likelihood of exceedances on a lattice (methods note
P10 and Ma, Yan & Zhang (2026), Section 2): groups of cells, the log-likelihood with its score and
information, Fisher-scoring fits, the profile over ξ and simulated samples. The lattice, its
cells and thresholds are :mod:`tailgate.stats.lattice`.

Each exceedance contributes the probability mass of its cell: ℓ(ξ, σ) = Σ_k c_k log[S(kh) −
S((k + 1)h)], S(z) = (1 + ξz/σ)^(−1/ξ) the GPD survival function, c_k the number of exceedances
in cell k (on a transformed lattice or with a censored top grade, the cells of
:class:`tailgate.stats.lattice.Cells`).

The likelihood is bounded for every ξ (a probability mass is at most 1), so unlike the continuous
one it has no ξ ≤ −1 singularity; a converged maximum is reported with status ``ok`` whatever its ξ.

Computation. A sample is held as counts over *groups*: every cell that holds a value is a group
of width 1, the empty runs between them are single groups, and the run beyond the largest value
is the "rest"; the likelihood only needs the cells with values, and the groups give a positive
definite expected information for Fisher scoring (in (ξ, log σ), step-halving whenever a step
lowers the likelihood), vectorised over rows (bootstrap replicates, simulated samples) that share
the group boundaries. Near ξ = 0, log S and its derivatives are evaluated by their power series.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tailgate.stats.lattice import Cells, Lattice

__all__ = [
    "Groups",
    "RowFit",
    "fit_groups",
    "groups_of",
    "loglik_groups",
    "moment_start",
    "profile_groups",
    "sample_cells",
    "score_info",
    "terms",
]

_SERIES = 1e-4
_MAX_ITER = 200


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
    """Groups over the union of the rows' cells, with every row's counts.

    Parameters
    ----------
    cells : Sequence of numpy.ndarray or numpy.ndarray
        The cell indices of every row (int arrays).
    step : Lattice
        The lattice step, or its :class:`Cells`.

    Returns
    -------
    Groups
        Edges from 0 in cell units (every cell that holds a value a group of width 1), the counts
        of every row in every group (rows × G, float) and the lattice.
    """
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
    """S(z), ∂S/∂ξ and ∂S/∂(log σ) of the GPD for every row (ξ_r, log σ_r) at the points z.

    Near ξz/σ = 0, log S and its derivatives are evaluated by their power series; all three are 0
    at z = ∞ and outside the support (1 + ξz/σ ≤ 0).

    Parameters
    ----------
    xi : numpy.ndarray
        ξ of every row, shape (r,).
    s : numpy.ndarray
        log σ of every row, shape (r,).
    z : numpy.ndarray
        The points, shape (M,); ∞ allowed.
    deriv : bool
        Whether to compute the derivatives too.

    Returns
    -------
    s_val : numpy.ndarray
        S(z), shape (r, M).
    ds_xi : numpy.ndarray or None
        ∂S/∂ξ, shape (r, M); None unless ``deriv``.
    ds_s : numpy.ndarray or None
        ∂S/∂(log σ), shape (r, M); None unless ``deriv``.
    """
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
    """The discretised log-likelihood of every row at (ξ_r, σ_r).

    Parameters
    ----------
    g : Groups
        The rows' counts.
    xi : numpy.ndarray
        ξ_r, shape (r,).
    sigma : numpy.ndarray
        σ_r, shape (r,).

    Returns
    -------
    numpy.ndarray
        ℓ(ξ_r, σ_r) = Σ_g c_g log[S(e_g) − S(e_{g+1})] of every row, shape (r,); −inf where a
        group with values has no probability (or the value is NaN).
    """
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
    """Score (r, 2) and expected information (r, 2, 2) of the grouped multinomial in (ξ, log σ).

    Cells of vanishing probability (far in a heavy tail, beyond a bounded one) give NaN or
    infinite terms, which the fit treats as a failed step, without floating-point warnings.

    Parameters
    ----------
    g : Groups
        The groups and counts.
    xi : numpy.ndarray
        ξ of the rows, shape (r,).
    s : numpy.ndarray
        log σ of the rows, shape (r,).
    rows : numpy.ndarray
        The indices of the rows of ``g`` whose counts are used (int, shape (r,)).

    Returns
    -------
    score : numpy.ndarray
        ∂ℓ/∂ξ and ∂ℓ/∂(log σ) of every row, shape (r, 2).
    info : numpy.ndarray
        The expected information, shape (r, 2, 2), over the groups and the rest [e_G, ∞).
    """
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
    """Moment estimates of (ξ, log σ) from the groups' midpoints, less Sheppard's correction.

    Parameters
    ----------
    g : Groups
        The groups and counts (on :class:`Cells`, each group's own width enters the correction).

    Returns
    -------
    xi0 : numpy.ndarray
        ξ of every row, clipped to [−0.4, 0.8] (0.1 where the moments give none).
    log_sigma0 : numpy.ndarray
        log σ of every row (log of the lowest cell's width where the moments give no σ > 0).
    """
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

    Rows whose start has likelihood −inf are restarted at ξ = 0.1 (unbounded support). Steps use
    the observed information where it is positive definite, are capped at |Δξ| ≤ 0.5 and
    |Δ log σ| ≤ 1, and stop after 200 iterations.

    Parameters
    ----------
    g : Groups
        The rows' counts.
    xi0 : numpy.ndarray or None, default None
        The start of ξ (broadcast over the rows); None: :func:`moment_start`.
    sigma0 : numpy.ndarray or None, default None
        The start of σ (broadcast over the rows); None: :func:`moment_start`.
    fixed_xi : bool, default False
        Keep ξ at ``xi0`` and maximise over σ only (the profile likelihood ℓ_p(ξ)).
    tol : float, default 1e-10
        Convergence tolerance of a step's predicted increase, relative to max(1, |ℓ|).

    Returns
    -------
    RowFit
        ξ̂, σ̂, ℓ, whether converged (with a finite ℓ) and the iterations of every row.
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
    """ℓ_p(ξ) = max_σ ℓ(ξ, σ) of row 0 of ``g`` at every ξ of ``xi``.

    Parameters
    ----------
    g : Groups
        The groups and counts (row 0 is used).
    xi : numpy.ndarray
        The values of ξ.
    sigma0 : float
        The start of σ (raised into the support where ξ < 0).

    Returns
    -------
    numpy.ndarray
        ℓ_p at every ξ (1-D); NaN where no maximum was found.
    """
    xi = np.atleast_1d(np.asarray(xi, float))
    rep = Groups(g.edges, np.broadcast_to(g.counts[:1], (xi.size, g.counts.shape[1])), g.step)
    # a start inside the support for ξ < 0: σ > −ξ·(upper edge of the top cell with a value)
    s0 = np.maximum(sigma0, np.maximum(-xi, 0.0) * g.top * 1.05 + 1e-3 * g.unit)
    f = fit_groups(rep, xi, s0, fixed_xi=True)
    return np.where(f.converged, f.loglik, np.nan)


def sample_cells(
    rng: np.random.Generator, xi: float, sigma: float, step: Lattice, size: tuple[int, int]
) -> np.ndarray:
    """Cells ⌊Y/h⌋ of draws Y from GPD(ξ, σ): the discretised model's samples.

    Y is drawn by inversion from ``rng.random(size)``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The random stream.
    xi : float
        The shape ξ.
    sigma : float
        The scale σ.
    step : Lattice
        The lattice step h, or :class:`Cells`: the cell that holds Y.
    size : tuple of (int, int)
        The shape of the sample.

    Returns
    -------
    numpy.ndarray
        The cell index of every draw (int64, shape ``size``).
    """
    e = -np.log(rng.random(size))
    y = e if abs(xi) < 1e-12 else np.expm1(xi * e) / xi
    if isinstance(step, Cells):
        return np.searchsorted(step.finite_bounds(), sigma * y, side="right").astype(np.int64)
    return np.floor(sigma * y / step).astype(np.int64)
