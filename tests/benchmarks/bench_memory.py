"""Peak memory and time of the largest computations of a study's jobs, as the data grow.

Run by path: ``python tests/benchmarks/bench_memory.py [ROWS ...] [--baseline REV]`` (not
collected by pytest; default 2,500,000 rows per condition). Each computation runs in its own
process, and its peak resident memory is the process's (``getrusage``):

* ``scan``: the GPD bootstrap of the stability scan's lowest threshold (q = 0.70, the most
  exceedances of a fit job: 30 % of the rows), at the default 200 resamples, two threads;
* ``band``: the GPD bootstrap at the headline q = 0.95 (5 % of the rows), at ``--resamples``
  (default 640 of the registered 10,000; memory is per block, time grows linearly);
* ``bulk``: the bulk bootstrap of one condition on two scales (probability, logit), at
  ``--resamples`` replicates;
* ``operating``: the whole-procedure simulation of an import study's defaults (band
  0.95–0.99, 200 trials, P1's observed-information stand-in) at ROWS prompts per condition.

The scores are the ``tests/benchmarks/bench_scale.py`` distribution (``sigmoid(logistic(-4,
1))``). With ``--baseline REV`` every computation runs again with revision REV's
``tailgate`` package (a worktree), beside this code, so the two columns are the same machine
and hour. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, resource, sys, time
import numpy as np
kind, rows, resamples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(11)
p = 1.0 / (1.0 + np.exp(-rng.logistic(-4.0, 1.0, rows)))
x = np.log(p) - np.log1p(-p)
t0 = time.perf_counter()
if kind in ("scan", "band"):
    from tailgate.stats import gpd
    from tailgate.stats.risk import exceedances
    y = exceedances(x, 0.70 if kind == "scan" else 0.95).y
    gpd.bootstrap(y, 200 if kind == "scan" else resamples, 5, workers=2)
elif kind == "bulk":
    from tailgate.stats.risk import bulk_bootstrap_scales
    bulk_bootstrap_scales({"probability": p, "logit": x}, resamples, 5, tvar_level=0.9)
else:
    from tailgate.protocol.design import ReferencePair
    from tailgate.protocol.gates import GateSettings
    from tailgate.protocol.operating import simulate_procedure

    class Study:  # what the sampler reads of an import study's defaults
        data = {"protocol": {"xi_bar": 0.1, "headline_scale": "logit"}}

    del p, x
    settings = GateSettings(
        delta_mu=0.25, delta_tvar=0.5, n_star=1570, stability_delta=0.02,
        stability_tolerance=0.05,
    )
    simulate_procedure(
        settings, band=[0.95, 0.96, 0.97, 0.98, 0.99], headline_q=0.95, band_rule="any",
        n_prompts=rows, sample=ReferencePair(Study, 0.10), delta_xis=[0.0, 0.05, 0.1, 0.15],
        trials=200, resamples=None, min_side_exceedances=200, seed=5, workers=2,
    )
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"wall": wall, "gb": peak}))
"""


def measure(kind: str, rows: int, resamples: int, workflow: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(workflow), "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(rows), str(resamples)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        last = out.stderr.strip().splitlines()[-1:] or [f"ended by signal {-out.returncode}"]
        if out.returncode == -9:
            last = ["killed (out of memory?)"]
        return {"error": last[0]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=int, default=[2_500_000])
    parser.add_argument("--resamples", type=int, default=640)
    parser.add_argument("--baseline", help="a revision to run beside this code")
    parser.add_argument("--only", nargs="*", default=["scan", "band", "bulk", "operating"])
    args = parser.parse_args()
    trees = {"this code": REPO / "workflow"}
    tmp = None
    if args.baseline:
        tmp = tempfile.mkdtemp(prefix="tailgate-baseline-")
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", tmp, args.baseline],
            check=True,
            capture_output=True,
        )
        trees[args.baseline] = Path(tmp) / "workflow"
    try:
        for rows in args.rows:
            print(f"\n{rows:,} rows per condition (resamples of band and bulk: {args.resamples})")
            print(f"  {'computation':<11}" + "".join(f"{name:>26}" for name in trees))
            for kind in args.only:
                cells = []
                for tree in trees.values():
                    r = measure(kind, rows, args.resamples, tree)
                    cells.append(
                        f"{r['wall']:9.1f} s {r['gb']:7.2f} GB" if "wall" in r else r["error"]
                    )
                print(f"  {kind:<11}" + "".join(f"{c:>26}" for c in cells), flush=True)
    finally:
        if tmp is not None:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", tmp],
                check=False,
                capture_output=True,
            )


if __name__ == "__main__":
    main()
