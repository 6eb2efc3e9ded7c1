"""Sample-size bound for ξ separation (Eq. 2 of Zhou (2026), Section 4).

By the Smith (1987) asymptotic, √n_exc (ξ̂ − ξ) → N(0, (1 + ξ)²) for ξ > −1/2, so the two-sample
z statistic for Δξ between two conditions with n_exc exceedances each has standard error
σ_Δ = (1 + ξ̄) √(2 / n_exc). Eq. 2 inverts the power of that z-test:

    n_exc ≥ 2 (z_{α/2} + z_β)² (1 + ξ̄)² / Δξ².

It is a *necessary* bound for the protocol's P1∧P2 rule, not a sufficient one (App. E of Zhou
(2026)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailgate.lazy import lazy_module
from tailgate.stats import gpd
from tailgate.stats.gof import sample_gpd
from tailgate.stats.gpd import RowFits
from tailgate.stats.profile import STATUS_NO_CONVERGENCE, STATUS_OK, newton_rows

# norm.cdf and norm.ppf are scipy.stats' own kernels special.ndtr and special.ndtri; loaded on
# first use, so that importing this module (the gates, the CLI) loads no scipy; planning a run
# that evaluates the Eq. 2 bound still loads it
special = lazy_module("scipy.special")

__all__ = [
    "PassRate",
    "RecoveryGrid",
    "achieved_power",
    "percentile_cis",
    "prompts_required",
    "recovery_grid",
    "required_exceedances",
    "simulate_pass_rate",
]


def _check(delta_xi: float, alpha: float, xi_bar: float) -> None:
    if not delta_xi > 0:
        raise ValueError(f"delta_xi must be > 0, got {delta_xi!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not xi_bar > -0.5:
        raise ValueError(f"xi_bar must be > -1/2 (Smith asymptotic), got {xi_bar!r}")


def required_exceedances(
    delta_xi: float, alpha: float = 0.05, power: float = 0.80, xi_bar: float = 0.0
) -> int:
    """n_exc* of Eq. 2 of Zhou (2026): exceedances per condition for ``power`` at two-sided
    ``alpha``.

    Table 1 of Zhou (2026): Δξ = 0.05, 0.07, 0.10, 0.20 → 6280, 3204, 1570, 393.
    """
    _check(delta_xi, alpha, xi_bar)
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    z = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    n = 2 * z**2 * (1 + xi_bar) ** 2 / delta_xi**2
    # round away float noise before the ceiling (an exact integer bound must not gain one)
    return math.ceil(round(n, 9))


def achieved_power(
    n_exc: float, delta_xi: float, alpha: float = 0.05, xi_bar: float = 0.0
) -> float:
    """Power of the two-sided two-sample z-test behind Eq. 2 of Zhou (2026) at ``n_exc`` per
    condition.

    Both rejection tails are counted: Φ(d − z_{α/2}) + Φ(−d − z_{α/2}) with
    d = Δξ √(n_exc / 2) / (1 + ξ̄).
    """
    _check(delta_xi, alpha, xi_bar)
    if n_exc < 0:
        raise ValueError(f"n_exc must be >= 0, got {n_exc!r}")
    d = delta_xi * math.sqrt(n_exc / 2.0) / (1 + xi_bar)
    z = special.ndtri(1 - alpha / 2)
    return float(special.ndtr(d - z) + special.ndtr(-d - z))


def prompts_required(
    delta_xi: float,
    q: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.80,
    xi_bar: float = 0.0,
) -> int:
    """Prompts per condition so that n_exc* of Eq. 2 lie above the q-quantile (Table 1 of Zhou
    (2026)).

    n_exc* / (1 − q), rounded up: Δξ = 0.10 at q = 0.95 → 31,400.
    """
    if not 0 < q < 1:
        raise ValueError(f"threshold quantile q must be in (0, 1), got {q!r}")
    n_exc = required_exceedances(delta_xi, alpha, power, xi_bar)
    return math.ceil(round(n_exc / (1.0 - q), 6))


# ---------------------------------------------------------------------------------------------
# Synthetic recovery of the P1 ∧ P2 rule (App. E of Zhou (2026))


@dataclass(frozen=True)
class PassRate:
    """Simulated PASS rate of P1 ∧ P2 for one (Δξ_true, n_exc) cell of App. E of Zhou (2026)."""

    delta_xi: float
    n_exc: int
    passes: int
    trials: int
    resamples: int
    level: float
    delta_floor: float
    xi_a: float

    @property
    def rate(self) -> float:
        return self.passes / self.trials

    @property
    def mc_se(self) -> float:
        """Binomial Monte Carlo standard error of :attr:`rate`."""
        p = self.rate
        return math.sqrt(p * (1.0 - p) / self.trials)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rate": self.rate, "mc_se": self.mc_se}


def _child(ss: np.random.SeedSequence, *keys: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, *keys))


def percentile_cis(
    samples: np.ndarray,
    resamples: int,
    levels: Sequence[float],
    rngs: Sequence[np.random.Generator],
    *,
    workers: int = 1,
) -> tuple[RowFits, np.ndarray]:
    """Fits of every row of ``samples`` (r, n) and their percentile-bootstrap CIs for ξ.

    Row i resamples ``resamples`` times from ``rngs[i]``; the replicates of a chunk of rows are
    refitted in one vectorised Newton call, warm-started at each row's own fit, with boundary
    replicates at ξ = −1 as in :meth:`tailgate.stats.gpd.GPDBootstrap.ci`. ``workers`` threads
    process the chunks (numpy releases the GIL; the result does not depend on it). Returns the
    fits and ``ci[i, j] = (low, high)`` at ``levels[j]`` (NaN where the row has no interior fit).
    """
    r, n = samples.shape
    fits = gpd.fit_rows(samples)
    ci = np.full((r, len(levels), 2), math.nan)
    q = []
    for lvl in levels:
        a = (1.0 - float(lvl)) / 2.0
        q += [a, 1.0 - a]
    chunk = max(1, _CHUNK_ELEMENTS // (resamples * n))
    t_row = np.where(fits.status == STATUS_OK, fits.xi / fits.sigma, 0.0)

    def run(lo: int) -> None:
        hi = min(lo + chunk, r)
        x = np.concatenate(
            [
                np.take(samples[i], rngs[i].integers(0, n, size=(resamples, n)))
                for i in range(lo, hi)
            ]
        )
        ymax = x.max(axis=1)
        res = newton_rows(x, np.repeat(t_row[lo:hi], resamples), ymax=ymax)
        boot = gpd._finish_rows(x, ymax, res)
        xi = boot.xi.reshape(hi - lo, resamples)
        xi = np.where(boot.status.reshape(hi - lo, resamples) == STATUS_NO_CONVERGENCE, np.nan, xi)
        with np.errstate(all="ignore"):
            qs = np.nanquantile(xi, q, axis=1).T  # (rows, 2·levels)
        ci[lo:hi] = qs.reshape(hi - lo, len(levels), 2)

    starts = range(0, r, chunk)
    if workers <= 1 or len(starts) == 1:
        for lo in starts:
            run(lo)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, starts))
    ci[fits.status != STATUS_OK] = math.nan
    return fits, ci


#: elements of one stacked bootstrap matrix (bounds memory at ~25 MB per thread)
_CHUNK_ELEMENTS = 3_000_000


def simulate_pass_rate(
    delta_xi: float,
    n_exc: int,
    *,
    delta_floor: float = 0.10,
    level: float = 0.95,
    trials: int = 80,
    resamples: int = 80,
    seed: gpd.SeedLike = 0,
    xi_a: float = 0.0,
    workers: int | None = None,
) -> PassRate:
    """PASS rate of P1 ∧ P2 on synthetic GPD pairs with known Δξ (App. E of Zhou (2026)).

    Each trial draws y_A ~ GPD(ξ_A, 1) and y_B ~ GPD(ξ_A + Δξ, 1) of size ``n_exc``, fits both,
    builds ``level`` percentile-bootstrap CIs from ``resamples`` resamples, and passes iff the CIs
    do not overlap (P1) and |ξ̂_A − ξ̂_B| > ``delta_floor`` (P2). ``level`` must be P1's level
    as the gates apply it (1 − α/m under Bonferroni). Trial m uses child m of ``seed``; all
    trials' replicates are refitted together (:func:`percentile_cis`, ``workers`` threads; the
    result does not depend on it).
    """
    if n_exc < gpd.MIN_EXCEEDANCES or trials < 1 or resamples < 2:
        raise ValueError(
            f"need n_exc >= {gpd.MIN_EXCEEDANCES}, trials >= 1 and resamples >= 2, "
            f"got n_exc={n_exc}, trials={trials}, resamples={resamples}"
        )
    ss = gpd.seed_sequence_of(seed)
    rngs = [np.random.Generator(np.random.PCG64(_child(ss, m))) for m in range(trials)]
    ya = np.stack([sample_gpd(g, xi_a, 1.0, n_exc) for g in rngs])
    yb = np.stack([sample_gpd(g, xi_a + delta_xi, 1.0, n_exc) for g in rngs])
    w = max(1, int(workers or 1))
    fa, ca = percentile_cis(ya, resamples, [level], rngs, workers=w)
    fb, cb = percentile_cis(yb, resamples, [level], rngs, workers=w)
    ok = (fa.status == STATUS_OK) & (fb.status == STATUS_OK)
    p1 = (ca[:, 0, 1] < cb[:, 0, 0]) | (cb[:, 0, 1] < ca[:, 0, 0])
    p2 = np.abs(fa.xi - fb.xi) > delta_floor
    results = ok & p1 & p2
    return PassRate(
        float(delta_xi),
        int(n_exc),
        int(np.count_nonzero(results)),
        int(trials),
        int(resamples),
        float(level),
        float(delta_floor),
        float(xi_a),
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
    *,
    delta_floor: float = 0.10,
    level: float = 0.95,
    trials: int = 80,
    resamples: int = 80,
    seed: gpd.SeedLike = 0,
    alpha: float = 0.05,
    power: float = 0.80,
    xi_bar: float = 0.0,
    workers: int | None = None,
) -> RecoveryGrid:
    """The synthetic-recovery grid of App. E of Zhou (2026) with the Eq. 2 frontier.

    Condition A has ξ_A = ``xi_bar`` (the registered ξ̄), B has ξ̄ + Δξ; ``level`` and ``alpha``
    should be P1's level and α as the gates apply them, so the frontier and the rates are at
    the same level. Cell (i, j) uses child (i, j) of ``seed``.
    """
    ss = gpd.seed_sequence_of(seed)
    cells = tuple(
        simulate_pass_rate(
            d,
            n,
            delta_floor=delta_floor,
            level=level,
            trials=trials,
            resamples=resamples,
            seed=_child(ss, i, j),
            xi_a=xi_bar,
            workers=workers,
        )
        for i, d in enumerate(delta_xis)
        for j, n in enumerate(n_excs)
    )
    frontier = {float(d): required_exceedances(d, alpha, power, xi_bar) for d in delta_xis if d > 0}
    return RecoveryGrid(
        cells, tuple(float(d) for d in delta_xis), tuple(int(n) for n in n_excs), frontier
    )
