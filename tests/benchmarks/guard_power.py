"""What the dominance analysis's distinctness guard costs in power, and what it buys in size.

Run by path: ``python tests/benchmarks/guard_power.py [--reps M] [--resamples B] [--k K]
[--tail Q]`` (not collected by pytest). k = ``--k`` samples of n = 300 (``--n``), α = 0.05, so
every pairwise test is at α/k²: the first sample N(0, 1) shifted by ``--shift`` sd (with
``--tail Q``: only its values above the standard normal's Q quantile), the others N(0, 1). The
relative test of "1 R-FSD-dominates 2" (Nitsure et al. (2024), Algorithm 1) is counted with the
guard (:func:`tailgate.analyses.dominance.guard.distinct_permutation`: the midrank
Anderson–Darling statistic and the squared Wasserstein-2 distance, combined by their minimum
permutation p), with the Anderson–Darling permutation test alone (Scholz & Stephens (1987), the
guard before the W2 statistic joined it) and without any guard (every pair taken as distinct),
for the paper's normal bound and the default calibrated one; with ``--shift 0`` the same counts
are the sizes at the boundary Δε = 0, where the unguarded test is known to be
anti-conservative (``tests/analyses/test_dominance.py``).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="data sets (M)")
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples B")
    parser.add_argument("--n", type=int, default=300, help="size of each sample")
    parser.add_argument("--k", type=int, default=3, help="number of samples")
    parser.add_argument("--shift", type=float, default=0.2, help="shift of sample 1, in sd")
    parser.add_argument("--tail", type=float, default=None, help="shift only above this quantile")
    args = parser.parse_args()
    k = args.k
    alpha_pair = ALPHA / k**2
    cut = -np.inf if args.tail is None else float(norm.ppf(args.tail))
    hits = {(c, g): 0 for c in CALIBRATIONS for g in GUARDS}
    rejects = dict.fromkeys(GUARDS[:2], 0)
    start = time.perf_counter()
    for r in range(args.reps):
        rng = np.random.default_rng([r, args.n, int(1000 * args.shift)])
        first = rng.normal(0.0, 1.0, args.n)
        samples = [first + args.shift * (first > cut)] + [
            rng.normal(0.0, 1.0, args.n) for _ in range(k - 1)
        ]
        boot = bootstrap_ratios(samples, args.resamples, r)
        # the guard of the pair (1, 2) as distinctness() computes it (only it decides wins[0, 1])
        perms = guard_permutations(alpha_pair)
        seed = _pair_seed(r, 0, 1)
        p12 = {
            GUARDS[0]: distinct_permutation(samples[0], samples[1], perms, seed),
            GUARDS[1]: ad_permutation(samples[0], samples[1], perms, seed)[1],
            GUARDS[2]: 0.0,
        }
        for g in GUARDS[:2]:
            rejects[g] += bool(p12[g] <= alpha_pair)
        for g in GUARDS:
            guard = np.where(np.eye(k, dtype=bool), np.nan, 0.0)
            guard[0, 1] = guard[1, 0] = p12[g]
            for c in CALIBRATIONS:
                t = dominance_from_replicates(boot, 1, ALPHA, (0.4,), False, guard, c)
                hits[(c, g)] += bool(t.wins[0, 1])
    where = "" if args.tail is None else f" above its {args.tail:g} quantile"
    print(
        f"k = {k}, n = {args.n}, shift {args.shift:g} sd{where}, α = {ALPHA} "
        f"(α/k² = {alpha_pair:.4f}), B = {args.resamples}, {args.reps} data sets, "
        f"{time.perf_counter() - start:.0f} s"
    )
    for g in GUARDS[:2]:
        print(f"guard ({g}) rejects F1 = F2: {_rate(rejects[g], args.reps)}")
    print(f"{'calibration':>17} | " + " | ".join(f"{g:>14}" for g in GUARDS))
    for c in CALIBRATIONS:
        print(f"{c:>17} | " + " | ".join(f"{_rate(hits[(c, g)], args.reps):>14}" for g in GUARDS))


if __name__ == "__main__":
    main()
