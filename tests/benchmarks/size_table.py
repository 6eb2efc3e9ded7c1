"""Size of the tests on the data LLM evaluations produce: tied and continuous scores.

Run by path: ``python tests/benchmarks/size_table.py [--reps M]`` (not collected by pytest).
Every cell draws M data sets under its null hypothesis (two samples from one distribution) and
prints the rejection rate with its Monte Carlo standard error, beside the nominal level:

1. the dominance analysis's distinctness guard (two-sample midrank Anderson–Darling with the
   permutation p-value, Scholz & Stephens 1987; :func:`tailgate.analyses.dominance.distinctness`)
   at α = 0.05 and at α′ = α/k² = 0.0125 (k = 2), on continuous data and on 2, 3, 5 and 9 equally
   likely levels, n = 50, 200, 1,000 per sample; once with the samples in each order, which must
   give the same p-value;
2. the same rows for the scipy reference (``anderson_ksamp(midrank=True)``, asymptotic p): what
   the guard replaced;
3. the energy test of Acharyya et al. (2025) (:func:`tailgate.analyses.perturbation.energy_test`,
   199 resamples) on one-hot embeddings of 3 categories, n = 30 and 100;
4. the two-sample likelihood-ratio test of ξ_A = ξ_B
   (:func:`tailgate.stats.likelihood_ratio.lr_test`) at n = 50 / 80, χ² and Bartlett-corrected
   (:func:`bartlett_corrected`), ξ = −0.2 and 0.2;
5. the dominance analysis's tests of Nitsure et al. (2024) at a null boundary, the paper's normal
   bound (``calibration: normal``, Eqs. 11–13) beside the default ``logit_percentile`` (methods
   note D7), k = 2 at α/k² = ``--level`` (0.05) with B = ``--resamples``: the absolute ε₀-test
   of "N(0.5, 2) dominates N(0, 1)" with ε₀ the population ratio (0.1677 first order, 0.4447
   second), n = 500 and 2,000, and the relative test of "N(0, 1) R-FSD-dominates N(0, 2)"
   (Δε = 0); each with a power column: the first sample shifted by +0.3·√(500/n) (absolute) or
   +0.2·√(500/n) (relative), a local alternative, so that power is not 1 at n = 2,000 either;
   ``--only boundary``: the sizes alone (5a), cheap enough for M = 1,000.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

from tailgate.analyses.dominance.statistics import (
    bootstrap_ratios,
    distinctness,
    dominance_from_replicates,
)
from tailgate.analyses.perturbation import energy_test
from tailgate.stats import likelihood_ratio

LEVELS = (None, 2, 3, 5, 9)  # None: continuous
SIZES = (50, 200, 1000)


def _draw(rng: np.random.Generator, levels: int | None, n: int) -> np.ndarray:
    if levels is None:
        return rng.standard_normal(n)
    return rng.integers(0, levels, n).astype(np.float64)


def _rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{p:.3f} ± {math.sqrt(max(p * (1 - p), 1e-12) / reps):.3f}"


def guard_rows(reps: int) -> None:
    print("\n1-2. Distinctness guard vs scipy anderson_ksamp(midrank=True), same distribution")
    print(f"{'levels':>10} {'n':>5} | {'guard 0.05':>14} {'guard 0.0125':>14} {'order':>6} | "
          f"{'scipy 0.05':>14}")  # fmt: skip
    for levels in LEVELS:
        for n in SIZES:
            rng = np.random.default_rng([levels or 0, n])
            g05 = g0125 = ref = 0
            symmetric = True
            for r in range(reps):
                x, y = _draw(rng, levels, n), _draw(rng, levels, n)
                p = distinctness([x, y], 0.0125, seed=r)[0, 1]
                if r < 20:  # the same p whichever sample comes first
                    symmetric &= bool(p == distinctness([y, x], 0.0125, seed=r)[0, 1])
                g05 += p <= 0.05
                g0125 += p <= 0.0125
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref += stats.anderson_ksamp([x, y], midrank=True).pvalue <= 0.05
            name = "continuous" if levels is None else f"{levels}"
            print(f"{name:>10} {n:>5} | {_rate(g05, reps):>14} {_rate(g0125, reps):>14} "
                  f"{'same' if symmetric else 'DIFF':>6} | {_rate(ref, reps):>14}")  # fmt: skip


def energy_rows(reps: int) -> None:
    print("\n3. Energy test, one-hot embeddings of 3 categories, same distribution (199 resamples)")
    for n in (30, 100):
        rng = np.random.default_rng([3, n])
        hits = {0.05: 0, 0.10: 0}
        for r in range(reps):
            x = np.eye(3)[rng.integers(0, 3, n)]
            y = np.eye(3)[rng.integers(0, 3, n)]
            p = energy_test(x, y, 199, r).pvalue
            for a in hits:
                hits[a] += p <= a
        print(
            f"  n = {n:>4}: " + ", ".join(f"size at {a}: {_rate(h, reps)}" for a, h in hits.items())
        )


def lr_rows(reps: int) -> None:
    print("\n4. LR test of xi_A = xi_B at n = 50 / 80 (GPD, sigma = 1), level 0.05")
    for xi in (-0.2, 0.2):
        rng = np.random.default_rng([int(10 * xi) + 10, 50, 80])
        raw = corrected = done = 0
        for _ in range(reps):
            a = stats.genpareto.rvs(xi, size=50, random_state=rng)
            b = stats.genpareto.rvs(xi, size=80, random_state=rng)
            t = likelihood_ratio.lr_test(a, b)
            if not math.isfinite(t.statistic):
                continue
            done += 1
            raw += t.pvalue < 0.05
            corrected += likelihood_ratio.bartlett_corrected(t, 50, 80).pvalue < 0.05
        print(f"  xi = {xi:+.1f}: chi2 {_rate(raw, done)}, Bartlett {_rate(corrected, done)} "
              f"({done} fits)")  # fmt: skip


#: population ε_W2, ε_IQ of "N(0.5, 2) dominates N(0, 1)" (quadrature, tests/analyses)
BOUNDARY_EPS = {1: 0.16771, 2: 0.44473}
CALIBRATIONS = ("normal", "logit_percentile")


def _dominance_cell(
    reps: int, resamples: int, n: int, shift: float, relative: bool, level: float
) -> dict[tuple[int, str], int]:
    """Rejections of "sample 1 dominates sample 2" per (order, calibration) over ``reps`` data
    sets (k = 2, α = 4·``level`` so that α/k² = ``level``); one set of replicates per data set
    serves both calibrations, and the guard uses its asymptotic p (the distributions differ)."""
    hits = {(o, c): 0 for o in (1, 2) for c in CALIBRATIONS}
    rng = np.random.default_rng([n, int(1000 * shift), int(relative)])
    eps0 = tuple(BOUNDARY_EPS.values())
    for r in range(reps):
        if relative:
            s = [rng.normal(shift, 1.0, n), rng.normal(0.0, 2.0, n)]
        else:
            s = [rng.normal(0.5 + shift, 2.0, n), rng.normal(0.0, 1.0, n)]
        boot, guard = bootstrap_ratios(s, resamples, r), distinctness(s)
        for c in CALIBRATIONS:
            for o in (1, 2):
                t = dominance_from_replicates(boot, o, 4 * level, eps0, False, guard, c)
                hits[(o, c)] += bool(t.wins[0, 1] if relative else t.abs_wins[o - 1, 0, 1])
    return hits


def dominance_rows(reps: int, resamples: int, level: float) -> None:
    print(
        f"\n5. Dominance tests at a null boundary, α/k² = {level:g}, B = {resamples}: size, power"
    )
    print(f"{'test':>22} {'n':>5} | {'size normal':>14} {'size calibrated':>15} | "
          f"{'power normal':>14} {'power calibrated':>16}")  # fmt: skip
    cells = [(False, 500), (False, 2000), (True, 500), (True, 2000)]
    for relative, n in cells:
        size = _dominance_cell(reps, resamples, n, 0.0, relative, level)
        local = math.sqrt(500 / n)
        shift = (0.2 if relative else 0.3) * local
        power = _dominance_cell(reps, resamples, n, shift, relative, level)
        for o in (1,) if relative else (1, 2):
            name = "relative, order 1" if relative else f"absolute, order {o}"
            print(f"{name:>22} {n:>5} | {_rate(size[(o, 'normal')], reps):>14} "
                  f"{_rate(size[(o, 'logit_percentile')], reps):>15} | "
                  f"{_rate(power[(o, 'normal')], reps):>14} "
                  f"{_rate(power[(o, 'logit_percentile')], reps):>16}")  # fmt: skip


def boundary_size_rows(reps: int, resamples: int, level: float) -> None:
    """Size only of the tests at their null boundaries (row 5 without its power columns): cheap
    enough for M = 1,000 data sets a cell."""
    print(f"\n5a. Dominance tests at a null boundary, α/k² = {level:g}, B = {resamples}: size")
    print(f"{'test':>22} {'n':>5} | {'size normal':>14} {'size calibrated':>15}")
    for relative, n in ((False, 500), (False, 2000), (True, 500), (True, 2000)):
        size = _dominance_cell(reps, resamples, n, 0.0, relative, level)
        for o in (1,) if relative else (1, 2):
            name = "relative, order 1" if relative else f"absolute, order {o}"
            print(f"{name:>22} {n:>5} | {_rate(size[(o, 'normal')], reps):>14} "
                  f"{_rate(size[(o, 'logit_percentile')], reps):>15}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="data sets per cell (M)")
    parser.add_argument("--resamples", type=int, default=200, help="B of the dominance rows")
    parser.add_argument(
        "--only",
        choices=("dominance", "boundary"),
        help="only the dominance rows (5), or only their sizes (5a)",
    )
    parser.add_argument("--level", type=float, default=0.05, help="α/k² of the dominance rows")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.only is None:
        guard_rows(args.reps)
        energy_rows(args.reps)
        lr_rows(args.reps)
    if args.only == "boundary":
        boundary_size_rows(args.reps, args.resamples, args.level)
    else:
        dominance_rows(args.reps, args.resamples, args.level)
    print(f"\n({time.perf_counter() - start:.0f} s, M = {args.reps})")


if __name__ == "__main__":
    main()
