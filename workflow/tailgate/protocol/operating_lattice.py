"""The whole-procedure simulation on a lattice (registered ``protocol.thresholds.ties: lattice``;
methods note P10; Ma, Yan & Zhang (2026), Sections 2–3).

:func:`tailgate.protocol.operating.simulate_procedure` rounds both conditions' samples to a
lattice of step h and then runs, trial by trial, what the fit stage runs under the lattice rule:

* each band threshold half a step below the lattice value on or above the empirical quantile
  (:func:`tailgate.stats.lattice.exceedances`), so the exceedance count differs between trials;
* ξ̂ by the discretised likelihood (:func:`tailgate.stats.gpd.fit_lattice_samples`, every
  trial's fit of a threshold in one vectorised call; the same starts as
  :func:`tailgate.stats.gpd.fit`);
* G4 by the discretised Anderson–Darling statistic with its parametric-bootstrap p-value
  (:func:`tailgate.stats.gof.anderson_darling_lattice`) from :data:`GOF_RESAMPLES` simulated
  samples, drawn only until the gate's decision is certain (Besag & Clifford (1991)'s
  sequential test: the decision of the full test). The fit stage draws 999; both are exact
  tests, of level ⌊α(B + 1)⌋/(B + 1): the same at α = 0.05, and 0.005 instead of 0.008 at
  α = 0.05/6 (G4 among the adjusted gates). Fewer samples lose power against a misfitting
  model, which the simulated tails never are;
* G5's lattice sides (:func:`tailgate.stats.stability.lattice_side_threshold`), the ``se``
  rule's tolerance from the parametric bootstrap of q's discretised fit
  (:func:`tailgate.stats.stability.bootstrap_difference_se`; child (j, t, 2, side) of the
  condition's stream);
* P1 from the discretised model as the gate reads it on a lattice
  (:func:`tailgate.protocol.gates.p1_reads`): the profile interval (under ``percentile`` too)
  or the profile the likelihood-ratio test reads (:mod:`tailgate.stats.inference` with
  ``step``).

G5's bootstrap s.e. (``se`` rule), G4 and P1 cost most, and none can change a verdict where
another gate fails, so they are computed only for the (trial, threshold) cells where every other
gate passes, in that order (:attr:`LatticeCondition.lazy`).

:func:`reference_step` chooses h for the reference pair: the step at which the headline threshold
leaves, on average, the registered minimum of distinct exceedance values (``min_levels``): the
coarsest lattice the registration admits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np

from tailgate.protocol.gates import ConditionSummary, GateSettings, condition_stability, p1_reads
from tailgate.seeds import child_sequence
from tailgate.stats import gof, gpd, inference, lattice, lattice_likelihood
from tailgate.stats.stability import bootstrap_difference_se, lattice_side_threshold

__all__ = [
    "GOF_RESAMPLES",
    "LatticeCondition",
    "SortedTrials",
    "reference_step",
    "round_to",
]

#: simulated samples of G4's parametric bootstrap per (trial, threshold) cell (docstring)
GOF_RESAMPLES = 199
#: distinct cells a batch of fits may span together (:func:`_batches`)
_BATCH_CELLS = 256
#: trials of condition A that :func:`reference_step` averages over
_STEP_TRIALS = 16


class SortedTrials(Protocol):
    """What the simulation keeps of each trial's sample (its order statistics from ``k0`` up)."""

    top: np.ndarray

    def sample(self, t: int, step: float) -> np.ndarray:
        """Trial ``t``'s whole sample on the lattice, for the lattice rule's thresholds."""
        ...


def round_to(x: np.ndarray, step: float) -> np.ndarray:
    """Scores rounded to the nearest point of the lattice {k·step}.

    Parameters
    ----------
    x : np.ndarray
        The scores.
    step : float
        The lattice step h.

    Returns
    -------
    np.ndarray
        ``step * np.round(x / step)`` (halves to the even point), of the shape of ``x``.
    """
    return step * np.round(x / step)


def _distinct_at(x: np.ndarray, q: float, step: float) -> float:
    """Mean number of distinct exceedance values at ``q`` of the rows of ``x`` on the lattice."""
    return float(
        np.mean([np.unique(lattice.exceedances(row, q, step).y).size for row in round_to(x, step)])
    )


