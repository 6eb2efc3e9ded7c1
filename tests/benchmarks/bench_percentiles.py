"""Scale target of Guo et al. (2025)'s analysis: 8 checkpoints × 1,000,000 tokens, 1,000 sequence
resamples.

Run by path: ``python tests/benchmarks/bench_percentiles.py`` (not collected by pytest).
Target: ≤ 10 s and ≤ 1 GB on 2 cores. Data: 4,000 sequences of 250 tokens per checkpoint,
losses exp(μ_s + ε) in float32 (sequence effects make the windows of the bootstrap wide).
Ours: mean and seven percentiles of every replicate (exact, see the module docstring), paired
across checkpoints. Reference: a plain numpy loop that materialises each resample's tokens
(``np.repeat``) and calls ``np.percentile``, timed on 5 resamples of one checkpoint and
extrapolated to 8 × 1,000 (stated); the replicates of those 5 resamples must agree exactly.
The peak memory is the process's maximum resident set size (data included).
"""

from __future__ import annotations

import resource
import time

import numpy as np
from tailgate.analyses.percentiles import statistics as P


def make_data(g: np.random.Generator) -> dict[str, P.TokenLosses]:
    seq = np.repeat(np.arange(4000), 250)
    data = {}
    for c in range(8):
        mu = np.repeat(g.normal(0.0, 0.5, 4000), 250)
        losses = np.exp(mu + g.normal(size=seq.size) - 0.02 * c).astype(np.float32)
        data[f"step{c}"] = P.TokenLosses(losses, seq)
    return data


def plain(data: P.TokenLosses, W: np.ndarray) -> np.ndarray:
    x = data.losses.astype(np.float64)
    out = []
    for w in W:
        tokens = np.repeat(x, w[data.sequence].astype(np.int64))
        out.append([tokens.mean(), *np.percentile(tokens, P.DEFAULT_PERCENTILES)])
    return np.array(out)


if __name__ == "__main__":
    data = make_data(np.random.default_rng(0))
    t = time.perf_counter()
    boot = P.bootstrap_summaries(data, 1000, seeds=1)
    ours = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    W = P._sequence_weights(4000, 1000, 1)[:5]
    t = time.perf_counter()
    ref = plain(data["step0"], W)
    per = (time.perf_counter() - t) / 5
    same = np.allclose(ref, boot.replicates["step0"][:5], rtol=0, atol=1e-9)
    print(f"ours: 8 × 1e6 tokens, 1000 sequence resamples: {ours:.2f} s, peak RSS {peak:.0f} MB")
    print(
        f"plain numpy loop: {per:.3f} s per resample (5 timed), extrapolated to 8 × 1000: "
        f"{8000 * per:.0f} s; same replicates: {same}; ratio {8000 * per / ours:.0f}x"
    )
