"""Speed of the dominance tests of Nitsure et al. (2024) against deepsig, measured in one run.

Run by path: ``python tests/benchmarks/bench_dominance.py [--deepsig-rounds R]`` (not collected by
pytest). Issue 11's target: k = 12 conditions, n = 5,000 each, B = 1,000: ε-FSD and ε-SSD for every
ordered pair with their bootstrap σ, the absolute (ε₀ = 0.08, 0.25, 0.4) and relative tests, Borda
ranks — ≤ 1 s on 2 cores (the paper's own code: 17.7 s on 2 cores), peak memory ≤ 1 GB.

The peer is deepsig's ``multi_aso`` (ε-FSD only) on the same data with ``R`` bootstrap rounds
(default 2; 001 used 3 and reports 15 min 50 s), timed at 1 and R rounds and extrapolated
linearly to B = 1,000; the output says so. The first call of tailgate's kernels compiles them
(numba, cached on disk afterwards): timed separately and left out of the comparison.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from tailgate.analyses.dominance.statistics import dominance_tests_orders


def data(k: int = 12, n: int = 5000) -> list[np.ndarray]:
    rng = np.random.default_rng(20260615)
    return [rng.normal(0.02 * i, 1 + 0.03 * i, n) for i in range(k)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--deepsig-rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    samples = data()
    t0 = time.perf_counter()
    dominance_tests_orders(samples[:2], (1, 2), 4, 0.05, (0.25,), 0)
    print(f"first call (compile or load the numba cache): {time.perf_counter() - t0:.2f} s")
    times = {}
    for threads in (1, 2):
        best = np.inf
        for r in range(args.repeats):
            t0 = time.perf_counter()
            res = dominance_tests_orders(
                samples, (1, 2), 1000, 0.05, (0.08, 0.25, 0.4), r, threads=threads
            )
            best = min(best, time.perf_counter() - t0)
        times[threads] = best
        print(
            f"tailgate, k = 12, n = 5,000, B = 1,000, both orders, all tests, {threads} "
            f"thread(s): {best:.3f} s (best of {args.repeats})"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process: {peak:.0f} MB")
    print(f"R-SSD ranks: {res[2].ranks.tolist()}; R-FSD ranks: {res[1].ranks.tolist()}")
    print(f"vs the paper's own code (17.7 s on 2 cores): {17.7 / times[2]:.1f}x faster")
    try:
        from deepsig import multi_aso
    except ImportError:
        print("deepsig is not installed (pip install deepsig==1.2.8): no peer timing")
        return
    scores = {f"m{i}": s for i, s in enumerate(samples)}
    spent = {}
    for rounds in (1, args.deepsig_rounds):
        t0 = time.perf_counter()
        multi_aso(scores, num_bootstrap_iterations=rounds, num_jobs=1, show_progress=False, seed=1)
        spent[rounds] = time.perf_counter() - t0
        print(f"deepsig multi_aso, {rounds} bootstrap round(s), 1 job: {spent[rounds]:.1f} s")
    r = args.deepsig_rounds
    per_round = (spent[r] - spent[1]) / (r - 1) if r > 1 else spent[1]
    fixed = spent[1] - per_round
    extrapolated = fixed + 1000 * per_round
    print(
        f"deepsig multi_aso extrapolated to B = 1,000 (linear in rounds): {extrapolated:.0f} s "
        f"for ε-FSD only; tailgate (both orders, 1 thread) is {extrapolated / times[1]:.0f}x "
        "faster"
    )


if __name__ == "__main__":
    main()
