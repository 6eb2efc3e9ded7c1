"""Synthetic recovery of the P1 ∧ P2 rule (App. E of Zhou (2026)).

The PASS rate of P1 ∧ P2, decided by the gates' own code (:mod:`tailgate.protocol.gates`), on
synthetic GPD pairs with known Δξ, over a grid of Δξ_true × n_exc beside the Eq. 2 frontier of
:mod:`tailgate.stats.power` (a necessary bound, not a sufficient one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from tailgate.protocol.gates import ConditionSummary, GateSettings, p1_gate, p2_gate
from tailgate.protocol.simulated_p1 import p1_interval, p1_rows
from tailgate.seeds import child_sequence
from tailgate.stats import gpd
from tailgate.stats.gof import sample_gpd
from tailgate.stats.power import required_exceedances

__all__ = ["PassRate", "RecoveryGrid", "recovery_grid", "simulate_pass_rate"]


@dataclass(frozen=True)
class PassRate:
    """Simulated PASS rate of P1 ∧ P2 for one (Δξ_true, n_exc) cell of App. E of Zhou (2026)."""

    delta_xi: float
    n_exc: int
    passes: int
    trials: int
    #: bootstrap resamples per fit (None: P1 by its stand-in or a likelihood method)
    resamples: int | None
    level: float
    delta_floor: float
    xi_a: float
    #: how P1 was computed (:func:`tailgate.protocol.simulated_p1.p1_interval`)
    p1: str = "percentile bootstrap"
    #: the trials that passed (for paired comparisons; not serialised)
    passed: tuple[int, ...] = field(default=(), compare=False)

    @property
    def rate(self) -> float:
        return self.passes / self.trials

    @property
    def mc_se(self) -> float:
        """Binomial Monte Carlo standard error of :attr:`rate`."""
        p = self.rate
        return math.sqrt(p * (1.0 - p) / self.trials)

    def to_dict(self) -> dict[str, Any]:
        d = {**asdict(self), "rate": self.rate, "mc_se": self.mc_se}
        del d["passed"]
        return d


def simulate_pass_rate(
    delta_xi: float,
    n_exc: int,
    settings: GateSettings | None = None,
    *,
    trials: int = 80,
    resamples: int | None = 80,
    seed: gpd.SeedLike = 0,
    xi_a: float = 0.0,
    workers: int | None = None,
) -> PassRate:
    """PASS rate of P1 ∧ P2 on synthetic GPD pairs with known Δξ (App. E of Zhou (2026)).

    Each trial draws y_A ~ GPD(ξ_A, 1) and y_B ~ GPD(ξ_A + Δξ, 1) of size ``n_exc``, fits both
    and applies P1 and P2 as the gates do (:func:`tailgate.protocol.gates.p1_gate`,
    :func:`~tailgate.protocol.gates.p2_gate`): P1 by the registered ``p1_method`` at P1's
    level, P2 at Δfloor. All trials' replicates are refitted together.

    Parameters
    ----------
    delta_xi : float
        The true Δξ = ξ_B − ξ_A.
    n_exc : int
        Exceedances per condition.
    settings : GateSettings or None, default None
        The registered rules (None: the paper's design, P1 at 95 %).
    trials : int, default 80
        Trials (pairs drawn).
    resamples : int or None, default 80
        Percentile-bootstrap resamples per fit (App. E: 80), or None for the validated
        stand-in (:mod:`tailgate.protocol.simulated_p1`).
    seed : SeedLike, default 0
        Trial m uses child m of it.
    xi_a : float, default 0.0
        ξ_A.
    workers : int or None, default None
        Threads that refit the replicates (None: one); the result does not depend on it.

    Returns
    -------
    PassRate
        The trials that pass P1 ∧ P2 among ``trials``, with the settings that decided them.

    Raises
    ------
    ValueError
        If ``n_exc`` is below ``gpd.MIN_EXCEEDANCES``, ``trials`` below 1 or ``resamples``
        below 2.

    References
    ----------
    Zhou (2026), Appendix E.
    """
    s = settings or GateSettings()
    if n_exc < gpd.MIN_EXCEEDANCES or trials < 1 or (resamples is not None and resamples < 2):
        raise ValueError(
            f"need n_exc >= {gpd.MIN_EXCEEDANCES}, trials >= 1 and resamples >= 2 (or None), "
            f"got n_exc={n_exc}, trials={trials}, resamples={resamples}"
        )
    ss = gpd.seed_sequence_of(seed)
    rngs = [np.random.Generator(np.random.PCG64(child_sequence(ss, m))) for m in range(trials)]
    ya = np.stack([sample_gpd(g, xi_a, 1.0, n_exc) for g in rngs])
    yb = np.stack([sample_gpd(g, xi_a + delta_xi, 1.0, n_exc) for g in rngs])
    w = max(1, int(workers or 1))
    rows = np.arange(trials)
    summaries = []
    for name, y in (("A", ya), ("B", yb)):
        fits = gpd.fit_rows(y)
        p1 = p1_rows(y, fits, rows, s, resamples, rngs, workers=w)
        summaries.append(
            [
                ConditionSummary(
                    condition=name,
                    q=0.0,
                    u=0.0,
                    n_exc=int(n_exc),
                    xi=float(fits.xi[t]),
                    sigma=float(fits.sigma[t]),
                    fit_status=gpd.status_name(int(fits.status[t])),
                    xi_ci_low=float(p1.ci[t, 0]),
                    xi_ci_high=float(p1.ci[t, 1]),
                    ci_level=s.ci_level,
                    ad_pvalue=math.nan,
                    xi_minus=None,
                    xi_plus=None,
                    profile_ci_low=float(p1.profile_ci[t, 0]),
                    profile_ci_high=float(p1.profile_ci[t, 1]),
                    profile=p1.profiles[t],
                )
                for t in rows
            ]
        )
    passed = tuple(
        t
        for t, (a, b) in enumerate(zip(*summaries, strict=True))
        if p1_gate(a, b, s).passed and p2_gate(a, b, s).passed
    )
    return PassRate(
        float(delta_xi),
        int(n_exc),
        len(passed),
        int(trials),
        None if resamples is None or s.p1_method != "percentile" else int(resamples),
        float(s.ci_level),
        float(s.delta_floor),
        float(xi_a),
        p1_interval(s, resamples),
        passed,
    )


@dataclass(frozen=True)
class RecoveryGrid:
    """App. E grid: PASS rates over Δξ_true × n_exc and the Eq. 2 frontier n_exc*(Δξ)."""

    cells: tuple[PassRate, ...]
    delta_xis: tuple[float, ...]
    n_excs: tuple[int, ...]
    frontier: dict[float, int]

    def rate(self, delta_xi: float, n_exc: int) -> float:
        for c in self.cells:
            if math.isclose(c.delta_xi, delta_xi) and c.n_exc == n_exc:
                return c.rate
        raise KeyError((delta_xi, n_exc))

    def to_dict(self) -> dict[str, Any]:
        return {
            "delta_xis": list(self.delta_xis),
            "n_excs": list(self.n_excs),
            "cells": [c.to_dict() for c in self.cells],
            "frontier": [{"delta_xi": d, "n_exc": n} for d, n in self.frontier.items()],
        }


def recovery_grid(
    delta_xis: Sequence[float] = (0.0, 0.05, 0.10, 0.15, 0.20),
    n_excs: Sequence[int] = (200, 500, 1000, 1500, 2000, 3000),
    settings: GateSettings | None = None,
    *,
    trials: int = 80,
    resamples: int | None = 80,
    seed: gpd.SeedLike = 0,
    power: float = 0.80,
    xi_bar: float = 0.0,
    workers: int | None = None,
) -> RecoveryGrid:
    """The synthetic-recovery grid of App. E of Zhou (2026) with the Eq. 2 frontier.

    Condition B has ξ̄ + Δξ; P1 and P2 follow ``settings`` as in :func:`simulate_pass_rate`,
    and the frontier is at P1's α as the gates apply it, so that the frontier and the rates
    are at the same level.

    Parameters
    ----------
    delta_xis : Sequence[float], default (0.0, 0.05, 0.10, 0.15, 0.20)
        The true Δξ of the grid's rows.
    n_excs : Sequence[int], default (200, 500, 1000, 1500, 2000, 3000)
        The exceedances per condition of its columns.
    settings : GateSettings or None, default None
        The registered rules (None: the paper's design).
    trials : int, default 80
        Trials per cell.
    resamples : int or None, default 80
        Bootstrap resamples per fit, or None for P1's stand-in (:func:`simulate_pass_rate`).
    seed : SeedLike, default 0
        Cell (i, j) uses child (i, j) of it.
    power : float, default 0.80
        The power of the Eq. 2 frontier.
    xi_bar : float, default 0.0
        ξ_A, the registered ξ̄.
    workers : int or None, default None
        Threads that refit the replicates; the result does not depend on it.

    Returns
    -------
    RecoveryGrid
        The cells, Δξ by Δξ and within each by n_exc, and the frontier n_exc*(Δξ) for every
        Δξ > 0.

    References
    ----------
    Zhou (2026), Appendix E; Section 4, Eq. 2.
    """
    s = settings or GateSettings()
    ss = gpd.seed_sequence_of(seed)
    cells = tuple(
        simulate_pass_rate(
            d,
            n,
            s,
            trials=trials,
            resamples=resamples,
            seed=child_sequence(ss, i, j),
            xi_a=xi_bar,
            workers=workers,
        )
        for i, d in enumerate(delta_xis)
        for j, n in enumerate(n_excs)
    )
    alpha = s.alpha_of("P1")
    frontier = {float(d): required_exceedances(d, alpha, power, xi_bar) for d in delta_xis if d > 0}
    return RecoveryGrid(
        cells, tuple(float(d) for d in delta_xis), tuple(int(n) for n in n_excs), frontier
    )
