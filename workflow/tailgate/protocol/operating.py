"""Operating characteristics of the whole registered decision rule (Sections 3, 4, 6.3 of Zhou
(2026)).

Eq. 2 and App. E of Zhou (2026) speak about P1 ∧ P2 alone. What a registration *does* is the whole
procedure: G1–G5, P1 and P2 at every threshold of the band, combined by the band rule, at the
level the multiplicity rule gives each gate. :func:`simulate_procedure` runs that procedure on
synthetic pairs with known truth and counts how often it passes:

* condition A: a bulk with an exact GPD(ξ̄, σ) tail above a share that covers the band and
  its G5 sides; condition B: the same bulk with tail shape ξ̄ + Δξ and σ_B = σ(1 − ξ_B)/(1 − ξ̄),
  so that the mean excess — hence the mean and TVaR — match in truth (bulk-equivalent pairs,
  the situation the protocol is built for). The sampler comes from the caller;
* every trial draws both samples at the registered prompts per condition, takes each band
  threshold at the empirical quantile, fits ξ̂ (Eq. 1), P1's interval at P1's level (below), the
  AD p-value (table of :mod:`tailgate.stats.gof`, ξ̂ clipped
  to the table's range), ξ̂ at q ± δ with its exceedance count (G5 as implemented; under the
  ``se`` rule the bootstrap s.e. of each side's difference,
  :func:`tailgate.stats.stability.bootstrap_difference_se`, computed only where every other
  gate passes, as P1 is), and for the
  bulk gates the asymptotic normal CIs of the mean and TVaR differences (the percentile CIs of
  the bulk bootstrap at these sample sizes; the one approximation here, stated in the output);
* the gates are then evaluated by :func:`tailgate.protocol.gates.evaluate_pair` — the same code
  the workflow runs — and combined by every band rule.

P1's statistics come from :mod:`tailgate.protocol.simulated_p1`: the profile-likelihood interval and
the likelihood-ratio test as the analysis computes them; the registered percentile bootstrap
either at ``resamples`` replicates per cell or, with ``resamples=None``, by its validated
observed-information stand-in (the registered 10,000 per fit are out of reach here, and a
hundred put P1's 0.25 % endpoints too far in: about twice the power at the floor).

Under Δξ = 0 (the null: equal tails, matched bulk) and Δξ = Δfloor/2 (a real but sub-floor
difference) a PASS is false; its rate is the rule's false-PASS rate. Δξ = Δfloor and 1.5 × Δfloor
give the power. The family-wise false-PASS rate of m pairs under the complete null is at most
m times the pair's rate (union bound; pairs that share a condition are dependent).

Speed: condition A is shared across the truths (common random numbers), and all trials'
bootstrap replicates at a threshold are refitted in one vectorised Newton call
(:func:`tailgate.protocol.simulated_p1.percentile_cis`). Memory: the trials are drawn a few at a
time and only their order statistics above the lowest threshold read are kept (with each
sample's mean and variance), and the exceedances are cut from them again where P1 needs them.
Determinism: trial t of A draws from child
(0, t) of the seed, of B under truth s from child (1 + s, t); bootstraps from their own
children.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tailgate.protocol.gates import ConditionSummary, GateSettings, PairVerdict, evaluate_pair
from tailgate.protocol.operating_lattice import GOF_RESAMPLES, LatticeCondition, round_to
from tailgate.protocol.simulated_p1 import p1_interval, p1_rows
from tailgate.protocol.verdict import BAND_RULES, h1_verdict
from tailgate.seeds import child_sequence
from tailgate.stats import gof, gpd, inference
from tailgate.stats.distributions import norm_ppf
from tailgate.stats.equivalence import BulkEquivalence, EquivalenceResult
from tailgate.stats.order_statistics import bottom_law, draw_top
from tailgate.stats.parts import BLAS_ROWS, parts_within
from tailgate.stats.profile import STATUS_OK
from tailgate.stats.stability import bootstrap_difference_se

__all__ = [
    "FLOOR_ROW",
    "OCScenario",
    "OperatingCharacteristics",
    "QuantileSampler",
    "Sampler",
    "row_kind",
    "simulate_procedure",
]

#: values drawn at once by :func:`simulate_procedure` (trials × prompts)
DRAW_ELEMENTS = 1 << 20

#: sampler(rng, delta_xi, shape) -> severities on the headline scale; it fills the array in
#: order (row by row from its generator), so drawing the trials in parts gives the same trials
Sampler = Callable[[np.random.Generator, float, tuple[int, int]], np.ndarray]
#: from this many prompts up, a sampler with a quantile function is simulated by its top order
#: statistics and its bottom sums' law (:mod:`tailgate.stats.order_statistics`, methods note P13)
TOP_DRAW_PROMPTS = 100_000


@runtime_checkable
class QuantileSampler(Protocol):
    """A :data:`Sampler` that inverts one uniform per value: ``quantile(Δξ)`` is its quantile
    function, ``kinks`` the points where that function is not smooth."""

    kinks: tuple[float, ...]

    def __call__(
        self, rng: np.random.Generator, delta_xi: float, shape: tuple[int, int]
    ) -> np.ndarray: ...

    def quantile(self, delta_xi: float) -> Callable[[np.ndarray], np.ndarray]: ...


@dataclass(frozen=True)
class OCScenario:
    """PASS counts of the procedure under one truth, per band rule."""

    delta_xi: float
    trials: int
    passes: dict[str, int]
    #: per band rule, the trials that passed (for paired comparisons; not serialised)
    passed_trials: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False)

    def rate(self, rule: str) -> float:
        return self.passes[rule] / self.trials

    def mc_se(self, rule: str) -> float:
        p = self.rate(rule)
        return math.sqrt(p * (1.0 - p) / self.trials)

    def to_dict(self) -> dict[str, Any]:
        return {
            "delta_xi": self.delta_xi,
            "trials": self.trials,
            "passes": dict(self.passes),
            "rate": {r: round(self.rate(r), 6) for r in self.passes},
            "mc_se": {r: round(self.mc_se(r), 6) for r in self.passes},
        }


@dataclass(frozen=True)
class OperatingCharacteristics:
    """Simulated false-PASS rate and power of the registered procedure (module docstring)."""

    band_rule: str
    delta_floor: float
    n_prompts: int
    trials: int
    resamples: int | None
    family_size: int
    p1_level: float
    scenarios: tuple[OCScenario, ...]
    notes: tuple[str, ...] = field(default=())
    p1_interval: str = "percentile"

    def at(self, delta_xi: float) -> OCScenario:
        return next(s for s in self.scenarios if math.isclose(s.delta_xi, delta_xi))

    def false_pass(self, rule: str | None = None) -> float:
        """Largest PASS rate over the truths with Δξ below the floor."""
        rule = rule or self.band_rule
        return max(s.rate(rule) for s in self.scenarios if s.delta_xi < self.delta_floor)

    def worst_false_pass(self, rule: str | None = None) -> OCScenario:
        """The truth below the floor with the largest PASS rate."""
        rule = rule or self.band_rule
        below = [s for s in self.scenarios if s.delta_xi < self.delta_floor]
        return max(below, key=lambda s: s.rate(rule))

    def family_false_pass_bound(self, rule: str | None = None) -> float:
        """Union bound on the family-wise false-PASS rate under the complete null (Δξ = 0)."""
        return min(1.0, self.family_size * self.at(0.0).rate(rule or self.band_rule))

    def to_dict(self) -> dict[str, Any]:
        return {
            "band_rule": self.band_rule,
            "delta_floor": self.delta_floor,
            "n_prompts": self.n_prompts,
            "trials": self.trials,
            "resamples": self.resamples,
            "family_size": self.family_size,
            "p1_level": self.p1_level,
            "p1_interval": self.p1_interval,
            "false_pass": round(self.false_pass(), 6),
            "false_pass_mc_se": round(self.worst_false_pass().mc_se(self.band_rule), 6),
            "family_false_pass_bound": round(self.family_false_pass_bound(), 6),
            "power": [
                {
                    "delta_xi": s.delta_xi,
                    "rate": round(s.rate(self.band_rule), 6),
                    "mc_se": round(s.mc_se(self.band_rule), 6),
                }
                for s in self.scenarios
                if s.delta_xi >= self.delta_floor
            ],
            "scenarios": [s.to_dict() for s in self.scenarios],
            "notes": list(self.notes),
        }

    def describe(self) -> list[str]:
        """Lines for ``tailgate design`` and the report."""
        rule = self.band_rule
        lines = [
            f"operating characteristics of the registered procedure (every gate, band rule "
            f"'{rule}', P1 at CI level {self.p1_level:.4g}, {self.n_prompts} prompts per "
            f"condition, {self.trials} trials; P1's intervals: {self.p1_interval}):"
        ]
        for s in self.scenarios:
            kind = row_kind(s.delta_xi, self.delta_floor)
            others = ", ".join(f"{r} {s.rate(r):.3f}" for r in BAND_RULES if r != rule)
            lines.append(
                f"  true Δξ = {s.delta_xi:g}: {kind} {s.rate(rule):.3f} ± {s.mc_se(rule):.3f} "
                f"(other band rules: {others})"
            )
        lines.append(
            f"  this rule passes a null pair {100 * self.at(0.0).rate(rule):.1f}% of the time; "
            f"family of {self.family_size} pairs: at most "
            f"{100 * self.family_false_pass_bound():.1f}% (union bound)"
        )
        lines += [f"  note: {n}" for n in self.notes]
        return lines


#: what a PASS rate at Δξ = Δfloor is: H1's null is Δξ ≤ Δfloor, so the floor is its boundary
FLOOR_ROW = (
    "boundary of H1's null: a PASS here is not yet a discovery above the floor "
    "(Zhou (2026), App. E, reads this rate as power at the floor)"
)


def row_kind(delta_xi: float, delta_floor: float) -> str:
    """What the PASS rate at a true Δξ measures: a false PASS below the floor, the boundary of
    H1's null at it (:data:`FLOOR_ROW`), power above it.

    Parameters
    ----------
    delta_xi : float
        The true Δξ.
    delta_floor : float
        The registered Δfloor.

    Returns
    -------
    str
        ``"false PASS"``, :data:`FLOOR_ROW` (Δξ = Δfloor to 1e-9) or ``"power"``.
    """
    if math.isclose(delta_xi, delta_floor, rel_tol=1e-9, abs_tol=1e-12):
        return FLOOR_ROW
    return "false PASS" if delta_xi < delta_floor else "power"


@dataclass(frozen=True, eq=False)
class _Sorted:
    """What the procedure reads of each trial's sample: its order statistics from ``k0`` up
    (sorted, one row per trial) and its mean and variance. The rest of a sample is never
    kept, so memory grows with the share of the sample above the lowest threshold read, not
    with the whole sample (200 trials × 2.5·10⁶ prompts are 4 GB a condition)."""

    top: np.ndarray
    n: int
    k0: int
    mean: np.ndarray
    var: np.ndarray
    #: on a lattice: per trial, the values below order statistic k0 tied with it
    ties_below: np.ndarray | None = None

    def sample(self, t: int, step: float) -> np.ndarray:
        """Trial ``t``'s sample on a lattice of ``step``, sorted, with the values below ``k0``
        that the procedure never reads stood in by the lattice point below (those tied with
        order statistic k0 kept: a lattice threshold counts every value tied at it)."""
        e = 0 if self.ties_below is None else int(self.ties_below[t])
        low = self.top[t, 0]
        return np.concatenate([np.full(self.k0 - e, low - step), np.full(e, low), self.top[t]])


def _bulk_cis(
    xa: _Sorted, xb: _Sorted, level_mean: float, level_tvar: float, tvar_level: float
) -> tuple[np.ndarray, ...]:
    """Asymptotic normal CIs of mean(A) − mean(B) and TVaR(A) − TVaR(B) per trial.

    TVaR_p variance: [Var(X | X > VaR) + p (TVaR − VaR)²] / (N (1 − p)) (Manistre & Hancock
    2005), the large-N limit of the bulk bootstrap's percentile CI.
    """
    n = xa.n

    def stats(x: _Sorted) -> tuple[np.ndarray, ...]:
        var_p = _quantile_sorted(x, tvar_level)
        if x.ties_below is not None:
            return (x.mean, x.var / n, *_tail_moments(x.top, var_p, tvar_level))
        k = _count_above(x, var_p)
        tv, tvar_var = np.empty_like(var_p), np.empty_like(var_p)
        # a few trials at a time (row-wise sums: the same values; bounded memory)
        for a, b in parts_within(var_p.size, k):
            tail = x.top[a:b, x.top.shape[1] - k :] - var_p[a:b, None]  # values above VaR − VaR
            tv[a:b] = var_p[a:b] + tail.mean(axis=1)
            tvar_var[a:b] = (tail.var(axis=1) + tvar_level * (tv[a:b] - var_p[a:b]) ** 2) / k
        return x.mean, x.var / n, tv, tvar_var

    ma, va, ta, wa = stats(xa)
    mb, vb, tb, wb = stats(xb)
    zm = norm_ppf(0.5 + level_mean / 2)
    zt = norm_ppf(0.5 + level_tvar / 2)
    dm, sm = ma - mb, np.sqrt(va + vb)
    dt, st = ta - tb, np.sqrt(wa + wb)
    return dm, dm - zm * sm, dm + zm * sm, dt, dt - zt * st, dt + zt * st


def _tail_moments(
    top: np.ndarray, var_p: np.ndarray, tvar_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """TVaR and its asymptotic variance (:func:`_bulk_cis`) of every trial when the number of
    values above VaR differs between trials (ties on a lattice)."""
    above = top > var_p[:, None]
    k = np.maximum(above.sum(axis=1), 1)
    excess = np.where(above, top - var_p[:, None], 0.0)
    mean_excess = excess.sum(axis=1) / k
    spread = np.where(above, (excess - mean_excess[:, None]) ** 2, 0.0).sum(axis=1) / k
    tv = var_p + mean_excess
    return tv, (spread + tvar_level * mean_excess**2) / k


def _quantile_sorted(xs: _Sorted, q: float) -> np.ndarray:
    """numpy's default ("linear", type 7) q-quantile of every trial's sample."""
    h = (xs.n - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, xs.n - 1)
    if lo < xs.k0:
        raise ValueError(f"quantile {q} lies below the order statistics kept")
    a, b = xs.top[:, lo - xs.k0], xs.top[:, hi - xs.k0]
    return a + (h - lo) * (b - a)


def _count_above(xs: _Sorted, u: np.ndarray) -> int:
    """Exceedances of the thresholds ``u`` (every trial has as many as the first; the values
    below k0 are at most the k0-th order statistic, so never above u)."""
    return int(np.count_nonzero(xs.top[0] > u[0]))


def _top(xs: _Sorted, q: float) -> tuple[np.ndarray, np.ndarray, int]:
    u = _quantile_sorted(xs, q)
    n_exc = _count_above(xs, u)
    return u, xs.top[:, xs.top.shape[1] - n_exc :] - u[:, None], n_exc


def _ad_pvalues(y: np.ndarray, xi: np.ndarray, sigma: np.ndarray, ok: np.ndarray) -> np.ndarray:
    table = gof.load_table()
    xi, sigma = np.where(ok, xi, 0.0), np.where(ok, sigma, 1.0)
    # A² a few trials at a time: its temporaries are five arrays of the exceedances' size (1 GB
    # at 200 trials × 125,000), in parts that keep the matrix-vector product's sums (.parts)
    a2 = np.concatenate(
        [
            gof.ad_statistic_rows(y[a:b], xi[a:b], sigma[a:b])
            for a, b in parts_within(y.shape[0], y.shape[1], BLAS_ROWS)
        ]
    )
    lo, hi = float(table.xi[0]), float(table.xi[-1])
    return np.array(
        [
            table.pvalue(float(a), min(max(float(x), lo), hi))[0] if good else 0.0
            for a, x, good in zip(a2, xi, ok, strict=True)
        ]
    )


class _Condition:
    """One condition's statistics at every band threshold, for every trial.

    Fits, AD p-values and G5 sides are computed for all trials at once; P1's interval (or
    profile) only for the (trial, threshold) cells where every other gate passes
    (:meth:`need`), because P1 cannot change the outcome elsewhere. The bootstrap of cell
    (t, j) draws from child (j, t) of the condition's stream, so the numbers do not depend on
    which cells were needed.
    """

    def __init__(
        self,
        xs: _Sorted,
        band: Sequence[float],
        settings: GateSettings,
        resamples: int | None,
        min_side: int,
        ss: np.random.SeedSequence,
        workers: int = 1,
    ) -> None:
        self.settings, self.resamples, self.ss, self.workers = settings, resamples, ss, workers
        self.band = list(band)
        trials = xs.top.shape[0]
        self.trials, self.xs = trials, xs
        sides: dict[float, tuple[np.ndarray | None, int | None]] = {}

        def side(qs: float) -> tuple[np.ndarray | None, int | None]:
            qs = round(qs, 10)
            if qs not in sides:
                if not 0.0 < qs < 1.0:
                    sides[qs] = (None, None)
                else:
                    _, y, n = _top(xs, qs)
                    if n < min_side:
                        sides[qs] = (np.full(trials, math.nan), n)
                    else:
                        f = gpd.fit_rows(y)
                        sides[qs] = (np.where(f.status == STATUS_OK, f.xi, math.nan), n)
            return sides[qs]

        delta = settings.stability_delta
        self.u, self.n_exc, self.fits, self.ad_p, self.sides = [], [], [], [], []
        for q in self.band:
            u, y, n_exc = _top(xs, q)
            f = gpd.fit_rows(y)
            self.u.append(u)
            self.n_exc.append(n_exc)
            self.fits.append(f)
            self.ad_p.append(_ad_pvalues(y, f.xi, f.sigma, f.status != 2))
            self.sides.append({"minus": side(q - delta), "plus": side(q + delta)})
        nan2 = np.full((trials, len(self.band), 2), math.nan)
        self.ci, self.profile_ci = nan2.copy(), nan2.copy()
        self.profiles: dict[tuple[int, int], inference.ProfileGrid | None] = {}
        self.done = np.zeros((trials, len(self.band)), dtype=bool)
        self.g5_done = np.zeros((trials, len(self.band)), dtype=bool)
        self.side_se: dict[tuple[int, int, str], float] = {}

    @property
    def lazy(self) -> tuple[str, ...]:
        """The gates computed only where every other passes (:meth:`need`): under G5's ``se``
        rule G5's bootstrap s.e. first, then P1."""
        return ("G5", "P1") if self.settings.stability_rule == "se" else ("P1",)

    def need(self, cells: np.ndarray, gate: str = "P1") -> None:
        """Compute P1's statistics (or G5's s.e.) for the (trial, threshold) ``cells``
        (boolean mask)."""
        if gate == "G5":
            self._g5(cells & ~self.g5_done)
            return
        todo = cells & ~self.done
        s = self.settings
        for j in range(len(self.band)):
            rows = np.flatnonzero(todo[:, j])
            if rows.size == 0:
                continue
            rngs = [
                np.random.Generator(np.random.PCG64(child_sequence(self.ss, j, int(t))))
                for t in rows
            ]
            # the exceedances again, as the fits had them (not kept: they are most of the memory)
            y = _top(self.xs, self.band[j])[1]
            stats = p1_rows(y, self.fits[j], rows, s, self.resamples, rngs, workers=self.workers)
            self.ci[rows, j] = stats.ci
            self.profile_ci[rows, j] = stats.profile_ci
            for t, grid in zip(rows, stats.profiles, strict=True):
                if grid is not None:
                    self.profiles[(int(t), j)] = grid
        self.done |= todo

    def _g5(self, cells: np.ndarray) -> None:
        """The bootstrap s.e. of each tested side's difference at the ``cells``, as the fit
        stage computes it (child (j, t, 2, side) of the condition's stream)."""
        self.g5_done |= cells
        for t, j in zip(*np.nonzero(cells), strict=True):
            t, j, f = int(t), int(j), self.fits[j]
            for k, name in enumerate(("minus", "plus")):
                xs, n_side = self.sides[j][name]
                if xs is None or not math.isfinite(xs[t]) or f.status[t] != STATUS_OK:
                    continue
                seed = child_sequence(self.ss, j, t, 2, k)
                self.side_se[(t, j, name)] = bootstrap_difference_se(
                    float(f.xi[t]), float(f.sigma[t]), self.n_exc[j], n_side, seed
                )

    def summary(self, name: str, t: int, j: int) -> ConditionSummary:
        f = self.fits[j]
        (xm, nm), (xp, np_) = self.sides[j]["minus"], self.sides[j]["plus"]
        return ConditionSummary(
            condition=name,
            q=self.band[j],
            u=float(self.u[j][t]),
            n_exc=self.n_exc[j],
            xi=float(f.xi[t]),
            sigma=float(f.sigma[t]),
            fit_status=gpd.status_name(int(f.status[t])),
            xi_ci_low=float(self.ci[t, j, 0]),
            xi_ci_high=float(self.ci[t, j, 1]),
            ci_level=self.settings.ci_level,
            ad_pvalue=float(self.ad_p[j][t]),
            xi_minus=None if xm is None else float(xm[t]),
            xi_plus=None if xp is None else float(xp[t]),
            n_minus=nm,
            n_plus=np_,
            se_minus=self.side_se.get((t, j, "minus")),
            se_plus=self.side_se.get((t, j, "plus")),
            profile_ci_low=float(self.profile_ci[t, j, 0]),
            profile_ci_high=float(self.profile_ci[t, j, 1]),
            profile=self.profiles.get((t, j)),
        )


