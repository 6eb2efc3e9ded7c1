"""Derive the Bartlett coefficients of the two-sample likelihood-ratio test of ξ_A = ξ_B.

Under the null the statistic Λ of :func:`tailgate.stats.likelihood_ratio.lr_test_grids` depends only
on the common ξ and the two sample sizes (ξ̂ is scale invariant, so the scales drop out). Its mean
is 1 + a(ξ)(1/n_A + 1/n_B) + O(n⁻²) (Lawley 1956; Bartlett 1937). For every ξ of :data:`XI_GRID`
this script draws ``--samples`` pairs of GPD(ξ, 1) samples of size ``--n`` each, estimates a(ξ) =
(mean Λ − 1)·n/2 and fits a quadratic in ξ by least squares, printing the coefficients.
:data:`tailgate.stats.likelihood_ratio.BARTLETT_COEFFICIENTS` is the same fit to the points of two
runs pooled: ``--n 40`` (defaults) and ``--n 62 --samples 3000 --xi -0.2 0.1 0.4`` (each a(ξ) has a
Monte Carlo s.e. of about 1). Every stream derives from :data:`SEED` keyed by ξ and n. Run ``python
-m tailgate.stats.make_lr_bartlett``."""

from __future__ import annotations

import argparse

import numpy as np

from tailgate.seeds import seed_sequence
from tailgate.stats.distributions import chi2_1_sf
from tailgate.stats.gof import sample_gpd
from tailgate.stats.inference import profile_grid
from tailgate.stats.likelihood_ratio import (
    bartlett_factor,
    lr_null_statistics,
    lr_rows,
    lr_test_grids,
)

__all__ = ["SEED", "XI_GRID", "bootstrap_size", "coefficient", "main"]

SEED = 19370101
XI_GRID = (-0.4, -0.2, 0.0, 0.2, 0.4, 0.6, 0.8)


def coefficient(xi: float, n: int, samples: int) -> tuple[float, float]:
    """a(ξ) and its Monte Carlo s.e. from ``samples`` null pairs of size ``n``.

    a(ξ) = (mean Λ − 1)·n/2 over the pairs' finite statistics Λ (module docstring).

    Parameters
    ----------
    xi : float
        The common ξ of the null pairs, drawn from GPD(ξ, 1).
    n : int
        The size of each sample of a pair.
    samples : int
        The number of null pairs.

    Returns
    -------
    a : float
        The estimate of a(ξ).
    se : float
        Its Monte Carlo standard error.

    References
    ----------
    Bartlett (1937); Lawley (1956).
    """
    rng = np.random.default_rng(seed_sequence(SEED, "lr_bartlett", f"{xi:.2f}", n))
    stats = []
    for _ in range(samples):
        a, b = sample_gpd(rng, xi, 1.0, n), sample_gpd(rng, xi, 1.0, n)
        stats.append(lr_test_grids(profile_grid(a), profile_grid(b)).statistic)
    lam = np.asarray(stats, dtype=float)
    lam = lam[np.isfinite(lam)]
    return float((lam.mean() - 1.0) * n / 2.0), float(lam.std(ddof=1) / np.sqrt(lam.size) * n / 2)


def bootstrap_size(
    xi: float, n_a: int, n_b: int, datasets: int, n_boot: int = 39, alpha: float = 0.05
) -> tuple[float, float, float]:
    """Size at ``alpha`` of the parametric-bootstrap and the Bartlett-corrected LR tests.

    The bootstrap test is ``lr_calibration: bootstrap``; both tests run on the same ``datasets``
    null pairs (those with a finite Λ), and running tallies are printed every 100 of them.

    Parameters
    ----------
    xi : float
        The common ξ of the null pairs, drawn from GPD(ξ, 1).
    n_a : int
        The size of the first sample of a pair.
    n_b : int
        The size of the second sample of a pair.
    datasets : int
        The number of null pairs.
    n_boot : int, default 39
        The null pairs the bootstrap draws per data set, at its common ξ̂ (at least −0.5)
        ((B + 1)·α whole: the test's level does not depend on B).
    alpha : float, default 0.05
        The level.

    Returns
    -------
    boot : float
        The rejection rate of the bootstrap-calibrated test.
    bartlett : float
        The rejection rate of the Bartlett-corrected test.
    se : float
        The Monte Carlo s.e. of a rejection rate at the level ``alpha``.

    References
    ----------
    Davison & Hinkley (1997), Section 4.2.
    """
    rng = np.random.default_rng(seed_sequence(SEED, "lr_bootstrap_size", f"{xi:.2f}", n_a, n_b))
    lam, common = lr_rows(
        sample_gpd(rng, xi, 1.0, (datasets, n_a)), sample_gpd(rng, xi, 1.0, (datasets, n_b))
    )
    rej = rej_b = used = 0

    for stat, x0 in zip(lam, common, strict=True):
        if not np.isfinite(stat):
            continue
        used += 1
        null = lr_null_statistics(max(float(x0), -0.5), n_a, n_b, n_boot)
        rej += (1 + np.count_nonzero(null >= stat)) / (null.size + 1) <= alpha
        rej_b += chi2_1_sf(stat / bartlett_factor(float(x0), n_a, n_b)) <= alpha
        if used % 100 == 0:  # running tallies of a long run
            print(
                f"  xi {xi:+.2f}: {used} data sets, bootstrap {rej}, bartlett {rej_b}", flush=True
            )
    se = float(np.sqrt(alpha * (1 - alpha) / used))
    return rej / used, rej_b / used, se


def main(argv: list[str] | None = None) -> None:
    """Estimate a(ξ) on the grid and print its quadratic fit (module docstring).

    Parameters
    ----------
    argv : list of str or None, default None
        The command line (``--n``, ``--samples``, ``--xi``, and ``--bootstrap-size``: the sizes
        of the bootstrap-calibrated and Bartlett-corrected tests at 50/80 exceedances instead);
        None: ``sys.argv``.

    Returns
    -------
    None
        Every a(ξ) with its s.e. and the ``BARTLETT_COEFFICIENTS`` of the fit (weights 1/s.e.)
        are printed to stdout.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--xi", type=float, nargs="*", default=list(XI_GRID))
    parser.add_argument(
        "--bootstrap-size",
        action="store_true",
        help="the size of the bootstrap-calibrated test at 50/80 exceedances instead",
    )
    args = parser.parse_args(argv)
    if args.bootstrap_size:
        for xi in args.xi:
            boot, bart, se = bootstrap_size(xi, 50, 80, args.samples)
            print(f"xi {xi:+.2f}: bootstrap {boot:.4f}, bartlett {bart:.4f} (MC s.e. {se:.4f})")
        return
    rows = []
    for xi in args.xi:
        a, se = coefficient(xi, args.n, args.samples)
        rows.append((xi, a, se))
        print(f"xi {xi:+.2f}: a = {a:.3f} ± {se:.3f}", flush=True)
    x, a, se = (np.array(c) for c in zip(*rows, strict=True))
    coef = np.polyfit(x, a, 2, w=1.0 / se)
    print("BARTLETT_COEFFICIENTS =", tuple(round(float(c), 3) for c in coef[::-1]))


if __name__ == "__main__":
    main()
