"""P1 of Zhou (2026), Section 3, on simulated exceedances: the statistics the registered
``p1_method`` reads, for many samples at once.

The App. E grid (:mod:`tailgate.protocol.recovery`) and the whole-procedure simulation
(:mod:`tailgate.protocol.operating`) both decide P1 through :func:`tailgate.protocol.gates.p1_gate`,
the code the workflow runs; this module gives them its inputs:

* ``percentile`` with a number of resamples: the percentile bootstrap of ξ̂, all samples'
  replicates refitted in one vectorised Newton call (:func:`percentile_cis`);
* ``percentile`` without: the normal interval ξ̂ ± z·se(ξ̂) with the observed-information s.e.
  (Smith (1987)), which costs no refits (:func:`normal_cis`). At P1's level under Bonferroni
  (0.995 for ten pairs) the percentile endpoints are the 0.25 % and 99.75 % quantiles of the
  replicates: a hundred replicates put them too far in (mean width 0.131 against 0.147 at 1,000
  for 1,500 exceedances), which about doubles the simulated power at the floor, and the
  registered 10,000 per fit are out of reach for a design loop. The normal interval's endpoints
  differ from the 10,000-resample percentile endpoints by less than 0.01 on average at 600–1,500
  exceedances, in the same direction for both conditions of a pair, so the gap P1 reads is
  unbiased (``tests/stats/test_operating_resolution.py`` checks intervals and decisions);
* ``profile``: the profile-likelihood interval at P1's level; ``lr_test``: the stored profile
  log-likelihood the two-sample likelihood-ratio test reads.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tailgate.stats import gpd, inference
from tailgate.stats.distributions import norm_ppf
from tailgate.stats.gpd import RowFits
from tailgate.stats.profile import STATUS_NO_CONVERGENCE, STATUS_OK, newton_rows

if TYPE_CHECKING:
    from tailgate.protocol.gates import GateSettings

__all__ = ["P1Rows", "normal_cis", "p1_interval", "p1_rows", "percentile_cis"]


def percentile_cis(
    samples: np.ndarray,
    resamples: int,
    levels: Sequence[float],
    rngs: Sequence[np.random.Generator],
    *,
    workers: int = 1,
    fits: RowFits | None = None,
) -> tuple[RowFits, np.ndarray]:
    """Fits of every row of ``samples`` (r, n) and their percentile-bootstrap CIs for ξ.

    The replicates of a chunk of rows are refitted in one vectorised Newton call, warm-started
    at each row's own fit, with boundary replicates at ξ = −1 as in
    :meth:`tailgate.stats.gpd.GPDBootstrap.ci`; replicates that do not converge are left out.

    Parameters
    ----------
    samples : np.ndarray
        The exceedances, one sample per row, shape (r, n).
    resamples : int
        Bootstrap resamples per row.
    levels : Sequence[float]
        The two-sided CI levels.
    rngs : Sequence[np.random.Generator]
        ``rngs[i]`` draws the resamples of row i.
    workers : int, default 1
        Threads that process the chunks (numpy releases the GIL; the result does not depend on
        it).
    fits : RowFits or None, default None
        The rows' fits when the caller has them (not fitted again).

    Returns
    -------
    fits : RowFits
        The fits of the rows.
    ci : np.ndarray
        Shape (r, len(levels), 2): ``ci[i, j] = (low, high)`` at ``levels[j]`` (NaN where the
        row has no interior fit).
    """
    r, n = samples.shape
    fits = gpd.fit_rows(samples) if fits is None else fits
    ci = np.full((r, len(levels), 2), math.nan)
    q = []
    for lvl in levels:
        a = (1.0 - float(lvl)) / 2.0
        q += [a, 1.0 - a]
    chunk = max(1, _CHUNK_ELEMENTS // (resamples * n))
    t_row = np.where(fits.status == STATUS_OK, fits.xi / fits.sigma, 0.0)

    def run(lo: int) -> None:
        hi = min(lo + chunk, r)
        x = np.concatenate(
            [
                np.take(samples[i], rngs[i].integers(0, n, size=(resamples, n)))
                for i in range(lo, hi)
            ]
        )
        ymax = x.max(axis=1)
        res = newton_rows(x, np.repeat(t_row[lo:hi], resamples), ymax=ymax)
        boot = gpd._finish_rows(x, ymax, res)
        xi = boot.xi.reshape(hi - lo, resamples)
        xi = np.where(boot.status.reshape(hi - lo, resamples) == STATUS_NO_CONVERGENCE, np.nan, xi)
        with np.errstate(all="ignore"):
            qs = np.nanquantile(xi, q, axis=1).T  # (rows, 2·levels)
        ci[lo:hi] = qs.reshape(hi - lo, len(levels), 2)

    starts = range(0, r, chunk)
    if workers <= 1 or len(starts) == 1:
        for lo in starts:
            run(lo)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, starts))
    ci[fits.status != STATUS_OK] = math.nan
    return fits, ci


#: elements of one stacked bootstrap matrix (bounds memory at ~25 MB per thread)
_CHUNK_ELEMENTS = 3_000_000


def normal_cis(y: np.ndarray, f: RowFits, rows: np.ndarray, level: float) -> np.ndarray:
    """ξ̂ ± z·se at ``level`` for the ``rows`` of ``y``, se from the observed information
    (:func:`tailgate.stats.inference.observed_information`); NaN where the fit is not interior.

    The stand-in for the registered percentile interval (module docstring: its validation).

    Parameters
    ----------
    y : np.ndarray
        The exceedances, one sample per row.
    f : RowFits
        The fits of every row of ``y``.
    rows : np.ndarray
        The rows wanted.
    level : float
        The two-sided level.

    Returns
    -------
    np.ndarray
        Shape (rows.size, 2): row i the interval of ``rows[i]``.

    References
    ----------
    Smith (1987).
    """
    z = float(norm_ppf(0.5 + level / 2.0))
    out = np.full((rows.size, 2), math.nan)
    for i, t in enumerate(rows):
        if f.status[t] != STATUS_OK:
            continue
        one = gpd.GPDFit(float(f.xi[t]), float(f.sigma[t]), y.shape[1], "ok", float(f.loglik[t]))
        se = inference.observed_information(y[t], one).se_xi
        out[i] = (one.xi - z * se, one.xi + z * se)
    return out


@dataclass
class P1Rows:
    """P1's statistics of some rows of a sample matrix (row i of each array: ``rows[i]``)."""

    #: the percentile interval (or its normal stand-in) of ξ, (rows, 2); NaN when not computed
    ci: np.ndarray
    #: the profile-likelihood interval of ξ at P1's level, (rows, 2); NaN when not computed
    profile_ci: np.ndarray
    #: the profile log-likelihood per row (``lr_test``), None where not computed
    profiles: list[inference.ProfileGrid | None] = field(default_factory=list)


