"""Gates G1–G5 and pass criteria P1, P2 for one pair at one threshold (Section 3 of seed 000).

Pure functions over stored statistics, so the audit can re-derive every decision:

* :class:`ConditionSummary` — what one condition contributes at threshold q: n_exc, ξ̂ with its
  percentile CI (at the registered CI level), the AD p-value, ξ̂ at q − δ and q + δ.
* :class:`BulkEquivalence` (from :mod:`tailgate.stats.equivalence`) — the CIs of the A − B
  differences of mean and TVaR, which need joint resampling and are therefore stored per pair.
* :class:`GateSettings` — the registered tolerances and α, with the multiplicity rule.

Gate order (the first failing gate is reported in this order): G1 mean equivalence, G2 TVaR
equivalence, G3 n_exc ≥ N* for both, G4 AD p > α_gof for both, G5 |ξ̂(q ± δ) − ξ̂(q)| < tol for
both, P1 ξ CIs do not overlap, P2 |ξ̂_A − ξ̂_B| > Δfloor.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from tailgate.stats.equivalence import BulkEquivalence
from tailgate.stats.stability import stability_check

__all__ = [
    "GATE_ORDER",
    "ConditionSummary",
    "GateResult",
    "GateSettings",
    "PairVerdict",
    "evaluate_pair",
]

GATE_ORDER = ("G1", "G2", "G3", "G4", "G5", "P1", "P2")


def _nan(v: Any) -> float:
    return math.nan if v is None else float(v)


def _null(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


@dataclass(frozen=True)
class GateSettings:
    """Registered decision rules of seed 000 (defaults: the seed's pre-registered design).

    ``multiplicity`` is ``"none"`` or ``"bonferroni"``; with Bonferroni over ``n_pairs`` pairs the
    CI level of G1, G2 and P1 is 1 − α/n_pairs (seed 000: α = 0.05/6).
    """

    delta_mu: float = 0.10
    delta_tvar: float = 0.20
    n_star: int = 500
    gof_alpha: float = 0.05
    stability_delta: float = 0.02
    stability_tolerance: float = 0.05
    delta_floor: float = 0.10
    alpha: float = 0.05
    multiplicity: str = "none"
    n_pairs: int = 1
    tvar_level: float = 0.9

    def __post_init__(self) -> None:
        if self.multiplicity not in ("none", "bonferroni"):
            raise ValueError(
                f"multiplicity must be 'none' or 'bonferroni', got {self.multiplicity!r}"
            )
        if self.n_pairs < 1:
            raise ValueError(f"n_pairs must be >= 1, got {self.n_pairs!r}")

    @property
    def alpha_adjusted(self) -> float:
        return self.alpha / self.n_pairs if self.multiplicity == "bonferroni" else self.alpha

    @property
    def ci_level(self) -> float:
        """Two-sided CI level of G1, G2 and P1: 1 − α_adj."""
        return 1.0 - self.alpha_adjusted

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateSettings:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


@dataclass(frozen=True)
class ConditionSummary:
    """One condition at threshold quantile q: everything G3–G5, P1 and P2 need.

    ``xi_minus``/``xi_plus`` are ξ̂ at q − δ and q + δ; ``None`` when that side does not exist
    (outside (0, 1) or below the scan's minimum exceedances), NaN when it exists without an
    interior fit.
    """

    condition: str
    q: float
    u: float
    n_exc: int
    xi: float
    sigma: float
    fit_status: str
    xi_ci_low: float
    xi_ci_high: float
    ci_level: float
    ad_pvalue: float
    xi_minus: float | None
    xi_plus: float | None
    n_boundary: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("u", "xi", "sigma", "xi_ci_low", "xi_ci_high", "ad_pvalue"):
            d[k] = _null(d[k])
        for k in ("xi_minus", "xi_plus"):
            v = d[k]
            d[k] = None if v is None else ("nan" if not math.isfinite(v) else float(v))
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConditionSummary:
        def side(v: Any) -> float | None:
            return None if v is None else (math.nan if v == "nan" else float(v))

        return cls(
            condition=str(d["condition"]),
            q=float(d["q"]),
            u=_nan(d["u"]),
            n_exc=int(d["n_exc"]),
            xi=_nan(d["xi"]),
            sigma=_nan(d["sigma"]),
            fit_status=str(d["fit_status"]),
            xi_ci_low=_nan(d["xi_ci_low"]),
            xi_ci_high=_nan(d["xi_ci_high"]),
            ci_level=float(d["ci_level"]),
            ad_pvalue=_nan(d["ad_pvalue"]),
            xi_minus=side(d["xi_minus"]),
            xi_plus=side(d["xi_plus"]),
            n_boundary=int(d.get("n_boundary", 0)),
        )


@dataclass(frozen=True)
class GateResult:
    """One gate: its value, the criterion it was held to, and whether it passed."""

    gate: str
    passed: bool
    value: float | None
    criterion: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "value": _null(self.value)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateResult:
        return cls(d["gate"], bool(d["passed"]), d["value"], d["criterion"], d.get("detail", ""))


@dataclass(frozen=True)
class PairVerdict:
    """Every gate of seed 000 for pair (A, B) at threshold q, in order G1..G5, P1, P2."""

    a: str
    b: str
    q: float
    gates: tuple[GateResult, ...]

    def gate(self, name: str) -> GateResult:
        return next(g for g in self.gates if g.gate == name)

    @property
    def first_failing(self) -> str | None:
        return next((g.gate for g in self.gates if not g.passed), None)

    @property
    def admissible(self) -> bool:
        """G1–G4 all pass (the pair's comparison is well-posed)."""
        return all(self.gate(n).passed for n in ("G1", "G2", "G3", "G4"))

    @property
    def passed(self) -> bool:
        return self.first_failing is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "q": self.q,
            "gates": [g.to_dict() for g in self.gates],
            "first_failing": self.first_failing,
            "admissible": self.admissible,
            "passed": self.passed,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PairVerdict:
        return cls(
            d["a"], d["b"], float(d["q"]), tuple(GateResult.from_dict(g) for g in d["gates"])
        )


def _check_level(what: str, level: float, settings: GateSettings) -> None:
    if not math.isclose(level, settings.ci_level, rel_tol=0, abs_tol=1e-9):
        raise ValueError(
            f"{what} was computed at CI level {level:g} but the registered rule needs "
            f"{settings.ci_level:g} (alpha={settings.alpha:g}, multiplicity="
            f"{settings.multiplicity}, n_pairs={settings.n_pairs}); recompute it at that level"
        )


def _band_gate(name: str, lo: float, hi: float, est: float, margin: float) -> GateResult:
    ok = math.isfinite(lo) and math.isfinite(hi) and -margin <= lo and hi <= margin
    return GateResult(
        name,
        bool(ok),
        est,
        f"CI inside [-{margin:g}, {margin:g}]",
        f"CI [{lo:.4g}, {hi:.4g}]",
    )


def evaluate_pair(
    a: ConditionSummary, b: ConditionSummary, bulk: BulkEquivalence, settings: GateSettings
) -> PairVerdict:
    """All gates and pass criteria of Section 3 of seed 000 for conditions ``a`` and ``b`` at q.

    ``bulk`` holds the CIs of mean(A) − mean(B) and TVaR(A) − TVaR(B); every CI must have been
    computed at ``settings.ci_level`` (checked).
    """
    if not math.isclose(a.q, b.q, abs_tol=1e-12):
        raise ValueError(f"pair compares different thresholds: {a.q} vs {b.q}")
    for what, lvl in (
        (f"xi CI of {a.condition}", a.ci_level),
        (f"xi CI of {b.condition}", b.ci_level),
        ("mean difference CI", bulk.mean.level),
        ("TVaR difference CI", bulk.tvar.level),
    ):
        _check_level(what, lvl, settings)
    s = settings
    g1 = _band_gate("G1", bulk.mean.ci_low, bulk.mean.ci_high, bulk.mean.estimate, s.delta_mu)
    g2 = _band_gate("G2", bulk.tvar.ci_low, bulk.tvar.ci_high, bulk.tvar.estimate, s.delta_tvar)
    n_min = min(a.n_exc, b.n_exc)
    g3 = GateResult(
        "G3",
        n_min >= s.n_star,
        float(n_min),
        f"min n_exc >= {s.n_star}",
        f"n_exc {a.n_exc}, {b.n_exc}",
    )
    p_min = min(a.ad_pvalue, b.ad_pvalue)
    g4 = GateResult(
        "G4",
        bool(math.isfinite(p_min) and p_min > s.gof_alpha),
        p_min,
        f"min AD p > {s.gof_alpha:g}",
        f"AD p {a.ad_pvalue:.4g}, {b.ad_pvalue:.4g}",
    )
    checks = [
        stability_check(
            c.xi,
            c.xi_minus,
            c.xi_plus,
            q=c.q,
            delta=s.stability_delta,
            tolerance=s.stability_tolerance,
        )
        for c in (a, b)
    ]
    dev = max(c.deviation for c in checks)
    g5 = GateResult(
        "G5",
        all(c.passed for c in checks),
        dev,
        f"max |xi(q±{s.stability_delta:g}) - xi(q)| < {s.stability_tolerance:g}",
        "; ".join(
            f"{c.condition}: sides {'/'.join(k.sides) or 'none'}"
            for c, k in zip((a, b), checks, strict=True)
        ),
    )
    fits_ok = a.fit_status == "ok" and b.fit_status == "ok"
    sep = max(b.xi_ci_low - a.xi_ci_high, a.xi_ci_low - b.xi_ci_high)
    p1 = GateResult(
        "P1",
        bool(fits_ok and sep > 0),
        sep,
        f"{s.ci_level:.4g} xi CIs do not overlap (gap > 0)",
        f"CIs [{a.xi_ci_low:.4g}, {a.xi_ci_high:.4g}] vs [{b.xi_ci_low:.4g}, {b.xi_ci_high:.4g}]",
    )
    dxi = abs(a.xi - b.xi)
    p2 = GateResult(
        "P2",
        bool(fits_ok and dxi > s.delta_floor),
        dxi,
        f"|xi_A - xi_B| > {s.delta_floor:g}",
        f"fits {a.fit_status}, {b.fit_status}",
    )
    return PairVerdict(a.condition, b.condition, a.q, (g1, g2, g3, g4, g5, p1, p2))
