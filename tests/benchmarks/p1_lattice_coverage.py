"""Coverage of the ξ interval P1 reads on lattice data (methods note P10).

Run by path: ``python tests/benchmarks/p1_lattice_coverage.py [--reps M] [--resamples B]`` (not
collected by pytest). Every cell draws M samples of n_exc exceedances of a discretised GPD(ξ, σ = 1)
on a lattice of step h (each exceedance at the midpoint of its cell, the lattice rule's form) and
prints, with Monte Carlo standard errors, the share of 95 % intervals that hold the true ξ:

* ``profile``: the discretised profile-likelihood interval, what P1 reads on a lattice under
  every CI method (``percentile`` included, :func:`tailgate.protocol.gates.p1_reads`);
* ``percentile`` (with ``--resamples B`` > 0, the first ``--percentile-reps`` samples): the
  percentile bootstrap of the discretised fit, what ``percentile`` read on a lattice before;
* ``wald``: ξ̂ ± 1.96·se from the grouped model's expected information.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))

from tailgate.stats import gpd, inference
from tailgate.stats.gof import sample_gpd

SEED = 20261129
LEVEL = 0.95


def lattice_sample(rng: np.random.Generator, xi: float, n: int, h: float) -> np.ndarray:
    """n exceedances of GPD(ξ, 1) rounded to the midpoints (k + ½)h of their cells."""
    z = sample_gpd(rng, xi, 1.0, (n,))
    return (np.floor(z / h) + 0.5) * h


def covers(lo: float, hi: float, xi: float) -> bool:
    return math.isfinite(lo) and math.isfinite(hi) and lo <= xi <= hi


def cell(xi: float, n: int, h: float, reps: int, resamples: int, pct_reps: int, seed: int):
    rng = np.random.default_rng([seed, round(1000 * xi) + 1000, n, round(100 * h)])
    hits = {"profile": [], "wald": [], "percentile": []}
    for r in range(reps):
        y = lattice_sample(rng, xi, n, h)
        f = gpd.fit(y, h)
        if f.status != "ok":
            for k in ("profile", "wald"):
                hits[k].append(False)
            continue
        p = inference.profile_ci(y, LEVEL, f, step=h)
        hits["profile"].append(covers(p.low, p.high, xi))
        w = inference.observed_information(y, f, step=h).confidence_interval(LEVEL)
        hits["wald"].append(covers(w.low, w.high, xi))
        if resamples and r < pct_reps:
            b = gpd.bootstrap(y, resamples, rng.integers(2**63), full_fit=f, step=h)
            lo, hi = b.ci(LEVEL)
            hits["percentile"].append(covers(lo, hi, xi))
    return {
        k: (float(np.mean(v)), math.sqrt(np.mean(v) * (1 - np.mean(v)) / len(v)), len(v))
        for k, v in hits.items()
        if v
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--resamples", type=int, default=0)
    ap.add_argument("--percentile-reps", type=int, default=200)
    args = ap.parse_args()
    print(f"coverage of 95 % intervals for ξ, lattice GPD, seed {SEED}")
    print("   ξ  n_exc  h/σ  method      coverage  ± s.e.    M")
    for xi in (-0.2, 0.2):
        for n in (100, 300):
            for h in (0.5, 1.0):
                t0 = time.perf_counter()
                res = cell(xi, n, h, args.reps, args.resamples, args.percentile_reps, SEED)
                for k, (c, se, m) in res.items():
                    print(f"{xi:5.2f} {n:5d} {h:4.1f}  {k:10s}  {c:8.3f}  {se:6.3f} {m:5d}")
                print(f"   ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