def reference_step(
    sample: Callable[[np.random.Generator, float, tuple[int, int]], np.ndarray],
    n_prompts: int,
    q: float,
    levels: int,
    seed: np.random.SeedSequence,
) -> float | None:
    """The lattice step at which the headline threshold ``q`` of condition A (Δξ = 0) leaves
    ``levels`` distinct exceedance values on average over a few trials (bisection on log h).

    Parameters
    ----------
    sample : Callable[[np.random.Generator, float, tuple[int, int]], np.ndarray]
        The sampler of the reference pair (a :data:`tailgate.protocol.operating.Sampler`).
    n_prompts : int
        Prompts per condition.
    q : float
        The headline threshold.
    levels : int
        The registered minimum of distinct exceedance values (``min_levels``).
    seed : np.random.SeedSequence
        Stream of the trials drawn.

    Returns
    -------
    float or None
        The step, to a relative 1e-8; None where even the finest lattice (10⁻⁶ of the range
        of the exceedances) leaves no more (too few exceedances at ``n_prompts``): no lattice
        the registration admits exists, and the rule's fits are the continuous ones in the
        limit.
    """
    x = np.sort(sample(np.random.Generator(np.random.PCG64(seed)), 0.0, (_STEP_TRIALS, n_prompts)))
    top = x[:, math.floor((n_prompts - 1) * q) :]
    hi = float(np.max(top[:, -1] - top[:, 0]))
    lo = hi * 1e-6
    if hi <= 0 or _distinct_at(x, q, lo) <= levels:
        return None
    for _ in range(30):  # six decades to a relative 1e-8
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _distinct_at(x, q, mid) > levels else (lo, mid)
    return float(hi)


def _batches(cells: Mapping[int, np.ndarray]) -> list[list[int]]:
    """The samples in batches whose cells together are at most :data:`_BATCH_CELLS` or twice
    the most of one sample: a batch's fit evaluates every sample at every cell of the batch,
    so samples share a call where their cells overlap (a coarse lattice) and not where they
    barely do (a fine one)."""
    out: list[list[int]] = []
    batch: list[int] = []
    seen: set[int] = set()
    for i, c in cells.items():
        own = set(np.unique(c).tolist())
        if batch and len(seen | own) > max(_BATCH_CELLS, 2 * len(own)):
            out.append(batch)
            batch, seen = [], set()
        batch.append(i)
        seen |= own
    return [*out, batch] if batch else out