def p1_rows(
    y: np.ndarray,
    fits: RowFits,
    rows: np.ndarray,
    settings: GateSettings,
    resamples: int | None,
    rngs: Sequence[np.random.Generator] | None = None,
    *,
    workers: int = 1,
) -> P1Rows:
    """What P1's registered method reads for the ``rows`` of the exceedance matrix ``y``.

    Parameters
    ----------
    y : np.ndarray
        The exceedance matrix, one sample per row.
    fits : RowFits
        The fits of every row of ``y``.
    rows : np.ndarray
        The rows wanted.
    settings : GateSettings
        The registered rules (P1's method and level).
    resamples : int or None
        Percentile-bootstrap resamples per row, or None for the normal stand-in
        (:func:`normal_cis`).
    rngs : Sequence[np.random.Generator] or None, default None
        ``rngs[i]`` draws the bootstrap of ``rows[i]`` (needed only for the percentile
        bootstrap, ``resamples`` given).
    workers : int, default 1
        Threads of the bootstrap; the result does not depend on it.

    Returns
    -------
    P1Rows
        ``ci`` under ``percentile``, ``profile_ci`` under ``profile``, ``profiles`` under
        ``lr_test``; the other fields, and rows without an interior fit, NaN or None.

    Raises
    ------
    ValueError
        If the percentile bootstrap is asked for without one generator per row.
    """
    rows = np.asarray(rows, dtype=np.int64)
    nan2 = np.full((rows.size, 2), math.nan)
    out = P1Rows(nan2.copy(), nan2.copy(), [None] * rows.size)
    method, level = settings.p1_method, settings.ci_level
    if rows.size == 0:
        return out
    if method == "percentile" and resamples is None:
        out.ci = normal_cis(y, fits, rows, level)
        return out
    if method == "percentile":
        if rngs is None or len(rngs) != rows.size:
            raise ValueError("the percentile bootstrap needs one generator per row")
        own = RowFits(*(np.asarray(a)[rows] for a in dataclasses.astuple(fits)))
        _, cis = percentile_cis(y[rows], int(resamples), [level], rngs, workers=workers, fits=own)
        out.ci = cis[:, 0, :]
        return out
    for i, t in enumerate(rows):
        if fits.status[t] != STATUS_OK:
            continue
        one = gpd.GPDFit(
            float(fits.xi[t]), float(fits.sigma[t]), y.shape[1], "ok", float(fits.loglik[t])
        )
        if method == "profile":
            p = inference.profile_ci(y[t], level, one)
            out.profile_ci[i] = (p.low, p.high)
        else:
            out.profiles[i] = inference.profile_grid(y[t], one)
    return out


def p1_interval(settings: GateSettings, resamples: int | None, *, lattice: bool = False) -> str:
    """How a simulation computed P1, in words (for its output and the report).

    Parameters
    ----------
    settings : GateSettings
        The registered rules (P1's method and ``lr_calibration``).
    resamples : int or None
        Percentile-bootstrap resamples per fit, or None for the normal stand-in.
    lattice : bool, default False
        The samples were fitted by the lattice rule, on which P1's percentile method reads the
        profile interval (:func:`tailgate.protocol.gates.p1_reads`).

    Returns
    -------
    str
        The method, and for the percentile method the resamples or the stand-in.
    """
    if settings.p1_method == "percentile" and lattice:
        return "profile-likelihood intervals (the percentile method on a lattice)"
    if settings.p1_method == "profile":
        return "profile-likelihood intervals, as registered"
    if settings.p1_method == "lr_test":
        return f"two-sample likelihood-ratio test ({settings.lr_calibration}), as registered"
    if resamples is None:
        return (
            "normal interval with observed-information s.e., the stand-in for the registered "
            "percentile bootstrap (validated against it at the registered resamples)"
        )
    return f"percentile bootstrap, {resamples} resamples per fit"
