"""CI-inside-band equivalence of two conditions in mean and TVaR (G1, G2 of Zhou (2026)).

Schuirmann's (1987) two one-sided tests at level α are equivalent to requiring the (1 − 2α)
confidence interval of the difference to lie inside [−δ, +δ]. Zhou (2026) states G1/G2 with the
95 % percentile-bootstrap CI (10k resamples), i.e. TOST at 2.5 % per side; tailgate follows the
seed: the CI level is the registered ``level`` (0.95, or 1 − α/m under Bonferroni), and the band is
closed, so a pair is equivalent iff −δ ≤ low and high ≤ +δ.

Resampling is by prompt: ``paired=True`` draws the same prompt indices for both conditions (their
arrays must be aligned by prompt id), ``paired=False`` draws them independently.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailgate.seeds import child_sequence
from tailgate.stats.gpd import SeedLike, seed_sequence_of
from tailgate.stats.risk import BulkBootstrap, bulk_bootstrap

__all__ = ["BulkEquivalence", "EquivalenceResult", "bulk_equivalence", "ci_inside_band"]


@dataclass(frozen=True)
class EquivalenceResult:
    """Difference estimate, its percentile CI, the band half-width and the decision."""

    statistic: str
    estimate: float
    ci_low: float
    ci_high: float
    margin: float
    level: float
    n_boot: int
    paired: bool

    @property
    def equivalent(self) -> bool:
        return bool(-self.margin <= self.ci_low and self.ci_high <= self.margin)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "equivalent": self.equivalent}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EquivalenceResult:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


def ci_inside_band(
    replicates: np.ndarray,
    estimate: float,
    margin: float,
    level: float,
    *,
    statistic: str = "difference",
    paired: bool = False,
) -> EquivalenceResult:
    """Percentile CI of bootstrap ``replicates`` of a difference, tested inside ±margin.

    Parameters
    ----------
    replicates : numpy.ndarray
        Bootstrap replicates of the difference; non-finite ones are left out of the CI.
    estimate : float
        The full-sample difference.
    margin : float
        Half-width δ of the closed band [−δ, +δ].
    level : float
        CI level.
    statistic : str, default "difference"
        Name of the difference, recorded in the result.
    paired : bool, default False
        Whether the resampling was paired, recorded in the result.

    Returns
    -------
    EquivalenceResult
        The estimate, the equal-tailed CI (NaN without finite replicates), the band, ``level`` and
        the number of replicates; ``equivalent`` iff −δ ≤ low and high ≤ +δ.

    Raises
    ------
    ValueError
        If ``margin`` is not positive or ``level`` is not in (0, 1).

    References
    ----------
    Schuirmann (1987).
    """
    if not margin > 0:
        raise ValueError(f"equivalence margin must be > 0, got {margin!r}")
    if not 0 < level < 1:
        raise ValueError(f"CI level must be in (0, 1), got {level!r}")
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    if r.size == 0:
        lo = hi = math.nan
    else:
        a = (1.0 - level) / 2.0
        lo, hi = (float(v) for v in np.quantile(r, [a, 1.0 - a]))
    return EquivalenceResult(
        statistic,
        float(estimate),
        lo,
        hi,
        float(margin),
        float(level),
        int(np.asarray(replicates).size),
        paired,
    )


@dataclass(frozen=True)
class BulkEquivalence:
    """G1 (mean) and G2 (TVaR) equivalence of condition A minus condition B."""

    mean: EquivalenceResult
    tvar: EquivalenceResult
    tvar_level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean.to_dict(),
            "tvar": self.tvar.to_dict(),
            "tvar_level": self.tvar_level,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BulkEquivalence:
        return cls(
            EquivalenceResult.from_dict(d["mean"]),
            EquivalenceResult.from_dict(d["tvar"]),
            float(d["tvar_level"]),
        )


def bulk_equivalence(
    x_a: np.ndarray,
    x_b: np.ndarray,
    *,
    margin_mean: float,
    margin_tvar: float,
    tvar_level: float = 0.9,
    level: float = 0.95,
    n_boot: int = 10_000,
    seed: SeedLike = 0,
    paired: bool = False,
) -> BulkEquivalence:
    """Bootstrap the A − B differences of mean and TVaR and test both CIs inside their bands.

    Parameters
    ----------
    x_a, x_b : numpy.ndarray
        Scores of conditions A and B, one per prompt.
    margin_mean : float
        Band half-width of the mean difference (G1).
    margin_tvar : float
        Band half-width of the TVaR difference (G2).
    tvar_level : float, default 0.9
        Level of the TVaR.
    level : float, default 0.95
        CI level (the registered level, or 1 − α/m under Bonferroni).
    n_boot : int, default 10_000
        Bootstrap resamples.
    seed : SeedLike, default 0
        Seed of the resamples (unpaired: A and B draw from two fixed children of it).
    paired : bool, default False
        Draw the same prompt indices for both conditions (arrays aligned by prompt id); False:
        independent draws.

    Returns
    -------
    BulkEquivalence
        The G1 (mean) and G2 (TVaR) results and ``tvar_level``.

    Raises
    ------
    ValueError
        If ``paired`` and the two arrays differ in shape.

    References
    ----------
    Schuirmann (1987).
    """
    ss = seed_sequence_of(seed)
    if paired:
        if np.shape(x_a) != np.shape(x_b):
            raise ValueError(
                "paired resampling needs both conditions aligned by prompt with equal length, "
                f"got {np.shape(x_a)} and {np.shape(x_b)}; use paired=False or align the prompts"
            )
        sa = sb = ss
    else:
        # fixed children (not SeedSequence.spawn, which depends on earlier spawns)
        sa, sb = (child_sequence(ss, 2**31 + k) for k in (0, 1))
    ba: BulkBootstrap = bulk_bootstrap(x_a, n_boot, sa, tvar_level=tvar_level, paired=paired)
    bb: BulkBootstrap = bulk_bootstrap(x_b, n_boot, sb, tvar_level=tvar_level, paired=paired)
    mean = ci_inside_band(
        ba.mean - bb.mean,
        ba.estimate_mean - bb.estimate_mean,
        margin_mean,
        level,
        statistic="mean",
        paired=paired,
    )
    tv = ci_inside_band(
        ba.tvar - bb.tvar,
        ba.estimate_tvar - bb.estimate_tvar,
        margin_tvar,
        level,
        statistic=f"tvar_{tvar_level:g}",
        paired=paired,
    )
    return BulkEquivalence(mean, tv, float(tvar_level))
