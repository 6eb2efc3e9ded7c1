"""Speed of Acharyya et al. (2025)'s design (Algorithm C) and energy test, against plain peers in
one run.

Run by path: ``python tests/benchmarks/bench_perturbation.py`` (not collected by pytest).

1. ``design(.3, .5, B, .05)`` at B = 2·10³, 10⁴, 5·10⁴ (target: ≤ 1 s at 5·10⁴ on 2 cores) against
   a plain Algorithm C: every m, bisection over J with the exact size on the full p_t grid
   (``exact_size``) and the average power recomputed from scratch; both must give the same design.
2. ``energy_test`` (R = 1,000 permutations) against ``dcor.homogeneity.energy_test`` on the same
   data, 200 + 200 responses of dimension 384 (a sentence-encoder width).
3. ``energy_test`` on repeated responses, the pooled test of the perturbation example (500
   against 8,000 responses of two distinct texts, dimension 16, R = 999), against the all-pairs
   computation that relabels all 8,500 rows (the same statistic's bits and p-value required).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from tailgate.analyses.perturbation import statistics as P

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyses.test_energy_ties import all_pairs_energy_test


def plain_design(a: float, b: float, budget: int, alpha: float) -> tuple[int, int, int, float]:
    best = (-1.0, 0, 0, 0)
    m = 1
    while m == 1 or m * (m + 1) <= budget:
        n = budget // (m + 1)
        lo, hi = -1, n
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if P.exact_size(a, b, m, n, mid) <= alpha:
                hi = mid
            else:
                lo = mid
        power = P.average_power(a, b, m, n, hi)
        if power > best[0]:
            best = (power, m, n, hi)
        m += 1
    return best[1], best[2], best[3], best[0]


def timed(f, *args, repeat: int = 3):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f(*args)
        times.append(time.perf_counter() - t)
    return out, min(times)


def bench_design() -> None:
    for budget in (2_000, 10_000, 50_000):
        d, ours = timed(P.design, 0.3, 0.5, budget, 0.05)
        ref, plain = timed(plain_design, 0.3, 0.5, budget, 0.05, repeat=1)
        same = (d.m, d.n, d.J) == ref[:3] and abs(d.average_power - ref[3]) < 1e-12
        print(
            f"design B={budget:>6}: (m, n, tau, AP) = ({d.m}, {d.n}, {d.tau:.4f}, "
            f"{d.average_power:.4f})  ours {ours:.3f} s  plain {plain:.3f} s  "
            f"ratio {plain / ours:.1f}x  same design: {same}"
        )


def bench_energy() -> None:
    import dcor

    g = np.random.default_rng(0)
    x = g.normal(size=(200, 384))
    y = g.normal(0.02, size=(200, 384))
    dcor.homogeneity.energy_test(x[:5], y[:5], num_resamples=5)  # compile numba kernels first
    res, ours = timed(P.energy_test, x, y, 1000, 1)
    ref, peer = timed(
        lambda: dcor.homogeneity.energy_test(x, y, num_resamples=1000, random_state=0), repeat=1
    )
    print(
        f"energy 200+200 x 384, R=1000: E ours {res.statistic:.6f} dcor {float(ref.statistic):.6f}"
        f"  p ours {res.pvalue:.3f} dcor {ref.pvalue:.3f}  ours {ours:.3f} s  dcor {peer:.3f} s"
        f"  ratio {peer / ours:.1f}x"
    )


def bench_energy_repeated() -> None:
    g = np.random.default_rng(0)
    two = g.normal(size=(2, 16)).astype(np.float32)
    x, y = two[(g.random(500) < 0.72).astype(int)], two[(g.random(8000) < 0.40).astype(int)]
    res, ours = timed(P.energy_test, x, y, 999, 1, repeat=1)
    (stat, pvalue), plain = timed(all_pairs_energy_test, x, y, 999, 1, repeat=1)
    same = res.statistic.hex() == stat.hex() and res.pvalue == pvalue
    print(
        f"energy 500+8000 x 16, two distinct rows, R=999: ours {ours:.2f} s  all pairs "
        f"{plain:.2f} s  ratio {plain / ours:.1f}x  same statistic bits and p-value: {same}"
    )


if __name__ == "__main__":
    bench_design()
    bench_energy()
    bench_energy_repeated()
