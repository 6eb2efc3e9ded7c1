"""Generate the Anderson–Darling GPD table shipped as ``stats/data/ad_gpd_table.npz``.

For every ξ on the grid −0.50, −0.49, …, 1.00 the script draws ``--samples`` samples of size
``--n`` from GPD(ξ, 1) (σ does not matter: A² is scale invariant), fits each with tailgate's own
MLE (:func:`tailgate.stats.gpd.fit_rows`), computes A² with the fitted parameters and the known
location 0 (Choulakian & Stephens 2001), and stores the upper-tail critical values at the levels
:data:`LEVELS`. The Monte Carlo noise of each column is then reduced with a Savitzky–Golay filter
along ξ (window 9, quadratic), and critical values are made non-decreasing in 1 − p.

Every stream derives from :data:`TABLE_SEED` keyed by ξ, so the table is reproducible byte for
byte. Run ``python -m tailgate.stats.make_ad_table`` (about 2–4 minutes on two cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from scipy.signal import savgol_filter

from tailgate.files.atomic import atomic_output
from tailgate.seeds import seed_sequence
from tailgate.stats.gof import bootstrap_null

__all__ = ["LEVELS", "TABLE_SEED", "XI_GRID", "build_table", "main"]

TABLE_SEED = 20010401
XI_GRID = np.round(np.arange(-0.50, 1.00 + 1e-9, 0.01), 2)
#: upper-tail probabilities p at which critical values are stored (decreasing)
LEVELS = np.array(
    [
        *(0.999, 0.995, 0.99, 0.975, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4, 0.3),
        *(0.25, 0.2, 0.15, 0.1, 0.075, 0.05, 0.04, 0.03, 0.025, 0.02, 0.015, 0.01, 0.0075),
        *(0.005, 0.0025, 0.001),
    ]
)


def critical_values(xi: float, n: int, samples: int) -> np.ndarray:
    """Raw simulated critical values of A² at ``LEVELS`` for one ξ."""
    a2 = bootstrap_null(xi, 1.0, n, samples, seed_sequence(TABLE_SEED, "ad_table", f"{xi:.2f}"))
    return np.quantile(a2, 1.0 - LEVELS)


def build_table(n: int, samples: int, workers: int = 2) -> dict[str, np.ndarray]:
    """Simulate and smooth the whole table (see the module docstring).

    Parameters
    ----------
    n : int
        The size of each simulated sample.
    samples : int
        The number of samples per ξ.
    workers : int, default 2
        The threads that simulate the ξ of the grid.

    Returns
    -------
    dict of str to numpy.ndarray
        ``xi`` (:data:`XI_GRID`), ``p`` (:data:`LEVELS`), ``crit`` (the smoothed critical values,
        ξ × level, non-decreasing in 1 − p), ``raw`` (the simulated ones), and ``n``, ``samples``
        and ``seed`` as 0-d arrays.

    References
    ----------
    Choulakian & Stephens (2001).
    """
    with ThreadPoolExecutor(max_workers=workers) as pool:
        raw = np.array(list(pool.map(lambda x: critical_values(float(x), n, samples), XI_GRID)))
    smooth = savgol_filter(raw, window_length=9, polyorder=2, axis=0, mode="interp")
    smooth = np.maximum.accumulate(smooth, axis=1)
    return {
        "xi": XI_GRID,
        "p": LEVELS,
        "crit": smooth,
        "raw": raw,
        "n": np.array(n),
        "samples": np.array(samples),
        "seed": np.array(TABLE_SEED),
    }


def main(argv: list[str] | None = None) -> int:
    """Generate the table and write it (``python -m tailgate.stats.make_ad_table``).

    Parameters
    ----------
    argv : list of str or None, default None
        The command line (``--n``, ``--samples``, ``--workers``, ``--out``); None: ``sys.argv``.

    Returns
    -------
    int
        0, the exit status; the table is written to ``--out`` (``data/ad_gpd_table.npz`` beside
        this module by default) as a compressed ``.npz``.
    """
    parser = argparse.ArgumentParser(prog="python -m tailgate.stats.make_ad_table")
    parser.add_argument("--n", type=int, default=500, help="sample size of each simulated sample")
    parser.add_argument("--samples", type=int, default=20_000, help="samples per ξ")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "data" / "ad_gpd_table.npz"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    table = build_table(args.n, args.samples, args.workers)
    with atomic_output(args.out) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **table)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
