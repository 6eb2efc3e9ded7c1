"""What the dominance analysis's distinctness guard costs in power, and what it buys in size.

Run by path: ``python tests/benchmarks/guard_power.py [--reps M] [--resamples B]`` (not collected
by pytest). k = 3 samples of n = 300 (``--n``), α = 0.05, so every pairwise test is at
α/k² = 0.0056: the first sample N(``--shift``, 1), the other two N(0, 1). The relative test of
"1 R-FSD-dominates 2" (Nitsure et al. (2024), Algorithm 1) is counted with the guard (the
midrank Anderson–Darling permutation test of F₁ = F₂ at α/k², Scholz & Stephens (1987)) and
without it (every pair taken as distinct), for the paper's normal bound and the default
calibrated one; with ``--shift 0`` the same counts are the sizes at the boundary Δε = 0, where the
unguarded test is known to be anti-conservative (``tests/analyses/test_dominance.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

from size_table import _rate
from tailgate.analyses.dominance.statistics import (
    CALIBRATIONS,
    _pair_seed,
    ad_permutation,
    bootstrap_ratios,
    dominance_from_replicates,
    guard_permutations,
)

K = 3
ALPHA = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300, help="data sets (M)")
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples B")
    parser.add_argument("--n", type=int, default=300, help="size of each sample")
    parser.add_argument("--shift", type=float, default=0.2, help="shift of sample 1, in sd")
    args = parser.parse_args()
    alpha_pair = ALPHA / K**2
    hits = {(c, g): 0 for c in CALIBRATIONS for g in (True, False)}
    guard_rejects = 0
    start = time.perf_counter()
    for r in range(args.reps):
        rng = np.random.default_rng([r, args.n, int(1000 * args.shift)])
        samples = [rng.normal(args.shift, 1.0, args.n)] + [
            rng.normal(0.0, 1.0, args.n) for _ in range(K - 1)
        ]
        boot = bootstrap_ratios(samples, args.resamples, r)
        # the guard of the pair (1, 2) as distinctness() computes it (only it decides wins[0, 1])
        perms = guard_permutations(alpha_pair)
        p12 = ad_permutation(samples[0], samples[1], perms, _pair_seed(r, 0, 1))[1]
        guard_rejects += bool(p12 <= alpha_pair)
        unguarded = np.where(np.eye(K, dtype=bool), np.nan, 0.0)
        guard = unguarded.copy()
        guard[0, 1] = guard[1, 0] = p12
        for c in CALIBRATIONS:
            for guarded in (True, False):
                p = guard if guarded else unguarded
                t = dominance_from_replicates(boot, 1, ALPHA, (0.4,), False, p, c)
                hits[(c, guarded)] += bool(t.wins[0, 1])
    print(
        f"k = {K}, n = {args.n}, shift {args.shift:g} sd, α = {ALPHA} (α/k² = {alpha_pair:.4f}), "
        f"B = {args.resamples}, {args.reps} data sets, {time.perf_counter() - start:.0f} s"
    )
    print(f"guard rejects F1 = F2: {_rate(guard_rejects, args.reps)}")
    print(f"{'calibration':>17} | {'with guard':>14} | {'without guard':>14}")
    for c in CALIBRATIONS:
        print(
            f"{c:>17} | {_rate(hits[(c, True)], args.reps):>14} | "
            f"{_rate(hits[(c, False)], args.reps):>14}"
        )


if __name__ == "__main__":
    main()