class LatticeCondition:
    """One condition's statistics at every band threshold for every trial, under the lattice
    rule (module docstring), with the interface of the continuous condition of
    :mod:`tailgate.protocol.operating`: :attr:`lazy`, :meth:`need` and :meth:`summary`."""

    def __init__(
        self,
        xs: SortedTrials,
        band: Sequence[float],
        settings: GateSettings,
        resamples: int | None,
        min_side: int,
        ss: np.random.SeedSequence,
        step: float,
    ) -> None:
        self.settings, self.resamples, self.ss, self.step = settings, resamples, ss, step
        self.band, self.trials = list(band), xs.top.shape[0]
        delta = settings.stability_delta
        nan = np.full((self.trials, len(self.band)), math.nan)
        self.u, self.n_exc = nan.copy(), np.zeros((self.trials, len(self.band)), dtype=np.int64)
        self.y: list[list[np.ndarray]] = [[] for _ in range(self.trials)]
        self.sides: list[list[dict[str, tuple[float | None, int | None]]]] = []
        side_rows: list[tuple[int, int, str, np.ndarray]] = []
        side_th: dict[tuple[int, int, str], float] = {}
        for t in range(self.trials):
            x = xs.sample(t, step)
            sides = []
            for j, q in enumerate(self.band):
                ex = lattice.exceedances(x, q, step)
                self.u[t, j], self.n_exc[t, j] = ex.u, ex.n_exc
                self.y[t].append(ex.y)
                out: dict[str, tuple[float | None, int | None]] = {}
                for name, qs, d in (("minus", q - delta, -1), ("plus", q + delta, 1)):
                    th, _ = lattice_side_threshold(x, round(qs, 10), ex.u, step, d)
                    if th is None:
                        out[name] = (None, None)
                        continue
                    y = lattice.excesses(x, th, step)
                    out[name] = (math.nan, int(y.size))
                    side_th[(t, j, name)] = th
                    if y.size >= min_side:
                        side_rows.append((t, j, name, y))
                sides.append(out)
            self.sides.append(sides)
        self.fits = [self._fit([ys[j] for ys in self.y]) for j in range(len(self.band))]
        side_fits = self._fit([y for *_, y in side_rows])
        for (t, j, name, _), f in zip(side_rows, side_fits, strict=True):
            n = self.sides[t][j][name][1]
            self.sides[t][j][name] = (f.xi if f.status == "ok" else math.nan, n)
        self.side_th = side_th
        self.side_se: dict[tuple[int, int, str], float] = {}
        self.ad_p = nan.copy()
        self.ci = np.full((*nan.shape, 2), math.nan)
        self.profile_ci = self.ci.copy()
        self.profiles: dict[tuple[int, int], inference.ProfileGrid | None] = {}
        self.g4_done = np.zeros(nan.shape, dtype=bool)
        self.g5_done = np.zeros(nan.shape, dtype=bool)
        self.p1_done = np.zeros(nan.shape, dtype=bool)

    def _fit(self, ys: Sequence[np.ndarray]) -> list[gpd.GPDFit]:
        """Discretised fits of the samples ``ys`` (too few exceedances: ``too_few``), in
        vectorised batches of samples whose cells together stay few (:func:`_batches`)."""
        out: list[gpd.GPDFit | None] = [
            None if y.size >= gpd.MIN_EXCEEDANCES else gpd.fit(y, self.step) for y in ys
        ]
        cells = {i: lattice.cells_of(y, self.step) for i, y in enumerate(ys) if out[i] is None}
        for batch in _batches(cells):
            g = lattice_likelihood.groups_of([cells[i] for i in batch], self.step)
            means = np.array([np.mean(ys[i]) for i in batch])
            for i, f in zip(batch, gpd.fit_lattice_samples(g, means), strict=True):
                out[i] = f
        return [f for f in out if f is not None]

    @property
    def lazy(self) -> tuple[str, ...]:
        """The gates computed only where every other passes: under G5's ``se`` rule G5's
        bootstrap s.e. first, then G4, then P1 (a profile interval or grid, more than G4's
        sequential parametric bootstrap costs)."""
        return ("G5", "G4", "P1") if self.settings.stability_rule == "se" else ("G4", "P1")

    def need(self, cells: np.ndarray, gate: str) -> None:
        """Compute ``gate``'s statistics (G5's s.e., G4's p-value or P1's) for the (trial,
        threshold) ``cells``."""
        done = {"G4": self.g4_done, "G5": self.g5_done}.get(gate, self.p1_done)
        run = {"G4": self._g4, "G5": self._g5}.get(gate, self._p1)
        for t, j in zip(*np.nonzero(cells & ~done), strict=True):
            t, j = int(t), int(j)
            done[t, j] = True
            if self.fits[j][t].status == "ok":
                run(t, j)

    def _g5(self, t: int, j: int) -> None:
        """The bootstrap s.e. of each tested side's difference, as the fit stage computes it."""
        f = self.fits[j][t]
        for k, name in enumerate(("minus", "plus")):
            xi_side, n_side = self.sides[t][j][name]
            if xi_side is None or not math.isfinite(xi_side):
                continue
            self.side_se[(t, j, name)] = bootstrap_difference_se(
                f.xi,
                f.sigma,
                int(self.n_exc[t, j]),
                n_side,
                child_sequence(self.ss, j, t, 2, k),
                step=self.step,
                t_q=float(self.u[t, j]),
                side=self.side_th[(t, j, name)],
            )

    def _g4(self, t: int, j: int) -> None:
        ad = gof.anderson_darling_lattice(
            self.y[t][j],
            self.step,
            self.fits[j][t],
            n_boot=GOF_RESAMPLES,
            seed=child_sequence(self.ss, j, t, 1),
            passes_above=self.settings.alpha_of("G4"),
        )
        self.ad_p[t, j] = ad.pvalue

    def _p1(self, t: int, j: int) -> None:
        s, step, y, f = self.settings, self.step, self.y[t][j], self.fits[j][t]
        if p1_reads(s.p1_method, on_lattice=True) == "profile":
            p = inference.profile_ci(y, s.ci_level, f, step=step)
            self.profile_ci[t, j] = (p.low, p.high)
        else:
            self.profiles[(t, j)] = inference.profile_grid(y, f, step=step)

    def g5_failures(self, j: int) -> float:
        """The share of trials in which this condition alone fails G5 at band threshold ``j``
        (the registered rules): G5's false-failure rate where the tail is stable."""
        if "G5" in self.lazy:
            column = np.zeros(self.g5_done.shape, dtype=bool)
            column[:, j] = True
            self.need(column, "G5")
        fails = [
            not condition_stability(self.summary("c", t, j), self.settings).passed
            for t in range(self.trials)
        ]
        return float(np.mean(fails))

    def summary(self, name: str, t: int, j: int) -> ConditionSummary:
        """Condition ``name`` at band threshold ``j`` in trial ``t``; until :meth:`need`
        computed it, G4's p-value stands at 1 (a gate not yet computed is left out of the need
        mask)."""
        f = self.fits[j][t]
        (xm, nm), (xp, np_) = self.sides[t][j]["minus"], self.sides[t][j]["plus"]
        return ConditionSummary(
            condition=name,
            q=self.band[j],
            u=float(self.u[t, j]),
            n_exc=int(self.n_exc[t, j]),
            xi=f.xi,
            sigma=f.sigma,
            fit_status=f.status,
            xi_ci_low=float(self.ci[t, j, 0]),
            xi_ci_high=float(self.ci[t, j, 1]),
            ci_level=self.settings.ci_level,
            ad_pvalue=float(self.ad_p[t, j]) if self.g4_done[t, j] else 1.0,
            xi_minus=xm,
            xi_plus=xp,
            n_minus=nm,
            n_plus=np_,
            se_minus=self.side_se.get((t, j, "minus")),
            se_plus=self.side_se.get((t, j, "plus")),
            profile_ci_low=float(self.profile_ci[t, j, 0]),
            profile_ci_high=float(self.profile_ci[t, j, 1]),
            profile=self.profiles.get((t, j)),
            lattice=True,
        )
