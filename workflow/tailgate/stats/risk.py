"""Thresholds, exceedances and TVaR (Section 3 of Zhou (2026)).

Quantiles are numpy's default "linear" definition (Hyndman–Fan type 7): with the sample sorted
ascending, the q-quantile interpolates between order statistics h = (N − 1)q. The POT threshold of
a condition is its own empirical q-quantile u, and its exceedances are y = x[x > u] − u (strictly
above, so ties at u are not exceedances and every y is > 0).

Ties. Scores on a lattice (rounded judge scores) put u on a tied value; the strict rule then
drops every value tied at u and biases ξ̂. The registered rule ``half_step``
(``protocol.thresholds.ties``; Coles 2001 §4.4, the Fort Collins rainfall analysis) moves u
half-way down to the next smaller distinct value when values are tied at u, so the tied values
count as exceedances. :func:`tie_diagnostic` counts ties at u and among the exceedances either way.
``half_step`` keeps the ties but the continuous density still misreads rounded exceedances (ξ̂
0.165 for a latent 0.2 at step σ/2); the rule ``lattice`` places the threshold half a step below
the lattice value on or above the quantile, so every exceedance is a cell midpoint (k + ½)h, and
the fits use the discretised likelihood (:mod:`tailgate.stats.lattice_likelihood`, methods note
P10); the step is the registered ``protocol.thresholds.lattice_step`` or the one detected in the
data. On a transformed lattice (:class:`tailgate.stats.lattice.Cells`: probability grades on the
logit scale) the threshold is the image of the point half a step below that lattice value, and the
exceedances keep their unequal cells (``Exceedances.step``).

TVaR_q (Nitsure et al. 2024; TVaR_0.9 in H1 of Zhou (2026)) is the mean of the values strictly above
the empirical q-quantile. When no value lies strictly above (all tied at the top) it is u itself.

:func:`bulk_bootstrap` resamples whole prompts and returns the mean and TVaR of every replicate,
computed from resample counts without sorting the replicates. Replicate r draws its indices from
block ``r // BLOCK`` of the seed's stream, so two conditions bootstrapped with the same seed and
aligned by prompt are resampled *paired by prompt*; with different seeds, independently.
:func:`bulk_bootstrap_scales` does the same for one condition on several (monotonically related)
scales from one set of draws, as the bulk stage does for G1/G2.

From :data:`TOP_BLOCK_PROMPTS` prompts up, unpaired replicates draw only the prompts that land
among a condition's top values (N ~ Binomial, then N uniform draws: an exact split) and the sum
of the other draws from its normal law with a skewness term (:mod:`tailgate.stats.bulk_top`,
methods note P12): about a tenth of the draws at ``tvar_level`` 0.9.

How the replicates are computed (the indices are fixed by the seed; only the speed is a choice):
one compiled pass per replicate counts its draws by prompt and sums count · value on every scale
in a fixed order (the same bits on every machine); the TVaR quantile and sums read only the
counts of a window of ranks around the sample's own quantile rank
(:mod:`tailgate.stats.bulk_replicates`, which says why the window never changes the answer).
Memory: the stream's words for a few replicates and one replicate's counts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailgate.lazy import lazy_module
from tailgate.stats import lattice
from tailgate.stats.gpd import SeedLike, _block_rng, seed_sequence_of

#: the bulk bootstrap's compiled replicates: numba loads with the first bulk bootstrap, not with
#: every job that reads thresholds and TVaRs (0.2 s a job)
bulk_replicates = lazy_module("tailgate.stats.bulk_replicates")
bulk_top = lazy_module("tailgate.stats.bulk_top")

__all__ = [
    "TIE_RULES",
    "BulkBootstrap",
    "Exceedances",
    "TieDiagnostic",
    "bulk_bootstrap",
    "bulk_bootstrap_scales",
    "exceedances",
    "lattice_step_of",
    "tie_diagnostic",
    "tvar",
]

#: bootstrap replicates per block (each block has its own random stream)
BLOCK = 64
#: the TVaR window starts this many binomial standard deviations below the quantile rank
WINDOW_SDS = 8.0
#: from this many prompts up, independent replicates draw only the top block's prompts and the
#: bottom block's sum from its law (:mod:`tailgate.stats.bulk_top`, methods note P12)
TOP_BLOCK_PROMPTS = 100_000


@dataclass(frozen=True, eq=False)
class Exceedances:
    """Threshold u at quantile q of a sample of size n, and the exceedances y = x[x > u] − u;
    ``step``: the lattice of their cells under the rule ``lattice`` (the step, or the
    :class:`tailgate.stats.lattice.Cells` at this threshold), else None."""

    q: float
    u: float
    n: int
    y: np.ndarray
    step: lattice.Lattice | None = None

    @property
    def n_exc(self) -> int:
        return int(self.y.size)


def _finite_1d(x: np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-D array of severities")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} contains NaN or infinite severities; transform or drop them")
    return x


#: threshold rules for tied values (``protocol.thresholds.ties``)
TIE_RULES = ("strict", "half_step", "lattice")


def lattice_step_of(x: np.ndarray, step: lattice.Lattice | None = None) -> lattice.Lattice:
    """The lattice of the rule ``lattice``: ``step`` when given, else the step detected in ``x``.

    Parameters
    ----------
    x : numpy.ndarray
        The scores (read only when ``step`` is None).
    step : Lattice or None, default None
        The registered step, or the :class:`tailgate.stats.lattice.Cells` of a transformed
        lattice (returned as it is).

    Returns
    -------
    Lattice
        The step (float), or the :class:`tailgate.stats.lattice.Cells`.

    Raises
    ------
    ValueError
        When ``step`` is not a positive finite number, or, without one, the scores are not on a
        lattice.
    """
    if isinstance(step, lattice.Cells):
        return step
    if step is not None:
        if not (math.isfinite(step) and step > 0):
            raise ValueError(f"the lattice step must be a positive number, got {step!r}")
        return float(step)
    h = lattice.detect_step(x)
    if h is None:
        raise ValueError(
            "the scores are not on a lattice (no common step between their distinct values); "
            "register protocol.thresholds.ties: strict (or half_step), or the step as "
            "protocol.thresholds.lattice_step"
        )
    return h


def _half_step(x: np.ndarray, u: float) -> float:
    """u moved half-way to the next smaller distinct value when values are tied at u."""
    if np.count_nonzero(x == u) < 2:
        return u
    below = x[x < u]
    return u if below.size == 0 else 0.5 * (u + float(below.max()))


def exceedances(
    x: np.ndarray, q: float, ties: str = "strict", step: lattice.Lattice | None = None
) -> Exceedances:
    """Per-condition POT threshold at the empirical ``q``-quantile and its exceedances.

    Parameters
    ----------
    x : numpy.ndarray
        The severities (a non-empty 1-D array of finite values).
    q : float
        The threshold quantile, in (0, 1).
    ties : str, default "strict"
        The tie rule (:data:`TIE_RULES`). ``"strict"``: the threshold is the quantile;
        ``"half_step"``: with values tied at the quantile, the threshold is half-way to the next
        smaller distinct value; ``"lattice"``: half a lattice ``step`` below the lattice value on
        or above the quantile (module docstring).
    step : Lattice or None, default None
        The lattice of the rule ``"lattice"`` (detected in ``x`` when None); unused otherwise.

    Returns
    -------
    Exceedances
        The threshold u, the exceedances y = x[x > u] − u and, under the rule ``"lattice"``, the
        lattice of their cells.

    Raises
    ------
    ValueError
        When ``q`` is not in (0, 1), ``ties`` is not a rule, ``x`` is not a non-empty 1-D array of
        finite values, or (rule ``"lattice"``) no lattice step is given or found.

    References
    ----------
    Zhou (2026), Section 3; Coles (2001), Section 4.4 (the rule ``"half_step"``).
    """
    if not 0 < q < 1:
        raise ValueError(f"threshold quantile q must be in (0, 1), got {q!r}")
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {TIE_RULES}, got {ties!r}")
    x = _finite_1d(x, "severities")
    if ties == "lattice":
        ex = lattice.exceedances(x, q, lattice_step_of(x, step))
        return Exceedances(q=ex.q, u=ex.u, n=ex.n, y=ex.y, step=ex.step)
    u = float(np.quantile(x, q))
    if ties == "half_step":
        u = _half_step(x, u)
    return Exceedances(q=float(q), u=u, n=int(x.size), y=x[x > u] - u)


@dataclass(frozen=True)
class TieDiagnostic:
    """Ties at the empirical q-quantile and among the exceedances above the threshold used."""

    quantile_value: float
    at_threshold: int
    tied_exceedances: int
    n_exc: int
    rule: str

    @property
    def fires(self) -> bool:
        """Values are tied at the quantile, or more than 1 % of the exceedances repeat a value
        (lattice data; a stray duplicate, e.g. two scores clipped to the same ε, does not count)."""
        return self.at_threshold > 1 or self.tied_exceedances > 0.01 * self.n_exc

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "fires": self.fires}


def tie_diagnostic(
    x: np.ndarray, q: float, ties: str = "strict", step: lattice.Lattice | None = None
) -> TieDiagnostic:
    """How many values are tied at the q-quantile and how many exceedances repeat a value.

    Parameters
    ----------
    x : numpy.ndarray
        The severities (a non-empty 1-D array of finite values).
    q : float
        The threshold quantile, in (0, 1).
    ties : str, default "strict"
        The tie rule of the threshold used (:func:`exceedances`).
    step : Lattice or None, default None
        The lattice of the rule ``"lattice"`` (detected in ``x`` when None).

    Returns
    -------
    TieDiagnostic
        The empirical q-quantile, the number of values equal to it, the number of exceedances
        that repeat a value (exceedances less distinct ones), the exceedances and the rule.

    Raises
    ------
    ValueError
        As :func:`exceedances`.
    """
    x = _finite_1d(x, "severities")
    uq = float(np.quantile(x, q))
    ex = exceedances(x, q, ties, step)
    distinct = int(np.unique(ex.y).size)
    return TieDiagnostic(uq, int(np.count_nonzero(x == uq)), ex.n_exc - distinct, ex.n_exc, ties)


def tvar(x: np.ndarray, level: float = 0.9) -> float:
    """TVaR_level: mean of the values strictly above the empirical ``level``-quantile.

    Parameters
    ----------
    x : numpy.ndarray
        The severities (a non-empty 1-D array of finite values).
    level : float, default 0.9
        The level, in (0, 1).

    Returns
    -------
    float
        The TVaR; the quantile itself when no value lies strictly above it.

    Raises
    ------
    ValueError
        When ``level`` is not in (0, 1) or ``x`` is not a non-empty 1-D array of finite values.

    References
    ----------
    Nitsure et al. (2024); Zhou (2026), Section 3 (TVaR_0.9 in H1).
    """
    if not 0 < level < 1:
        raise ValueError(f"TVaR level must be in (0, 1), got {level!r}")
    x = _finite_1d(x, "severities")
    u = float(np.quantile(x, level))
    above = x[x > u]
    return float(above.mean()) if above.size else u


@dataclass(frozen=True, eq=False)
class BulkBootstrap:
    """Mean and TVaR of every bootstrap replicate of one condition (for G1/G2 of Zhou (2026))."""

    mean: np.ndarray
    tvar: np.ndarray
    tvar_level: float
    estimate_mean: float
    estimate_tvar: float


def bulk_bootstrap(
    x: np.ndarray,
    n_boot: int,
    seed: SeedLike,
    *,
    tvar_level: float = 0.9,
    paired: bool = False,
) -> BulkBootstrap:
    """Percentile-bootstrap replicates of mean(x) and TVaR_level(x), resampling prompts.

    Parameters
    ----------
    x : numpy.ndarray
        One condition's severities, one per prompt (a non-empty 1-D array of finite values).
    n_boot : int
        The number of replicates, at least 1.
    seed : SeedLike
        The random stream's seed; replicate r draws from block ``r // BLOCK`` of it.
    tvar_level : float, default 0.9
        The TVaR level, in (0, 1).
    paired : bool, default False
        Draw every prompt of every replicate, so that two conditions aligned by prompt and
        bootstrapped with the same ``seed`` are resampled together (see the module docstring);
        otherwise, from :data:`TOP_BLOCK_PROMPTS` prompts up, the bottom block's sum is drawn
        from its law.

    Returns
    -------
    BulkBootstrap
        The mean and TVaR of every replicate (length ``n_boot``), the level, and the sample's own
        mean and TVaR.

    Raises
    ------
    ValueError
        As :func:`bulk_bootstrap_scales`.

    References
    ----------
    Zhou (2026), Section 3 (gates G1/G2).
    """
    return bulk_bootstrap_scales({"x": x}, n_boot, seed, tvar_level=tvar_level, paired=paired)["x"]


def bulk_bootstrap_scales(
    scales: Mapping[str, np.ndarray],
    n_boot: int,
    seed: SeedLike,
    *,
    tvar_level: float = 0.9,
    paired: bool = False,
) -> dict[str, BulkBootstrap]:
    """:func:`bulk_bootstrap` of one condition on several scales from the same resamples.

    One sort order serves all the scales and the indices are drawn once; the result for each scale
    equals :func:`bulk_bootstrap` of that scale alone.

    Parameters
    ----------
    scales : Mapping of str to numpy.ndarray
        The condition's severities on every scale, by name: the same prompts in the same order,
        the scales monotone (non-decreasing) transforms of each other, as the registered scales
        are (probability, logit).
    n_boot : int
        The number of replicates, at least 1.
    seed : SeedLike
        The random stream's seed (as :func:`bulk_bootstrap`).
    tvar_level : float, default 0.9
        The TVaR level, in (0, 1).
    paired : bool, default False
        Draw every prompt of every replicate (as :func:`bulk_bootstrap`).

    Returns
    -------
    dict of str to BulkBootstrap
        The replicates on every scale, by name in the order of ``scales``.

    Raises
    ------
    ValueError
        When ``n_boot`` < 1, ``tvar_level`` is not in (0, 1), there is no scale, a scale is not a
        non-empty 1-D array of finite values, the scales differ in length, or a scale is not a
        monotone transform of the first.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot!r}")
    if not 0 < tvar_level < 1:
        raise ValueError(f"TVaR level must be in (0, 1), got {tvar_level!r}")
    names = list(scales)
    if not names:
        raise ValueError("bulk_bootstrap_scales needs at least one scale")
    arrays = [_finite_1d(scales[k], f"severities on scale {k!r}") for k in names]
    n = arrays[0].size
    for k, a in zip(names, arrays, strict=True):
        if a.size != n:
            raise ValueError(
                f"severities on scale {k!r} have {a.size} values, scale {names[0]!r} has {n}; "
                "every scale must hold the same prompts"
            )
    order = np.argsort(arrays[0], kind="stable")
    sorted_ = [a[order] for a in arrays]
    for k, xs in zip(names, sorted_, strict=True):
        if np.any(np.diff(xs) < 0):
            raise ValueError(f"scale {k!r} is not a monotone transform of scale {names[0]!r}")
    ss = seed_sequence_of(seed)
    h = (n - 1) * tvar_level
    k0 = math.floor(h)
    k1 = min(k0 + 1, n - 1)
    spread = math.sqrt(n * tvar_level * (1.0 - tvar_level)) + 1.0
    lo = max(0, int(k0 - WINDOW_SDS * spread))
    xs = np.stack(sorted_)
    if paired or n < TOP_BLOCK_PROMPTS or lo == 0:
        sample = bulk_replicates.Sample(np.stack(arrays), xs, order, lo, k0, k1, h - k0)
        replicate_rows = bulk_replicates.replicate_rows
    else:
        sample, bottom = bulk_top.TopSample(xs, lo, k0, k1, h - k0), bulk_top.bottom_of(xs, lo)

        def replicate_rows(rng: np.random.Generator, rows: int, sample: Any, *out: Any) -> None:
            bulk_top.top_rows(rng, BLOCK, rows, sample, bottom, *out)

    means, tvars = np.empty((len(names), n_boot)), np.empty((len(names), n_boot))
    for b in range(-(-n_boot // BLOCK)):
        first, last = b * BLOCK, min((b + 1) * BLOCK, n_boot)
        m, t = np.empty((len(names), last - first)), np.empty((len(names), last - first))
        replicate_rows(_block_rng(ss, b), last - first, sample, m, t)
        means[:, first:last], tvars[:, first:last] = m, t
    return {
        k: BulkBootstrap(
            mean=means[i].copy(),
            tvar=tvars[i].copy(),
            tvar_level=float(tvar_level),
            estimate_mean=float(arrays[i].mean()),
            estimate_tvar=tvar(arrays[i], tvar_level),
        )
        for i, k in enumerate(names)
    }
