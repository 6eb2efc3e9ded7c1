"""Threshold-stability scan ξ̂(u) and the G5 check (Section 6.3 and Fig. 3 of Zhou (2026)).

The scan fits the GPD above the empirical q-quantile for every q of a grid with at least
``min_exceedances`` exceedances (Fig. 3 uses n_exc ≥ 200), with a display CI at each point — the
registered ``intervals``: a percentile bootstrap, or the Wald interval ξ̂ ± z·s.e. from the
observed information, as in the parameter-stability plot of Coles (2001), Section 4.3.4 — and
summarises the scan by the median and standard deviation of ξ̂ over the interior fits
(the ±σ envelope of Fig. 3).

G5 asks that |ξ̂(q ± δ) − ξ̂(q)| < tolerance on both sides, with no data-dependent laxness:

* a side *beyond the data range* (q + δ ≥ 1 or q − δ ≤ 0) is structural. Under the registered
  edge rule ``one_sided`` (the paper's band 0.95–0.99 with δ = 0.02 needs it at q = 0.98, 0.99)
  the check uses the other side and says so; under ``fail`` G5 fails there;
* a side inside the range that has fewer exceedances than the registered minimum, or whose fit is
  not an interior maximum, makes G5 fail as *not testable* (it is never dropped: dropping it made
  G5 one-sided, hence laxer, exactly when data were scarce);
* with no side at all G5 fails.

Tolerance rules (``protocol.stability.tolerance_rule``): ``fixed`` (Zhou (2026)'s 0.05, the default)
or ``se``: ``se_multiplier`` × the asymptotic standard error of ξ̂(q ± δ) − ξ̂(q). For nested
exceedance sets (n_side exceedances inside n_q, or the reverse) the ML estimators' difference has
variance (1 + ξ)² |1/n_side − 1/n_q| (Smith 1987, the asymptotic of Eq. 2 of Zhou (2026) applied to
the nested samples, whose covariance equals the variance of the larger sample's estimator), so a
truly stable condition fails with a registered, n-free probability (measured at q = 0.97,
N = 30,000, exact exponential tail, 300 samples: the fixed 0.05 fails 37 %, 2 s.e. fails 10 %).
That variance is asymptotic; at 100–300 exceedances it understates the difference's spread
(ξ < 0 most), so the gate takes the s.e. from a parametric bootstrap of q's fit
(:func:`bootstrap_difference_se`; the fit stage records it as ``se_minus``/``se_plus``) and
falls back to :func:`side_difference_se` only for records written without it.

Lattice sides (the threshold rule ``lattice``): a side is the lattice threshold of q ± δ. An
upper side on q's own threshold moves one step up, where a discretised GPD is again one with
q's ξ; a lower side on q's own threshold stays there (it passes: the same exceedances), since
one step down leaves the registered band. The ``se`` rule's bootstrap draws the discretised
model's cells.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailgate.seeds import child_sequence
from tailgate.stats import gpd, inference, lattice, lattice_likelihood
from tailgate.stats.distributions import norm_ppf
from tailgate.stats.risk import exceedances, lattice_step_of

__all__ = [
    "EDGE_RULES",
    "SAME_THRESHOLD",
    "SCAN_INTERVALS",
    "SIDE_RESAMPLES",
    "TOLERANCE_RULES",
    "ScanPoint",
    "StabilityCheck",
    "StabilityScan",
    "bootstrap_difference_se",
    "lattice_side",
    "lattice_side_se",
    "lattice_side_threshold",
    "side_difference_se",
    "stability_check",
    "stability_scan",
]


#: the display intervals of the scan (``protocol.stability.intervals``)
SCAN_INTERVALS = ("bootstrap", "wald")


@dataclass(frozen=True)
class ScanPoint:
    """GPD fit above the empirical q-quantile, with its display CI for ξ."""

    q: float
    u: float
    n_exc: int
    xi: float
    sigma: float
    status: str
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in asdict(self).items()
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScanPoint:
        return cls(**{k: (math.nan if d[k] is None else d[k]) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class StabilityScan:
    """ξ̂(u) over a grid of quantiles with the per-condition median and std envelope."""

    points: tuple[ScanPoint, ...]
    median: float
    std: float
    level: float

    def xi_at(self, q: float) -> float:
        for p in self.points:
            if math.isclose(p.q, q, abs_tol=1e-9):
                return p.xi if p.status == "ok" else math.nan
        return math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": [p.to_dict() for p in self.points],
            "median": None if math.isnan(self.median) else self.median,
            "std": None if math.isnan(self.std) else self.std,
            "level": self.level,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StabilityScan:
        return cls(
            tuple(ScanPoint.from_dict(p) for p in d["points"]),
            math.nan if d["median"] is None else d["median"],
            math.nan if d["std"] is None else d["std"],
            d["level"],
        )


def stability_scan(
    x: np.ndarray,
    quantiles: Iterable[float],
    *,
    min_exceedances: int = 200,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: gpd.SeedLike = 0,
    workers: int | None = None,
    ties: str = "strict",
    step: lattice.Lattice | None = None,
    intervals: str = "bootstrap",
) -> StabilityScan:
    """Fit ξ̂(u) at every quantile with n_exc ≥ ``min_exceedances`` (Fig. 3 of Zhou (2026)).

    Parameters
    ----------
    x : numpy.ndarray
        Scores of one condition.
    quantiles : Iterable[float]
        The grid of q (the threshold u is the empirical q-quantile).
    min_exceedances : int, default 200
        Quantiles with fewer exceedances are left out.
    n_boot : int, default 1000
        Bootstrap resamples per point (``0`` skips the bootstrap CIs).
    level : float, default 0.95
        Level of the display CIs.
    seed : SeedLike, default 0
        Point k of the grid bootstraps from child k of ``seed``.
    workers : int or None, default None
        Threads that run each bootstrap (default: all cores); the result does not depend on it.
    ties : str, default "strict"
        The registered threshold rule for tied values (:func:`.risk.exceedances`).
    step : Lattice or None, default None
        Under ``ties="lattice"`` the fits and bootstraps use the discretised likelihood of this
        lattice (a step, or the :class:`tailgate.stats.lattice.Cells` of a transformed lattice;
        None: detected in ``x``).
    intervals : str, default "bootstrap"
        The display CIs (:data:`SCAN_INTERVALS`): ``bootstrap``, percentile bootstrap; ``wald``,
        ξ̂ ± z·s.e. from the observed information (NaN where the fit is not an interior maximum
        or the information is singular).

    Returns
    -------
    StabilityScan
        The points fitted (NaN CI where none is computed), and the median and standard deviation
        (ddof 1) of ξ̂ over the ``ok`` points (NaN without enough of them).

    Raises
    ------
    ValueError
        If ``intervals`` is not one of :data:`SCAN_INTERVALS`.

    References
    ----------
    Zhou (2026), Section 6.3, Fig. 3.
    Coles (2001), Section 4.3.4 (``intervals="wald"``).
    """
    if intervals not in SCAN_INTERVALS:
        raise ValueError(f"intervals must be one of {SCAN_INTERVALS}, got {intervals!r}")
    lattice_step = lattice_step_of(x, step) if ties == "lattice" else None
    ss = gpd.seed_sequence_of(seed)
    z = float(norm_ppf(0.5 + level / 2))
    pts = []
    for k, q in enumerate(quantiles):
        ex = exceedances(x, float(q), ties, lattice_step)
        if ex.n_exc < min_exceedances:
            continue
        f = gpd.fit(ex.y, ex.step)
        lo = hi = math.nan
        if intervals == "wald":
            se = inference.observed_information(ex.y, f, step=ex.step).se_xi
            lo, hi = f.xi - z * se, f.xi + z * se
        elif n_boot > 0 and f.status in ("ok", "boundary"):
            child = child_sequence(ss, k)
            boot = gpd.bootstrap(ex.y, n_boot, child, full_fit=f, workers=workers, step=ex.step)
            lo, hi = boot.ci(level)
        pts.append(ScanPoint(float(q), ex.u, ex.n_exc, f.xi, f.sigma, f.status, lo, hi))
    ok = np.array([p.xi for p in pts if p.status == "ok"])
    med = float(np.median(ok)) if ok.size else math.nan
    std = float(np.std(ok, ddof=1)) if ok.size > 1 else math.nan
    return StabilityScan(tuple(pts), med, std, float(level))


#: G5 edge rules: a side beyond (0, 1) is dropped (one-sided check) or fails the gate
EDGE_RULES = ("one_sided", "fail")
#: G5 tolerance rules: Zhou (2026)'s fixed tolerance, or a multiple of the difference's s.e.
TOLERANCE_RULES = ("fixed", "se")


def side_difference_se(xi: float, n_q: int, n_side: int) -> float:
    """Asymptotic s.e. of ξ̂(q ± δ) − ξ̂(q) for nested exceedance sets: (1 + ξ)·√|1/n_side − 1/n_q|.

    For ξ̂ below −1/2 the Smith asymptotic does not hold; (1 + ξ) is then floored at 1/2.

    Parameters
    ----------
    xi : float
        ξ̂(q).
    n_q : int
        Exceedances at q.
    n_side : int
        Exceedances at the side q ± δ.

    Returns
    -------
    float
        The s.e.; NaN when a count is not positive or ``xi`` is not finite.

    References
    ----------
    Smith (1987); Zhou (2026), Eq. 2.
    """
    if n_q <= 0 or n_side <= 0 or not math.isfinite(xi):
        return math.nan
    return max(1.0 + xi, 0.5) * math.sqrt(abs(1.0 / n_side - 1.0 / n_q))


@dataclass(frozen=True)
class StabilityCheck:
    """G5 at threshold q for one condition: deviations of ξ̂ at q − δ and q + δ from ξ̂(q).

    ``xi_minus``/``xi_plus``: None for a side beyond the data range (structural), NaN for a side
    inside the range that is not testable (too few exceedances or no interior fit). ``tol_minus``
    and ``tol_plus`` are the tolerances each side is held to (the fixed tolerance, or the
    registered multiple of the side's s.e.).
    """

    q: float
    delta: float
    tolerance: float
    xi: float
    xi_minus: float | None
    xi_plus: float | None
    edge: str = "one_sided"
    tol_minus: float | None = None
    tol_plus: float | None = None

    def _sides(self) -> list[tuple[str, float | None, float]]:
        return [
            ("minus", self.xi_minus, self.tolerance if self.tol_minus is None else self.tol_minus),
            ("plus", self.xi_plus, self.tolerance if self.tol_plus is None else self.tol_plus),
        ]

    @property
    def deviation(self) -> float:
        devs = [abs(v - self.xi) for _, v, _ in self._sides() if v is not None]
        if not devs or not math.isfinite(self.xi) or any(not math.isfinite(d) for d in devs):
            return math.inf
        return max(devs)

    @property
    def sides(self) -> tuple[str, ...]:
        """The sides inside the data range (tested, or failing as not testable)."""
        return tuple(s for s, v, _ in self._sides() if v is not None)

    @property
    def not_testable(self) -> tuple[str, ...]:
        """Sides inside the data range without a usable ξ̂ (too few exceedances or no fit)."""
        return tuple(s for s, v, _ in self._sides() if v is not None and not math.isfinite(v))

    @property
    def structural(self) -> tuple[str, ...]:
        """Sides beyond the data range (q ± δ outside (0, 1))."""
        return tuple(s for s, v, _ in self._sides() if v is None)

    @property
    def passed(self) -> bool:
        if not math.isfinite(self.xi) or not self.sides or self.not_testable:
            return False
        if self.structural and self.edge == "fail":
            return False
        # a NaN tolerance (an s.e. that cannot be computed) fails the comparison
        return all(abs(v - self.xi) < tol for _, v, tol in self._sides() if v is not None)

    def describe(self) -> str:
        """One line: which sides were tested and why any was not."""
        parts = []
        for s, v, tol in self._sides():
            if v is None:
                parts.append(f"{s} beyond the data range ({self.edge})")
            elif not math.isfinite(v):
                parts.append(f"{s} not testable (no ξ̂ at q {s} δ)")
            elif not math.isfinite(self.xi):
                parts.append(f"{s} not testable (no ξ̂ at q)")
            else:
                parts.append(f"{s} |Δ| {abs(v - self.xi):.3g} vs {tol:.3g}")
        return ", ".join(parts)


def stability_check(
    xi_q: float,
    xi_minus: float | None,
    xi_plus: float | None,
    *,
    q: float,
    delta: float,
    tolerance: float,
    edge: str = "one_sided",
    rule: str = "fixed",
    se_multiplier: float = 2.0,
    n_q: int | None = None,
    n_minus: int | None = None,
    n_plus: int | None = None,
    se_minus: float | None = None,
    se_plus: float | None = None,
) -> StabilityCheck:
    """G5 of Zhou (2026) under the registered edge and tolerance rules (module docstring).

    Parameters
    ----------
    xi_q : float
        ξ̂(q).
    xi_minus, xi_plus : float or None
        ξ̂(q − δ) and ξ̂(q + δ): None beyond the data range, NaN when not testable.
    q : float
        The threshold quantile.
    delta : float
        The distance δ of the sides.
    tolerance : float
        The fixed tolerance (rule ``fixed``).
    edge : str, default "one_sided"
        The edge rule (:data:`EDGE_RULES`).
    rule : str, default "fixed"
        The tolerance rule (:data:`TOLERANCE_RULES`).
    se_multiplier : float, default 2.0
        Under ``rule="se"``, each side's tolerance is this multiple of its s.e.
    n_q, n_minus, n_plus : int or None, default None
        Exceedance counts: under ``rule="se"`` a side's s.e. is :func:`side_difference_se` of
        them (NaN without them).
    se_minus, se_plus : float or None, default None
        A side's s.e. where given, used instead of the counts (the fit stage's
        :func:`bootstrap_difference_se`).

    Returns
    -------
    StabilityCheck
        The sides and the tolerances each is held to; its ``passed`` is G5's decision.

    Raises
    ------
    ValueError
        If ``edge`` or ``rule`` is not a registered rule.

    References
    ----------
    Zhou (2026), Section 6.3.
    """
    if edge not in EDGE_RULES:
        raise ValueError(f"G5 edge rule must be one of {EDGE_RULES}, got {edge!r}")
    if rule not in TOLERANCE_RULES:
        raise ValueError(f"G5 tolerance rule must be one of {TOLERANCE_RULES}, got {rule!r}")
    tol_minus = tol_plus = None
    if rule == "se":

        def tol(n_side: int | None, se: float | None) -> float:
            if se is not None:
                return float(se_multiplier) * float(se)
            if n_q is None or n_side is None:
                return math.nan
            return float(se_multiplier) * side_difference_se(float(xi_q), int(n_q), int(n_side))

        tol_minus, tol_plus = tol(n_minus, se_minus), tol(n_plus, se_plus)
    return StabilityCheck(
        float(q),
        float(delta),
        float(tolerance),
        float(xi_q),
        None if xi_minus is None else float(xi_minus),
        None if xi_plus is None else float(xi_plus),
        edge,
        tol_minus,
        tol_plus,
    )


def lattice_side(
    x: np.ndarray,
    q_side: float,
    t_q: float,
    step: lattice.Lattice,
    min_exceedances: int,
    direction: int,
) -> tuple[float | None, int | None, str]:
    """G5's side on a lattice: ξ̂ at the lattice threshold of ``q_side``.

    The threshold is that of :func:`lattice_side_threshold`.

    Parameters
    ----------
    x : numpy.ndarray
        Scores of the condition.
    q_side : float
        The side's quantile q ± δ.
    t_q : float
        q's threshold.
    step : Lattice
        The lattice step; on :class:`tailgate.stats.lattice.Cells`, the cells at ``t_q``.
    min_exceedances : int
        Fewest exceedances of a testable side.
    direction : int
        −1 for the lower side, +1 for the upper.

    Returns
    -------
    tuple of (float or None, int or None, str)
        ξ̂, the exceedances and the reason: ξ̂ (and the count) None when the side is beyond the
        data range; ξ̂ NaN when it is not testable (too few exceedances or distinct values, or no
        fit).
    """
    t, reason = lattice_side_threshold(x, q_side, t_q, step, direction)
    if t is None:
        return None, None, reason
    if isinstance(t, lattice.Cells):
        step, t = t, t.threshold
    y = lattice.excesses(x, t, step)
    if y.size < min_exceedances:
        return math.nan, int(y.size), f"not testable: {y.size} exceedances (< {min_exceedances})"
    f = gpd.fit(y, step)
    if f.status != "ok":
        return math.nan, int(y.size), f"not testable: the fit is {f.status}"
    return f.xi, int(y.size), reason


#: parametric-bootstrap samples of the s.e. of a side's difference (``tolerance_rule: se``)
SIDE_RESAMPLES = 200


def bootstrap_difference_se(
    xi: float,
    sigma: float,
    n_q: int | None,
    n_side: int | None,
    seed: gpd.SeedLike,
    *,
    step: lattice.Lattice | None = None,
    t_q: float = 0.0,
    side: float | lattice.Cells | None = None,
    resamples: int = SIDE_RESAMPLES,
) -> float:
    """The s.e. of ξ̂(side) − ξ̂(q) under a stable tail by a parametric bootstrap of q's fit (ξ, σ).

    Samples of the exceedances of the lower of the two thresholds are refitted there and above
    the higher one, the s.e. the sd of the differences. Small samples need it: the asymptotic
    variance (Smith 1987; on a lattice, the discretised model's information) understates the
    spread of the difference at 100 exceedances by up to a third (ξ < 0 most).

    Continuous data: the sides are empirical quantiles, so a sample holds max(n_q, n_side)
    GPD(ξ, 1) draws and the smaller set is its top min(n_q, n_side) values over the next one (ξ̂
    does not depend on σ). On a lattice: the cells of the lower threshold's exceedances from the
    discretised GPD there (ξ, σ + ξ·Δt), the higher threshold's those a whole number of cells up,
    their count random.

    Parameters
    ----------
    xi, sigma : float
        q's fit.
    n_q : int or None
        Exceedances at q.
    n_side : int or None
        Exceedances at the side.
    seed : SeedLike
        The stream of this condition, threshold and side.
    step : Lattice or None, default None
        q's cells at its threshold ``t_q``; None for continuous data.
    t_q : float, default 0.0
        q's threshold (on a lattice).
    side : float or lattice.Cells or None, default None
        The side's threshold on a lattice (:func:`lattice_side_threshold`).
    resamples : int, default SIDE_RESAMPLES
        Parametric-bootstrap samples.

    Returns
    -------
    float
        The sd over the samples whose two fits are interior maxima with enough distinct values
        (G5 compares only sides it can fit); ∞ for q's own threshold (the same exceedances); NaN
        without a side count or with fewer than a quarter of the samples fitted.

    References
    ----------
    Davison & Hinkley (1997), Section 2.2; Smith (1987).
    """
    if not n_q or not n_side or not (math.isfinite(xi) and math.isfinite(sigma) and sigma > 0):
        return math.nan
    rng = np.random.Generator(np.random.PCG64(gpd.seed_sequence_of(seed)))
    if step is None:
        lo, hi = max(n_q, n_side), min(n_q, n_side)
        if hi == lo:
            return math.inf
        e = -np.log(rng.random((resamples, lo)))
        y = e if abs(xi) < 1e-12 else np.expm1(xi * e) / xi
        y.sort(axis=1)
        top = y[:, lo - hi :] - y[:, lo - hi - 1 : lo - hi]
        big, small = gpd.fit_rows(y), gpd.fit_rows(top)
        ok = (big.status == 0) & (small.status == 0)
        d = small.xi - big.xi
    else:
        if side is None:
            return math.nan
        t_side = side.threshold if isinstance(side, lattice.Cells) else float(side)
        if math.isclose(t_side, t_q, rel_tol=0.0, abs_tol=1e-9 * max(1.0, abs(t_q))):
            return math.inf
        upper = t_side > t_q
        if isinstance(step, lattice.Cells):
            side_cells = side if isinstance(side, lattice.Cells) else step
            k = round(abs(side_cells.base - step.base) / step.step)
            low_cells, high_cells = (step, side_cells) if upper else (side_cells, step)
        else:
            k = round(abs(t_side - t_q) / float(step))
            low_cells = high_cells = float(step)
        s_low = sigma if upper else sigma + xi * (t_side - t_q)
        if not s_low > 0:
            return math.nan
        cells = lattice_likelihood.sample_cells(
            rng, xi, s_low, low_cells, (resamples, n_side if not upper else n_q)
        )
        s_high = s_low + xi * abs(t_side - t_q)
        ok = np.ones(resamples, dtype=bool)
        est = []
        # Fisher scoring from the model's own (ξ, σ), as G4's parametric bootstrap refits
        for lat, rows, s0 in (
            (low_cells, list(cells), s_low),
            (high_cells, [c[c >= k] - k for c in cells], s_high),
        ):
            g = lattice_likelihood.groups_of(rows, lat)
            res = lattice_likelihood.fit_groups(g, np.full(resamples, xi), np.full(resamples, s0))
            ok &= res.converged & (np.count_nonzero(g.counts, axis=1) >= gpd.MIN_LEVELS)
            est.append(res.xi)
        d = est[1] - est[0]
        d = d if upper else -d
    if np.count_nonzero(ok) < resamples // 4:
        return math.nan
    return float(np.std(d[ok], ddof=1))


def lattice_side_se(
    x: np.ndarray,
    q_side: float,
    t_q: float,
    step: lattice.Lattice,
    direction: int,
    fit: gpd.GPDFit,
    n_q: int,
    n_side: int | None,
    seed: gpd.SeedLike,
) -> float:
    """:func:`bootstrap_difference_se` of G5's side at ``q_side`` on a lattice.

    The side's threshold is that of :func:`lattice_side_threshold`.

    Parameters
    ----------
    x : numpy.ndarray
        Scores of the condition.
    q_side : float
        The side's quantile q ± δ.
    t_q : float
        q's threshold.
    step : Lattice
        The lattice (q's cells).
    direction : int
        −1 for the lower side, +1 for the upper.
    fit : GPDFit
        q's fit.
    n_q : int
        Exceedances at q.
    n_side : int or None
        Exceedances at the side.
    seed : SeedLike
        The stream of this condition, threshold and side.

    Returns
    -------
    float
        The s.e. of ξ̂(side) − ξ̂(q) (∞ and NaN as in :func:`bootstrap_difference_se`).
    """
    side, _ = lattice_side_threshold(x, q_side, t_q, step, direction)
    return bootstrap_difference_se(
        fit.xi, fit.sigma, n_q, n_side, seed, step=step, t_q=t_q, side=side
    )


def lattice_side_threshold(
    x: np.ndarray, q_side: float, t_q: float, step: lattice.Lattice, direction: int
) -> tuple[float | lattice.Cells | None, str]:
    """The threshold of G5's side at ``q_side`` on a lattice, and why.

    It is the lattice threshold of ``q_side``. Where it is q's threshold ``t_q``, the upper side
    moves one step higher (the excesses over it are a discretised GPD with q's ξ, so the
    comparison is exact under a stable tail) and the lower side stays q's own: one step lower
    leaves the registered band (on a coarse lattice it adds more exceedances than q has, into a
    body where no GPD need hold).

    Parameters
    ----------
    x : numpy.ndarray
        Scores of the condition.
    q_side : float
        The side's quantile q ± δ.
    t_q : float
        q's threshold.
    step : Lattice
        The lattice; on :class:`tailgate.stats.lattice.Cells` (at q's threshold) the steps are
        taken on the scores' own scale.
    direction : int
        −1 for the lower side, +1 for the upper.

    Returns
    -------
    tuple of (float or lattice.Cells or None, str)
        The threshold (as its cells on :class:`tailgate.stats.lattice.Cells`) and the reason; None
        beyond the data range (q ± δ outside (0, 1), or no lattice value below the lower threshold).
    """
    if not 0.0 < q_side < 1.0:
        return None, "beyond the data range"
    if isinstance(step, lattice.Cells):
        own = step.own(x)
        b = lattice.exceedances(x, q_side, step).step.base  # type: ignore[union-attr]
        b, why = _moved(b, step.base, step.step, direction)
        if direction < 0 and not np.any(own < b):
            return None, "no lattice threshold below q's (beyond the data range)"
        return step.at(b), why
    t = lattice.exceedances(x, q_side, step).u
    t, reason = _moved(t, t_q, step, direction)
    if direction < 0 and not np.any(x < t):
        return None, "no lattice threshold below q's (beyond the data range)"
    return t, reason


def _moved(t: float, t_q: float, step: float, direction: int) -> tuple[float, str]:
    """A side's threshold ``t``: the upper side moves one ``step`` above q's ``t_q`` when it
    equals it; the lower side stays on q's threshold (module docstring, lattice sides)."""
    if direction < 0 and t > t_q - 0.5 * step:
        return t_q, SAME_THRESHOLD
    if direction > 0 and t < t_q + 0.5 * step:
        return t_q + step, "q + delta falls on q's threshold: one lattice step higher"
    return t, "distinct lattice threshold"


#: the reason of a lower side whose lattice threshold is q's own
SAME_THRESHOLD = "q - delta falls on q's threshold: the side is q's own (no lattice value between)"
