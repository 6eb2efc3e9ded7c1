"""Speed of ERRORQUAKE (2026)'s severity analysis against a ``powerlaw``-based loop, in one run.

Run by path: ``python tests/benchmarks/bench_severity.py`` (not collected by pytest).

Data: 21 conditions × 10,000 responses on the grid 0, 0.5, …, 4 (Gutenberg–Richter tails, b from
0.6 to 1.4, error rates 0.2–0.6). Ours: ε with Wilson CI, KS m_c, all b estimators, B = 2,000
multinomial resamples with m_c re-selected in each, the five families with BIC and all ten pairwise
tests, and the headline disjoint-pair count with its CI (target ≤ 2 s on 2 cores).

Peer: the same bootstrap with ``powerlaw`` 2.0 (``Fit(x', discrete=True, xmax=8)`` on the rescaled
integer grid x' = 2x, which selects x_min by KS itself, then b = 2λ'/ln 10 from its exponential),
and ``distribution_compare`` for the families. It is timed on the first 10 resamples of one
condition and extrapolated linearly to 21 × 2,000 (stated in the output).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
from tailgate.analyses.severity import statistics as S

GRID = S.make_grid()


def catalogue(g: np.random.Generator, n: int, b: float, eps: float) -> np.ndarray:
    p = 10.0 ** (-b * 0.5 * np.arange(8))
    p /= p.sum()
    errors = g.binomial(n, eps)
    return np.concatenate([[n - errors], g.multinomial(errors, p)])


def ours(counts: list[np.ndarray]) -> float:
    t = time.perf_counter()
    fits = [
        S.analyse_condition(f"c{i}", c, GRID, resamples=2000, seed=i) for i, c in enumerate(counts)
    ]
    for c in counts:
        S.compare_families(c, GRID)
    count = S.disjoint_pair_count(fits)
    elapsed = time.perf_counter() - t
    print(f"ours: 21 conditions, B = 2000 with m_c re-selection, 5 families: {elapsed:.2f} s")
    print(f"  headline disjoint-CI count {count.statistic} {tuple(count.confidence_interval)}")
    return elapsed


def peer(counts: list[np.ndarray], resamples: int = 10) -> float:
    import powerlaw

    c = counts[0]
    gen = np.random.default_rng(0)
    reps = gen.multinomial(int(c.sum()), c / c.sum(), size=resamples)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in reps:
            data = np.repeat(np.arange(1, 9), r[1:])
            fit = powerlaw.Fit(data, discrete=True, xmax=8, verbose=False)
            _ = 2 * fit.exponential.Lambda / math.log(10)
        per_resample = (time.perf_counter() - t) / resamples
        data = np.repeat(np.arange(1, 9), c[1:])
        t = time.perf_counter()
        fit = powerlaw.Fit(data, discrete=True, xmin=1, xmax=8, verbose=False)
        names = ["power_law", "truncated_power_law", "exponential", "stretched_exponential"]
        names.append("lognormal")
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                fit.distribution_compare(a, b)
        families = time.perf_counter() - t
    total = 21 * (2000 * per_resample + families)
    print(
        f"powerlaw loop: {per_resample * 1e3:.1f} ms per resample (10 timed), families "
        f"{families:.2f} s per condition; extrapolated to 21 × 2000: {total:.0f} s"
    )
    return total


if __name__ == "__main__":
    g = np.random.default_rng(2026)
    truth = [(0.6 + 0.04 * i, 0.2 + 0.02 * (i % 11)) for i in range(21)]
    counts = [catalogue(g, 10_000, b, e) for b, e in truth]
    ours(counts)  # warm-up
    mine = ours(counts)
    theirs = peer(counts)
    print(f"ratio (powerlaw / ours): {theirs / mine:.0f}x")
