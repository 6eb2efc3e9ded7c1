"""Measure the discretised GPD likelihood on lattice scores: the tables of methods note P10.

Latent scores: half a uniform body on [0, 10), half 10 + GPD(ξ, 1), so every threshold above
about 10.5 sees an exact GPD tail of shape ξ; they are rounded to a lattice of step h (with a
random offset, as a judge's grades are) and cut at the 0.9-quantile by the rule ``lattice``. The
step is quoted in units of the latent scale σ_t at the threshold. Tables (Markdown, to stdout):

``fit``     mean and s.d. of ξ̂ (discretised likelihood) against the continuous fit with the rule
            ``half_step``, by step and number of exceedances;
``levels``  the tail on 2, 5, 10 and 20 distinct lattice values: fit status and ξ̂;
``g4``      rejection rates at 0.05 of the discretised Anderson–Darling test (parametric
            bootstrap) and of the continuous test, on data drawn from the model;
``p2``      two conditions with the same latent ξ and latent scales 1 and 0.5 on one lattice:
            P(|Δξ̂| > 0.1) and the size of the likelihood-ratio test of ξ_A = ξ_B at 0.05 (χ²₁);
``p1``      the same null: how often P1's 95 % percentile CIs (B = 200) do not overlap.

Every stream derives from :data:`SEED` keyed by the table and its cell. Run by path: ``python
tests/benchmarks/lattice_tables.py [fit levels g4 p2 p1] [--reps R]`` (not collected by pytest).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from tailgate.seeds import seed_sequence
from tailgate.stats import gof, gpd, inference, lattice, lattice_likelihood, likelihood_ratio
from tailgate.stats.gof import sample_gpd
from tailgate.stats.risk import exceedances as risk_exceedances

SEED = 20260134
Q = 0.9


def latent(
    rng: np.random.Generator, xi: float, n: int, scale: float = 1.0, body: float = 0.5
) -> np.ndarray:
    """Latent scores: a uniform body on [0, 10) (share ``body``) and 10 + GPD(ξ, scale).

    Parameters
    ----------
    rng : numpy.random.Generator
        The random stream.
    xi : float
        The tail's shape ξ.
    n : int
        The number of scores.
    scale : float, default 1.0
        The tail's GPD scale.
    body : float, default 0.5
        The probability that a score is drawn from the uniform body.

    Returns
    -------
    numpy.ndarray
        The n latent scores.
    """
    z = 10.0 + sample_gpd(rng, xi, scale, n)
    body = rng.random(n) < body
    z[body] = 10.0 * rng.random(int(body.sum()))
    return z


def sigma_at_threshold(xi: float, scale: float = 1.0, tail: float = 0.2) -> float:
    """The latent GPD scale at the 0.9-quantile (the tail's 1 − ``tail`` quantile): σ + ξ·u."""
    u = scale * (tail**-xi - 1.0) / xi if xi != 0 else scale * math.log(1.0 / tail)
    return scale + xi * u


def rounded(rng: np.random.Generator, z: np.ndarray, h: float) -> np.ndarray:
    return h * np.round(z / h + rng.random())


def _rng(*keys: object) -> np.random.Generator:
    return np.random.default_rng(seed_sequence(SEED, *keys))


def _mean_sd(v: list[float]) -> str:
    a = np.asarray(v, float)
    a = a[np.isfinite(a)]
    return f"{a.mean():+.3f} ± {a.std(ddof=1):.3f}" if a.size > 1 else "–"


def table_fit(reps: int) -> None:
    print(
        "| latent ξ | step h/σ_t | n_exc | ξ̂ discretised (mean ± s.d.) | ξ̂ continuous, half_step |"
    )
    print("| --- | --- | --- | --- | --- |")
    for xi in (-0.2, 0.2):
        st = sigma_at_threshold(xi)
        for ratio in (0.25, 0.5, 1.0):
            for n_exc in (200, 500, 1500, 3000):
                rng = _rng("fit", xi, ratio, n_exc)
                h = ratio * st
                d, c, n_seen = [], [], []
                for _ in range(reps):
                    x = rounded(rng, latent(rng, xi, 10 * n_exc), h)
                    ex = lattice.exceedances(x, Q, h)
                    n_seen.append(ex.n_exc)
                    d.append(gpd.fit(ex.y, step=h).xi)
                    c.append(gpd.fit(risk_exceedances(x, Q, "half_step").y).xi)
                print(
                    f"| {xi:+.1f} | {ratio:g} | {int(np.mean(n_seen))} | {_mean_sd(d)} "
                    f"| {_mean_sd(c)} |"
                )


def table_levels(reps: int) -> None:
    print("| distinct tail values (target) | mean distinct | status ok | ξ̂ (mean ± s.d.) |")
    print("| --- | --- | --- | --- |")
    xi, n_exc = 0.2, 1000
    top = (n_exc**xi - 1.0) / xi  # about the largest of n_exc GPD(ξ, 1) draws
    for levels in (2, 5, 10, 20):
        rng = _rng("levels", levels)
        h = top / (levels - 0.5)
        ok, est, seen = 0, [], []
        for _ in range(reps):
            cells = lattice_likelihood.sample_cells(rng, xi, 1.0, h, (1, n_exc))[0]
            y = (cells + 0.5) * h
            seen.append(np.unique(cells).size)
            f = gpd.fit(y, step=h)
            ok += f.status == "ok"
            est.append(f.xi if f.status == "ok" else math.nan)
        print(f"| {levels} | {np.mean(seen):.1f} | {ok / reps:.2f} | {_mean_sd(est)} |")


def table_g4(reps: int, n_boot: int = 199) -> None:
    print("| latent ξ | step h/σ_t | n_exc | discretised A² (bootstrap) | continuous A² (table) |")
    print("| --- | --- | --- | --- | --- |")
    for xi in (0.2, -0.2):
        st = sigma_at_threshold(xi)
        for ratio in (0.25, 0.5, 1.0):
            for n_exc in (200, 1000):
                if xi < 0 and n_exc != 1000:
                    continue
                rng = _rng("g4", xi, ratio, n_exc)
                h = ratio * st
                rej = rej_c = 0
                for r in range(reps):
                    x = rounded(rng, latent(rng, xi, 10 * n_exc), h)
                    ex = lattice.exceedances(x, Q, h)
                    res = gof.anderson_darling_lattice(
                        ex.y, h, n_boot=n_boot, seed=seed_sequence(SEED, "g4b", xi, ratio, r)
                    )
                    rej += res.pvalue <= 0.05
                    rej_c += gof.anderson_darling(ex.y, method="table").pvalue <= 0.05
                se = math.sqrt(0.05 * 0.95 / reps)
                print(
                    f"| {xi:+.1f} | {ratio:g} | {n_exc} | {rej / reps:.3f} (MC s.e. {se:.3f}) "
                    f"| {rej_c / reps:.2f} |"
                )


def table_p2(reps: int) -> None:
    print(
        "| n_exc each | P(\\|Δξ̂\\| > 0.1) continuous half_step | discretised "
        "| LR size at 0.05 (χ²₁), discretised |"
    )
    print("| --- | --- | --- | --- |")
    xi, h = 0.2, 1.0
    for n_exc in (200, 1000, 3000):
        rng = _rng("p2", n_exc)
        big_c = big_d = rej = valid = 0
        for _ in range(reps):
            xa = rounded(rng, latent(rng, xi, 10 * n_exc, 1.0), h)
            xb = rounded(rng, latent(rng, xi, 10 * n_exc, 0.5), h)
            ea, eb = lattice.exceedances(xa, Q, h), lattice.exceedances(xb, Q, h)
            ca = gpd.fit(risk_exceedances(xa, Q, "half_step").y).xi
            cb = gpd.fit(risk_exceedances(xb, Q, "half_step").y).xi
            big_c += abs(ca - cb) > 0.1
            fa, fb = gpd.fit(ea.y, step=h), gpd.fit(eb.y, step=h)
            big_d += abs(fa.xi - fb.xi) > 0.1
            lr = likelihood_ratio.lr_test_grids(
                inference.profile_grid(ea.y, fa, step=h), inference.profile_grid(eb.y, fb, step=h)
            )
            if math.isfinite(lr.pvalue):
                valid += 1
                rej += lr.pvalue <= 0.05
        print(
            f"| {n_exc} | {big_c / reps:.2f} | {big_d / reps:.2f} "
            f"| {rej / max(valid, 1):.3f} (of {valid}) |"
        )


def table_p1(reps: int, n_boot: int = 200) -> None:
    print(
        "| n_exc each | 95 % percentile CIs apart, continuous half_step "
        "| discretised (the null: same latent ξ) |"
    )
    print("| --- | --- | --- |")
    xi, h = 0.2, 1.0
    for n_exc in (200, 1000):
        rng = _rng("p1", n_exc)
        apart_c = apart_d = 0
        for r in range(reps):
            xa = rounded(rng, latent(rng, xi, 10 * n_exc, 1.0), h)
            xb = rounded(rng, latent(rng, xi, 10 * n_exc, 0.5), h)
            cis_c, cis_d = [], []
            for i, x in enumerate((xa, xb)):
                seed = seed_sequence(SEED, "p1b", n_exc, r, i)
                yc = risk_exceedances(x, Q, "half_step").y
                cis_c.append(gpd.bootstrap(yc, n_boot, seed, workers=1).ci(0.95))
                yd = lattice.exceedances(x, Q, h).y
                cis_d.append(gpd.bootstrap(yd, n_boot, seed, workers=1, step=h).ci(0.95))
            apart_c += cis_c[0].low > cis_c[1].high or cis_c[1].low > cis_c[0].high
            apart_d += cis_d[0].low > cis_d[1].high or cis_d[1].low > cis_d[0].high
        print(f"| {n_exc} | {apart_c / reps:.3f} | {apart_d / reps:.3f} |")


TABLES: dict[str, Callable[[int], None]] = {
    "fit": table_fit,
    "levels": table_levels,
    "g4": table_g4,
    "p2": table_p2,
    "p1": table_p1,
}


def main(argv: list[str] | None = None) -> None:
    """Print the requested tables (Markdown) to stdout.

    Parameters
    ----------
    argv : list of str or None, default None
        The command line: the tables (of ``fit levels g4 p2 p1``; all when none is named) and
        ``--reps`` (data sets a row, default 200); None: ``sys.argv``.

    Returns
    -------
    None
        The tables are printed to stdout.
    """
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="*", default=list(TABLES), choices=list(TABLES))
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args(argv)
    for name in args.tables:
        print(f"\n### {name} ({args.reps} data sets per row)\n")
        TABLES[name](args.reps)


if __name__ == "__main__":
    main()
