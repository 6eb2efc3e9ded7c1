"""Bias of ξ̂ under the lattice threshold rule, by the direction the q-quantile is rounded.

Run by path: ``python tests/benchmarks/lattice_threshold_bias.py [--reps M]`` (not collected by
pytest). Scores are grades on a lattice of step h (each the lower end of its cell of width h) of
a latent variable whose GPD(ξ, σ = 1) tail holds only from its q-quantile u = 9 (q = 0.9): below
u the latent density is flat, 0.1 on [0, 9], the tail's density at u (continuous, but not the
GPD's rise below u), and the lattice is shifted by δh, δ uniform in [0, 1) per sample (it does not
know where u lies). At q the registered rule (:func:`tailgate.stats.lattice.exceedances`,
``down``) takes the threshold half a step below x_q, the smallest score at or above the
empirical q-quantile, so the grades tied at x_q are exceedances; ``up`` takes it half a step
above x_q (those grades are not). Each row prints, over M samples of n = 2,000 scores, the mean
ξ̂ − ξ of the discretised fit with its Monte Carlo s.e., its root mean square error, and the mean
exceedance count relative to (1 − q)·n. ``exact`` is the control: the latent GPD holds from 0,
where the registered rule is unbiased.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

from tailgate.stats import gpd, lattice
from tailgate.stats.gof import sample_gpd

SEED = 20261129
Q = 0.9
N = 2000


def scores(rng: np.random.Generator, xi: float, h: float, exact: bool) -> np.ndarray:
    """n grades of the latent variable (module docstring), each the lower end of its cell."""
    if exact:
        return np.floor(sample_gpd(rng, xi, 1.0, (N,)) / h) * h
    u = Q / (1 - Q)
    tail = rng.random(N) >= Q
    z = rng.random(N) * u
    z[tail] = u + sample_gpd(rng, xi, 1.0, (int(tail.sum()),))
    return np.floor(z / h + rng.random()) * h


def threshold_fit(x: np.ndarray, h: float, direction: str) -> tuple[float, int]:
    """ξ̂ and n_exc at Q with the threshold half a step below (``down``) or above (``up``) x_q."""
    ex = lattice.exceedances(x, Q, h)
    y = ex.y if direction == "down" else lattice.excesses(x, ex.u + h, h)
    f = gpd.fit(y, h)
    return (f.xi if f.status == "ok" else math.nan), int(y.size)


def row(
    xi: float, h: float, exact: bool, reps: int
) -> dict[str, tuple[float, float, float, float]]:
    rng = np.random.default_rng([SEED, round(100 * xi) + 100, round(100 * h), int(exact)])
    out: dict[str, list[tuple[float, int]]] = {"down": [], "up": []}
    for _ in range(reps):
        x = scores(rng, xi, h, exact)
        for d in out:
            out[d].append(threshold_fit(x, h, d))
    res = {}
    for d, v in out.items():
        err = np.array([e for e, _ in v]) - xi
        err = err[np.isfinite(err)]
        share = float(np.mean([m for _, m in v])) / ((1 - Q) * N)
        res[d] = (
            float(err.mean()),
            float(err.std(ddof=1) / math.sqrt(err.size)),
            float(math.sqrt(np.mean(err**2))),
            share,
        )
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    args = ap.parse_args()
    print(f"ξ̂ − ξ at q = {Q}, n = {N}, {args.reps} samples per row, seed {SEED}")
    print(" tail    ξ   h/σ  rounding    bias  ± s.e.   rmse   n_exc/(1−q)n")
    for exact in (False, True):
        for xi in (-0.2, 0.1, 0.3):
            for h in (0.5, 1.0):
                for d, (b, se, rmse, share) in row(xi, h, exact, args.reps).items():
                    kind = "exact" if exact else "from q"
                    print(
                        f"{kind:6s} {xi:5.2f} {h:4.1f}  {d:6s}  {b:+7.3f}  {se:5.3f}  {rmse:6.3f}"
                        f"   {share:5.2f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
