"""G5's false-failure rate under ``tolerance_rule: se`` where nothing is unstable: a
discretised GPD (lattice G5) and its latent continuous scores (continuous G5), at 100 and 300
exceedances, with the asymptotic s.e. and with the parametric-bootstrap s.e. the gate uses.

Run by path: ``python tests/benchmarks/g5_lattice_size.py [--reps R] [--min-side M] [--xi ...]
[--ratio ...] [--n-exc ...]`` (not collected by pytest). Latent scores: half a uniform body on
[0, 10) and half 10 + GPD(ξ, 1), so every threshold above the 0.5-quantile sees an exact GPD
tail; rounded to a lattice of step h (with a random offset) and cut at q = 0.9 by the rule
``lattice``; h in units of the latent scale σ_t at the threshold; n_exc = n·(1 − q). G5 at
q ± 0.02 (2 s.e.), sides with at least ``--min-side`` exceedances: on the lattice as the fit
stage runs it (:func:`tailgate.stats.stability.lattice_side`), the tolerance from the
discretised model's information (``lattice_difference_se``,
``tests/support/lattice_information.py``) or from the bootstrap
(:func:`tailgate.stats.stability.bootstrap_difference_se`); continuous G5 on the latent scores with
Smith's s.e. or the bootstrap. Nominal rate at 2 s.e.: 0.046 with one side (the lower side on q's
own threshold), 0.089 with two (the sides' differences are asymptotically independent). Columns:
fail rates (Monte Carlo s.e. beside), the share with a
lattice side not testable, the share whose upper side moved one lattice step, wall seconds per
data set (both fits, all four rules). Samples whose fit at q is not interior are left out.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from tailgate.stats import gpd, lattice
from tailgate.stats.gof import sample_gpd
from tailgate.stats.risk import exceedances
from tailgate.stats.stability import (
    bootstrap_difference_se,
    lattice_side_threshold,
    stability_check,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from lattice_information import lattice_difference_se

Q, DELTA = 0.9, 0.02


def one(
    rng: np.random.Generator,
    xi: float,
    ratio: float,
    n_exc: int,
    smin: int,
    body: float,
    boot: np.random.SeedSequence,
) -> tuple[bool, bool, bool, int, bool, bool] | None:
    """(lattice G5 passes, latent continuous G5 passes, a side not testable, upper side moved,
    lattice G5 passes with the bootstrap s.e., continuous G5 passes with it); the bootstrap
    streams are children of ``boot``."""
    n = int(n_exc / (1 - Q))
    p = 0.1 / (1 - body)  # the threshold's tail share of the GPD part
    st = 1 + xi * ((p**-xi - 1) / xi if xi != 0 else math.log(1 / p))
    h = ratio * st
    z = 10 + sample_gpd(rng, xi, 1.0, n)
    b = rng.random(n) < body
    z[b] = 10 * rng.random(int(b.sum()))
    x = h * np.round(z / h + rng.random())
    ex = lattice.exceedances(x, Q, h)
    f = gpd.fit(ex.y, h)
    if f.status != "ok":
        return None
    xs: list[float | None] = []
    ns: list[int | None] = []
    ses: list[float | None] = []
    bses: list[float | None] = []
    moved = 0
    for qs, d in ((Q - DELTA, -1), (Q + DELTA, 1)):
        th, why = lattice_side_threshold(x, round(qs, 10), ex.u, h, d)
        if th is None:
            xs.append(None), ns.append(None), ses.append(None), bses.append(None)
            continue
        y = lattice.excesses(x, th, h)
        moved += "step" in why
        ns.append(int(y.size))
        if y.size < smin:
            xs.append(math.nan), ses.append(math.nan), bses.append(math.nan)
            continue
        fs = gpd.fit(y, h)
        xs.append(fs.xi if fs.status == "ok" else math.nan)
        ses.append(lattice_difference_se(f.xi, f.sigma, ex.u, h, th, ex.n_exc, int(y.size)))
        bses.append(
            bootstrap_difference_se(
                f.xi, f.sigma, ex.n_exc, int(y.size), boot.spawn(1)[0], step=h, t_q=ex.u, side=th
            )
        )
    c = stability_check(
        f.xi, xs[0], xs[1], q=Q, delta=DELTA, tolerance=0.05, rule="se",
        n_q=ex.n_exc, n_minus=ns[0], n_plus=ns[1], se_minus=ses[0], se_plus=ses[1],
    )  # fmt: skip
    cb = stability_check(
        f.xi, xs[0], xs[1], q=Q, delta=DELTA, tolerance=0.05, rule="se",
        n_q=ex.n_exc, n_minus=ns[0], n_plus=ns[1], se_minus=bses[0], se_plus=bses[1],
    )  # fmt: skip
    e = exceedances(z, Q, "strict")
    fc = gpd.fit(e.y)
    cx, cn = [], []
    for qs in (Q - DELTA, Q + DELTA):
        ee = exceedances(z, round(qs, 10), "strict")
        cn.append(ee.n_exc)
        ff = gpd.fit(ee.y)
        cx.append(ff.xi if ff.status == "ok" and ee.n_exc >= smin else math.nan)
    cc = stability_check(
        fc.xi, cx[0], cx[1], q=Q, delta=DELTA, tolerance=0.05, rule="se",
        n_q=e.n_exc, n_minus=cn[0], n_plus=cn[1],
    )  # fmt: skip
    cse = [
        bootstrap_difference_se(fc.xi, fc.sigma, e.n_exc, n, boot.spawn(1)[0])
        if math.isfinite(v)
        else math.nan
        for v, n in zip(cx, cn, strict=True)
    ]
    cb2 = stability_check(
        fc.xi, cx[0], cx[1], q=Q, delta=DELTA, tolerance=0.05, rule="se",
        n_q=e.n_exc, n_minus=cn[0], n_plus=cn[1], se_minus=cse[0], se_plus=cse[1],
    )  # fmt: skip
    return c.passed, cc.passed, bool(c.not_testable), moved, cb.passed, cb2.passed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--min-side", type=int, default=30)
    ap.add_argument("--body", type=float, default=0.5)
    ap.add_argument("--xi", type=float, nargs="+", default=[-0.2, 0.0, 0.2])
    ap.add_argument("--ratio", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    ap.add_argument("--n-exc", type=int, nargs="+", default=[100, 300])
    a = ap.parse_args()
    print(
        "| ξ | h/σ_t | n_exc | lattice G5 fails: information s.e. | bootstrap s.e. "
        "| continuous G5 (latent): Smith | bootstrap | not testable | moved | s per data set |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for xi in a.xi:
        for ratio in a.ratio:
            for n_exc in a.n_exc:
                key = [7, int(xi * 10) + 5, int(ratio * 4), n_exc]
                rng = np.random.default_rng(key)
                boot = np.random.SeedSequence([*key, 51])
                t0 = time.perf_counter()
                got = [one(rng, xi, ratio, n_exc, a.min_side, a.body, boot) for _ in range(a.reps)]
                secs = (time.perf_counter() - t0) / a.reps
                r = [v for v in got if v is not None]
                fail = [1 - float(np.mean([v[i] for v in r])) for i in (0, 4, 1, 5)]
                se = [math.sqrt(max(f, 0.01) * (1 - f) / len(r)) for f in fail]
                cols = " | ".join(f"{f:.3f} ± {e:.3f}" for f, e in zip(fail, se, strict=True))
                print(
                    f"| {xi:+.1f} | {ratio:g} | {n_exc} | {cols} "
                    f"| {np.mean([v[2] for v in r]):.3f} | {np.mean([v[3] for v in r]):.2f} "
                    f"| {secs:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
