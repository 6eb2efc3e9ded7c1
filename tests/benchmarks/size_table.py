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
4. the two-sample likelihood-ratio test of ξ_A = ξ_B (:func:`tailgate.stats.inference.lr_test`)
   at n = 50 / 80, χ² and Bartlett-corrected (:func:`bartlett_corrected`), ξ = −0.2 and 0.2.
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

from tailgate.analyses.dominance import distinctness
from tailgate.analyses.perturbation import energy_test
from tailgate.stats import inference

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
            t = inference.lr_test(a, b)
            if not math.isfinite(t.statistic):
                continue
            done += 1
            raw += t.pvalue < 0.05
            corrected += inference.bartlett_corrected(t, 50, 80).pvalue < 0.05
        print(f"  xi = {xi:+.1f}: chi2 {_rate(raw, done)}, Bartlett {_rate(corrected, done)} "
              f"({done} fits)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="data sets per cell (M)")
    args = parser.parse_args()
    start = time.perf_counter()
    guard_rows(args.reps)
    energy_rows(args.reps)
    lr_rows(args.reps)
    print(f"\n({time.perf_counter() - start:.0f} s, M = {args.reps})")


if __name__ == "__main__":
    main()