def simulate_procedure(
    settings: GateSettings,
    *,
    band: Sequence[float],
    headline_q: float,
    band_rule: str,
    n_prompts: int,
    sample: Sampler,
    delta_xis: Sequence[float],
    trials: int,
    resamples: int | None,
    min_side_exceedances: int,
    seed: gpd.SeedLike,
    workers: int = 1,
    lattice_step: float | None = None,
) -> OperatingCharacteristics:
    """PASS rates of the registered procedure for one bulk-matched pair under each Δξ.

    From :data:`TOP_DRAW_PROMPTS` prompts up, a :class:`QuantileSampler` off the lattice is
    drawn by its top order statistics instead (methods note P13).

    Parameters
    ----------
    settings : GateSettings
        The registered rules.
    band : Sequence[float]
        The thresholds of the band.
    headline_q : float
        The headline threshold.
    band_rule : str
        The registered band rule; the rates are counted under every one.
    n_prompts : int
        Prompts per condition.
    sample : Sampler
        ``sample(rng, Δξ, (trials, n_prompts))`` draws severities on the headline scale (Δξ = 0
        is condition A).
    delta_xis : Sequence[float]
        The truths Δξ of condition B.
    trials : int
        Trials per truth.
    resamples : int or None
        Replicates of P1's percentile bootstrap per cell, or ``None`` for the
        observed-information stand-in (module docstring).
    min_side_exceedances : int
        Fewest exceedances of a G5 side q ± δ for a fit (fewer: NaN, not testable).
    seed : SeedLike
        Root of the streams (module docstring, Determinism).
    workers : int, default 1
        Threads that run the bootstraps; the result does not depend on it.
    lattice_step : float or None, default None
        The samples are rounded to that lattice and every condition is fitted and tested by the
        lattice rule (:mod:`tailgate.protocol.operating_lattice`).

    Returns
    -------
    OperatingCharacteristics
        The PASS counts per truth under every band rule, with notes on the approximations.

    Raises
    ------
    ValueError
        If ``band_rule`` is not one of :data:`tailgate.protocol.verdict.BAND_RULES`.
    """
    if band_rule not in BAND_RULES:
        raise ValueError(f"band_rule must be one of {BAND_RULES}, got {band_rule!r}")
    ss = gpd.seed_sequence_of(seed)

    band = [float(q) for q in band]
    shape = (int(trials), int(n_prompts))
    lowest = min(min(band) - settings.stability_delta, settings.tvar_level)
    k0 = max(0, math.floor((shape[1] - 1) * lowest) - 1)

    # trials drawn at once: about DRAW_ELEMENTS values (a sampler fills its array in order, so
    # the trials are the same whatever their number per draw)
    per_draw = max(1, min(shape[0], DRAW_ELEMENTS // shape[1]))

    by_top = (
        lattice_step is None
        and shape[1] >= TOP_DRAW_PROMPTS
        and isinstance(sample, QuantileSampler)
    )

    def draw(gen: np.random.Generator, dxi: float) -> _Sorted:
        # order statistics from k0 up are all the procedure reads (the mean ignores the order)
        top = np.empty((shape[0], shape[1] - k0))
        mean, var = np.empty(shape[0]), np.empty(shape[0])
        if by_top:  # the top order statistics themselves, trial after trial
            law = bottom_law(sample.quantile(dxi), shape[1], shape[1] - k0, sample.kinks)
            for t in range(shape[0]):
                d = draw_top(gen, law, shape[1], shape[1] - k0)
                top[t], mean[t], var[t] = d.top, d.mean, d.var
            return _Sorted(top, shape[1], k0, mean, var)
        ties = None if lattice_step is None else np.zeros(shape[0], dtype=np.int64)
        for t0 in range(0, shape[0], per_draw):
            t1 = min(t0 + per_draw, shape[0])
            x = sample(gen, dxi, (t1 - t0, shape[1]))
            if lattice_step is not None:
                x = round_to(x, lattice_step)
            x = np.partition(x, k0, axis=1)
            x[:, k0:] = np.sort(x[:, k0:], axis=1)
            top[t0:t1], mean[t0:t1], var[t0:t1] = x[:, k0:], x.mean(axis=1), x.var(axis=1)
            if ties is not None:
                ties[t0:t1] = np.count_nonzero(x[:, :k0] == x[:, k0 : k0 + 1], axis=1)
        return _Sorted(top, shape[1], k0, mean, var, ties)

    def condition(xs: _Sorted, ss: np.random.SeedSequence) -> _Condition | LatticeCondition:
        if lattice_step is None:
            return _Condition(xs, band, settings, resamples, min_side_exceedances, ss, workers)
        return LatticeCondition(
            xs, band, settings, resamples, min_side_exceedances, ss, lattice_step
        )

    xa = draw(np.random.Generator(np.random.PCG64(child_sequence(ss, 0))), 0.0)
    cond_a = condition(xa, child_sequence(ss, 0, 1))
    levels = (settings.level_of("G1"), settings.level_of("G2"))
    scenarios = []
    for s, dxi in enumerate(delta_xis):
        gen = np.random.Generator(np.random.PCG64(child_sequence(ss, 1 + s)))
        xb = draw(gen, float(dxi))
        cond_b = condition(xb, child_sequence(ss, 1 + s, 1))
        dm, m_lo, m_hi, dt, t_lo, t_hi = _bulk_cis(xa, xb, *levels, settings.tvar_level)
        bulks = [
            BulkEquivalence(
                EquivalenceResult(
                    "mean", dm[t], m_lo[t], m_hi[t], settings.delta_mu, levels[0], 0, False
                ),
                EquivalenceResult(
                    "tvar", dt[t], t_lo[t], t_hi[t], settings.delta_tvar, levels[1], 0, False
                ),
                settings.tvar_level,
            )
            for t in range(shape[0])
        ]

        def verdicts(t: int, b: Any = cond_b, bulk: list = bulks) -> list[PairVerdict]:
            return [
                evaluate_pair(cond_a.summary("a", t, j), b.summary("b", t, j), bulk[t], settings)
                for j in range(len(band))
            ]

        # P1 (and G4 on a lattice) matters only where every other gate passes: computed
        # there, one gate after the other
        lazy = cond_a.lazy
        for k, gate in enumerate(lazy):
            need = np.zeros((shape[0], len(band)), dtype=bool)
            for t in range(shape[0]):
                for j, v in enumerate(verdicts(t)):
                    need[t, j] = all(g.passed for g in v.gates if g.gate not in lazy[k:])
            cond_a.need(need, gate)
            cond_b.need(need, gate)
        passed: dict[str, list[int]] = {rule: [] for rule in BAND_RULES}
        for t in range(shape[0]):
            pairs = verdicts(t)
            for rule in BAND_RULES:
                v = h1_verdict(
                    pairs, headline_q=headline_q, band=band, settings=settings, band_rule=rule
                )
                if v.h1 == "PASS":
                    passed[rule].append(t)
        scenarios.append(
            OCScenario(
                float(dxi),
                shape[0],
                {r: len(ts) for r, ts in passed.items()},
                {r: tuple(ts) for r, ts in passed.items()},
            )
        )
        # this truth's sample goes before the next one is drawn (two would be held at once)
        del xb, cond_b, bulks, verdicts
    notes: tuple[str, ...] = (
        "G1/G2 use the asymptotic normal CIs of the mean and TVaR differences (the bulk "
        "bootstrap's percentile CIs at these sample sizes)",
    )
    if lattice_step is not None:
        notes += (
            f"lattice rule: both samples rounded to a lattice of step {lattice_step:.6g}; fits, "
            f"G5's sides and P1 by the discretised likelihood, G4 by the discretised "
            f"Anderson-Darling test ({GOF_RESAMPLES} parametric-bootstrap samples per fit, "
            "drawn until its decision is certain)",
        )
        if headline_q in band:  # G5 where the tail is stable: condition A at the headline
            g5 = cond_a.g5_failures(band.index(headline_q))  # type: ignore[union-attr]
            notes += (f"lattice rule: G5 alone fails condition A (Δξ = 0) in {g5:.3f} of trials",)
    return OperatingCharacteristics(
        band_rule,
        float(settings.delta_floor),
        shape[1],
        shape[0],
        None if resamples is None else int(resamples),
        settings.n_pairs,
        settings.ci_level,
        tuple(scenarios),
        notes,
        p1_interval(settings, resamples, lattice=lattice_step is not None),
    )
