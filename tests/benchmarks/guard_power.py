"""What the dominance analysis's distinctness guard costs in power, and what it buys in size.

Run by path: ``python tests/benchmarks/guard_power.py [--reps M] [--resamples B] [--k K]
[--n N[,N…]] [--tail Q] [--levels L] [--guard-only]`` (not collected by pytest). k = ``--k``
samples of n = 300 (``--n``; a list gives a row per n), α = 0.05, so every pairwise test is at
α/k²: the first sample N(0, 1) shifted by ``--shift`` sd (with ``--tail Q``: only its values
above the standard normal's Q quantile), the others N(0, 1) (with ``--levels L``: each value
replaced by its level among L equiprobable cells of N(0, 1), tied data). The relative test of "1
R-FSD-dominates 2" (Nitsure et al. (2024), Algorithm 1) is counted with the guard (the pair's p
as :func:`tailgate.analyses.dominance.guard.distinctness` computes it: the midrank
Anderson–Darling statistic and the squared Wasserstein-2 distance, combined by their minimum
permutation p, stopping once p > α/k² is settled), with the Anderson–Darling permutation test
alone (Scholz & Stephens (1987), the guard before the W2 statistic joined it) and without any
guard (every pair taken as distinct), for the paper's normal bound and the default calibrated
one; with ``--shift 0`` the same counts are the sizes at the boundary Δε = 0, where the unguarded
test is known to be anti-conservative (``tests/analyses/test_dominance.py``). ``--guard-only``
counts the guard's rejections alone (no bootstrap, no A² alone). Each row gives the guard's mean
CPU seconds a pair.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

from size_table import _rate
from tailgate.analyses.dominance.guard import _pair_seed, distinct_permutation
from tailgate.analyses.dominance.statistics import (
    CALIBRATIONS,
    ad_permutation,
    bootstrap_ratios,
    dominance_from_replicates,
    guard_permutations,
)

ALPHA = 0.05
GUARDS = ("A² and W2", "A² alone", "none")


def _sample(rng: np.random.Generator, n: int, shift: float, cut: float, levels: int | None):
    z = rng.normal(0.0, 1.0, n)
    z = z + shift * (z > cut)
    if levels is None:
        return z
    return np.searchsorted(norm.ppf(np.arange(1, levels) / levels), z).astype(np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="data sets (M)")
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples B")
    parser.add_argument("--n", default="300", help="size of each sample (a list: a row per n)")
    parser.add_argument("--k", type=int, default=3, help="number of samples")
    parser.add_argument("--shift", type=float, default=0.2, help="shift of sample 1, in sd")
    parser.add_argument("--tail", type=float, default=None, help="shift only above this quantile")
    parser.add_argument("--levels", type=int, default=None, help="tied data on L levels")
    parser.add_argument("--guard-only", action="store_true", help="the guard's rejections only")
    args = parser.parse_args()
    k = args.k
    alpha_pair = ALPHA / k**2
    cut = -np.inf if args.tail is None else float(norm.ppf(args.tail))
    where = "" if args.tail is None else f" above its {args.tail:g} quantile"
    tied = "" if args.levels is None else f", {args.levels} levels"
    print(
        f"k = {k}, shift {args.shift:g} sd{where}{tied}, α = {ALPHA} (α/k² = {alpha_pair:.4f}), "
        f"B = {args.resamples}, {args.reps} data sets"
    )
    guards = GUARDS[:1] if args.guard_only else GUARDS
    head = f"{'n':>6} | {'CPU s':>7} | " + " | ".join(f"rejects ({g})" for g in guards[:2])
    if not args.guard_only:
        head += " | " + " | ".join(f"win {c} ({g})" for c in CALIBRATIONS for g in GUARDS)
    print(head)
    for n in (int(v) for v in args.n.split(",")):
        hits = {(c, g): 0 for c in CALIBRATIONS for g in GUARDS}
        rejects = dict.fromkeys(GUARDS[:2], 0)
        seconds = 0.0
        for r in range(args.reps):
            rng = np.random.default_rng([r, n, int(1000 * args.shift)])
            samples = [_sample(rng, n, args.shift, cut, args.levels)] + [
                _sample(rng, n, 0.0, cut, args.levels) for _ in range(k - 1)
            ]
            # the guard of the pair (1, 2) as distinctness() computes it (it decides wins[0, 1])
            perms, seed = guard_permutations(alpha_pair), _pair_seed(r, 0, 1)
            start = time.process_time()  # CPU time: the machine may be shared
            p12 = {GUARDS[0]: distinct_permutation(*samples[:2], perms, seed, alpha_pair)}
            seconds += time.process_time() - start
            if args.guard_only:
                rejects[GUARDS[0]] += bool(p12[GUARDS[0]] <= alpha_pair)
                continue
            p12[GUARDS[1]] = ad_permutation(samples[0], samples[1], perms, seed)[1]
            p12[GUARDS[2]] = 0.0
            boot = bootstrap_ratios(samples, args.resamples, r)
            for g in GUARDS[:2]:
                rejects[g] += bool(p12[g] <= alpha_pair)
            for g in GUARDS:
                guard = np.where(np.eye(k, dtype=bool), np.nan, 0.0)
                guard[0, 1] = guard[1, 0] = p12[g]
                for c in CALIBRATIONS:
                    t = dominance_from_replicates(boot, 1, ALPHA, (0.4,), False, guard, c)
                    hits[(c, g)] += bool(t.wins[0, 1])
        row = f"{n:>6} | {seconds / args.reps:>7.3f} | "
        row += " | ".join(_rate(rejects[g], args.reps) for g in guards[:2])
        if not args.guard_only:
            row += " | " + " | ".join(
                _rate(hits[(c, g)], args.reps) for c in CALIBRATIONS for g in GUARDS
            )
        print(row, flush=True)


if __name__ == "__main__":
    main()
