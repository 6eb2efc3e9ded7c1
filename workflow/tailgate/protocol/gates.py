"""Gates G1–G5 and pass criteria P1, P2 for one pair at one threshold (Section 3 of Zhou (2026)).

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
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from tailgate.prereg.protocol_blocks import Gof, Rules, Stability, Tolerances
from tailgate.prereg.schema import apply_defaults
from tailgate.stats.equivalence import BulkEquivalence
from tailgate.stats.inference import ProfileGrid
from tailgate.stats.likelihood_ratio import (
    LR_CALIBRATIONS,
    bartlett_corrected,
    lr_bootstrap,
    lr_test_grids,
)
from tailgate.stats.stability import (
    EDGE_RULES,
    TOLERANCE_RULES,
    StabilityCheck,
    stability_check,
)
from tailgate.stats.stored import finite_or_none, none_to_nan

__all__ = [
    "ADJUSTABLE_GATES",
    "FAMILIES",
    "GATE_ORDER",
    "P1_METHODS",
    "ConditionSummary",
    "GateResult",
    "GateSettings",
    "PairVerdict",
    "condition_stability",
    "evaluate_pair",
    "p1_gate",
    "p1_reads",
    "p2_gate",
    "registered_rules",
]

GATE_ORDER = ("G1", "G2", "G3", "G4", "G5", "P1", "P2")


def shown(value: float, summary: ConditionSummary | None = None) -> str:
    """A number of a gate's detail text; a missing one (NaN) says why instead of ``nan``: no
    fit (the fit's status, e.g. too few exceedances), or not computed."""
    if math.isfinite(value):
        return f"{value:.4g}"
    if summary is not None and summary.fit_status != "ok":
        return f"none (fit {summary.fit_status})"
    return "none (not computed)"


#: gates whose level a multiplicity correction may adjust (``protocol.adjusted_gates``)
ADJUSTABLE_GATES = ("G1", "G2", "G4", "P1")
#: P1 methods (``protocol.p1_method``)
P1_METHODS = ("percentile", "profile", "lr_test")


def p1_reads(method: str, on_lattice: bool) -> str:
    """The statistic P1 reads under the registered ``p1_method``.

    On a lattice the ``percentile`` method reads the profile-likelihood interval, whose
    coverage holds there (0.93–0.95 at n_exc 100–300, h = σ/2 and σ) where the percentile
    bootstrap of the discretised fit under-covers (0.84–0.92; methods note P10); otherwise the
    registered method itself.

    Parameters
    ----------
    method : str
        The registered ``p1_method`` (one of :data:`P1_METHODS`).
    on_lattice : bool
        Whether a condition of the pair was fitted by the lattice rule (``ties: lattice``).

    Returns
    -------
    str
        ``"profile"`` for ``percentile`` on a lattice, else ``method``.
    """
    return "profile" if on_lattice and method == "percentile" else method


#: multiplicity families (``protocol.family``)
FAMILIES = ("registered", "confirmatory")


def registered_rules(
    protocol: Mapping[str, Any],
    *,
    n_pairs: int = 1,
    tolerances: Mapping[str, float] | None = None,
    multiplier: float = 1.0,
) -> dict[str, Any]:
    """The fields of :class:`GateSettings` as the canonical ``protocol`` block registers them
    (its typed readers, :mod:`tailgate.prereg.protocol_blocks`).

    Parameters
    ----------
    protocol : Mapping[str, Any]
        The canonical ``protocol`` block (defaults applied).
    n_pairs : int, default 1
        Pairs of the multiplicity family (at least 1 is recorded).
    tolerances : Mapping[str, float] or None, default None
        The G1/G2 tolerances ``{"mean", "tvar"}`` of one scorer and scale (None: the block's
        own).
    multiplier : float, default 1.0
        Factor on both tolerances (App. B of Zhou (2026)).

    Returns
    -------
    dict[str, Any]
        Every field of :class:`GateSettings`, by name.

    References
    ----------
    Zhou (2026), Appendix B.
    """
    rules, st, tol = Rules.of(protocol), Stability.of(protocol), Tolerances.of(protocol)
    margins = tolerances or {"mean": tol.mean, "tvar": tol.tvar}
    return {
        "delta_mu": margins["mean"] * multiplier,
        "delta_tvar": margins["tvar"] * multiplier,
        "n_star": rules.min_exceedances,
        "gof_alpha": Gof.of(protocol).alpha,
        "stability_delta": st.delta,
        "stability_tolerance": st.tolerance,
        "delta_floor": rules.delta_floor,
        "alpha": rules.alpha,
        "multiplicity": rules.multiplicity,
        "n_pairs": max(1, n_pairs),
        "tvar_level": rules.tvar_level,
        "family": rules.family,
        "adjusted_gates": rules.adjusted_gates,
        "stability_edge": st.edge,
        "stability_rule": st.tolerance_rule,
        "stability_se_multiplier": st.se_multiplier,
        "p1_method": rules.p1_method,
        "lr_calibration": rules.lr_calibration,
        "lr_bootstrap_below": rules.lr_bootstrap_below,
        "tolerances_source": tol.proposed,
    }


#: the rules of a registration that writes no protocol field: the schema's defaults (the
#: pre-registered design of Zhou (2026)), one pair
_DEFAULT = registered_rules(apply_defaults({"protocol": {}})["protocol"])


@dataclass(frozen=True)
class GateSettings:
    """Registered decision rules of Zhou (2026) (defaults: those of a registration that writes
    no protocol field, for one pair).

    Multiplicity: ``multiplicity`` is ``"none"`` or ``"bonferroni"``; with Bonferroni over the
    ``n_pairs`` pairs of the family (``family``: every registered pair, or the ``confirmatory``
    ones that leave pilot conditions out) each gate of ``adjusted_gates`` is held at α/n_pairs:
    the two-sided CI level of G1, G2 and P1 becomes 1 − α/n_pairs (Zhou (2026): α = 0.05/6), and
    G4's α_gof becomes α_gof/n_pairs if G4 is listed. G3, G5 and P2 are not tests.

    G5: ``stability_edge`` (``one_sided`` | ``fail``) for a side beyond the data range,
    ``stability_rule`` (``fixed`` | ``se``) and ``stability_se_multiplier`` for its tolerance
    (:mod:`tailgate.stats.stability`). P1: ``p1_method`` (``percentile``: the registered
    bootstrap CIs do not overlap; ``profile``: the profile-likelihood CIs do not overlap;
    ``lr_test``: the two-sample likelihood-ratio test of ξ_A = ξ_B rejects at P1's α; on a
    lattice ``percentile`` reads the profile-likelihood CIs, :func:`p1_reads`;
    ``lr_calibration``: ``bartlett``, Λ divided by its null mean, ``chi2``, Λ against χ²₁, or
    ``bootstrap``, a parametric-bootstrap p-value when either condition has fewer than
    ``lr_bootstrap_below`` exceedances and Bartlett above). ``tolerances_source``: ``data``
    where ``init --from-import`` proposed the G1/G2 tolerances from the data
    (``protocol.tolerances.proposed``), else ``registered``.
    """

    delta_mu: float = _DEFAULT["delta_mu"]
    delta_tvar: float = _DEFAULT["delta_tvar"]
    n_star: int = _DEFAULT["n_star"]
    gof_alpha: float = _DEFAULT["gof_alpha"]
    stability_delta: float = _DEFAULT["stability_delta"]
    stability_tolerance: float = _DEFAULT["stability_tolerance"]
    delta_floor: float = _DEFAULT["delta_floor"]
    alpha: float = _DEFAULT["alpha"]
    multiplicity: str = _DEFAULT["multiplicity"]
    n_pairs: int = _DEFAULT["n_pairs"]
    tvar_level: float = _DEFAULT["tvar_level"]
    family: str = _DEFAULT["family"]
    adjusted_gates: tuple[str, ...] = _DEFAULT["adjusted_gates"]
    stability_edge: str = _DEFAULT["stability_edge"]
    stability_rule: str = _DEFAULT["stability_rule"]
    stability_se_multiplier: float = _DEFAULT["stability_se_multiplier"]
    p1_method: str = _DEFAULT["p1_method"]
    lr_calibration: str = _DEFAULT["lr_calibration"]
    lr_bootstrap_below: int = _DEFAULT["lr_bootstrap_below"]
    tolerances_source: str = _DEFAULT["tolerances_source"]

    def __post_init__(self) -> None:
        if self.multiplicity not in ("none", "bonferroni"):
            raise ValueError(
                f"multiplicity must be 'none' or 'bonferroni', got {self.multiplicity!r}"
            )
        if self.n_pairs < 1:
            raise ValueError(f"n_pairs must be >= 1, got {self.n_pairs!r}")
        object.__setattr__(self, "adjusted_gates", tuple(self.adjusted_gates))
        for name, value, allowed in (
            ("family", self.family, FAMILIES),
            ("p1_method", self.p1_method, P1_METHODS),
            ("lr_calibration", self.lr_calibration, LR_CALIBRATIONS),
            ("stability_edge", self.stability_edge, EDGE_RULES),
            ("stability_rule", self.stability_rule, TOLERANCE_RULES),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        bad = [g for g in self.adjusted_gates if g not in ADJUSTABLE_GATES]
        if bad:
            raise ValueError(f"adjusted_gates must be among {ADJUSTABLE_GATES}, got {bad}")

    @property
    def alpha_adjusted(self) -> float:
        """α/n_pairs under Bonferroni, else α (the level of every adjusted gate)."""
        return self.alpha / self.n_pairs if self.multiplicity == "bonferroni" else self.alpha

    def alpha_of(self, gate: str) -> float:
        """The α gate ``gate`` is held at (G1, G2, P1: two-sided CI level 1 − α; G4: α_gof)."""
        base = self.gof_alpha if gate == "G4" else self.alpha
        if self.multiplicity == "bonferroni" and gate in self.adjusted_gates:
            return base / self.n_pairs
        return base

    def level_of(self, gate: str) -> float:
        """Two-sided CI level of G1, G2 or P1: 1 − α of that gate."""
        return 1.0 - self.alpha_of(gate)

    @property
    def ci_level(self) -> float:
        """Two-sided CI level of P1 (and of the fits' gate CIs): 1 − α_P1."""
        return self.level_of("P1")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["adjusted_gates"] = list(self.adjusted_gates)
        if self.lr_calibration != "bootstrap":  # read only under that calibration
            del d["lr_bootstrap_below"]
        if self.tolerances_source == "registered":  # written only where init proposed them
            del d["tolerances_source"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateSettings:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


@dataclass(frozen=True)
class ConditionSummary:
    """One condition at threshold quantile q: everything G3–G5, P1 and P2 need.

    ``xi_minus``/``xi_plus`` are ξ̂ at q − δ and q + δ: ``None`` when that side lies beyond the
    data range (q ± δ outside (0, 1)), NaN when it lies inside but is not testable (fewer
    exceedances than the scan's minimum, or no interior fit); ``n_minus``/``n_plus`` their
    exceedance counts. ``profile_ci_low``/``profile_ci_high`` are the profile-likelihood CI at
    P1's level and ``profile`` the stored profile log-likelihood (P1 methods ``profile`` and
    ``lr_test``). ``se_minus``/``se_plus``: under G5's ``se`` rule, the s.e. of each side's
    difference, a parametric bootstrap of q's fit
    (:func:`tailgate.stats.stability.bootstrap_difference_se`), which the rule uses; None
    under ``fixed`` (and in records written without them: Smith's asymptotic s.e. then).
    ``lattice``: fitted by the lattice rule (P1's percentile method then reads the profile CI,
    :func:`p1_reads`).
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
    n_minus: int | None = None
    n_plus: int | None = None
    profile_ci_low: float = math.nan
    profile_ci_high: float = math.nan
    profile: ProfileGrid | None = None
    lattice: bool = False
    se_minus: float | None = None
    se_plus: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not d["lattice"]:  # continuous summaries keep their stored form
            del d["lattice"]
        for k in ("se_minus", "se_plus"):  # ``se`` rule only; ``fixed`` records keep their keys
            if d[k] is None:
                del d[k]
            elif not math.isfinite(d[k]):
                d[k] = "inf" if d[k] > 0 else "nan"
        for k in ("u", "xi", "sigma", "xi_ci_low", "xi_ci_high", "ad_pvalue"):
            d[k] = finite_or_none(d[k])
        for k in ("profile_ci_low", "profile_ci_high"):
            d[k] = finite_or_none(d[k])
        for k in ("xi_minus", "xi_plus"):
            v = d[k]
            d[k] = None if v is None else ("nan" if not math.isfinite(v) else float(v))
        d["profile"] = None if self.profile is None else self.profile.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConditionSummary:
        def side(v: Any) -> float | None:
            return None if v is None else (math.nan if v == "nan" else float(v))

        def count(v: Any) -> int | None:
            return None if v is None else int(v)

        prof = d.get("profile")
        return cls(
            condition=str(d["condition"]),
            q=float(d["q"]),
            u=none_to_nan(d["u"]),
            n_exc=int(d["n_exc"]),
            xi=none_to_nan(d["xi"]),
            sigma=none_to_nan(d["sigma"]),
            fit_status=str(d["fit_status"]),
            xi_ci_low=none_to_nan(d["xi_ci_low"]),
            xi_ci_high=none_to_nan(d["xi_ci_high"]),
            ci_level=float(d["ci_level"]),
            ad_pvalue=none_to_nan(d["ad_pvalue"]),
            xi_minus=side(d["xi_minus"]),
            xi_plus=side(d["xi_plus"]),
            n_boundary=int(d.get("n_boundary", 0)),
            n_minus=count(d.get("n_minus")),
            n_plus=count(d.get("n_plus")),
            profile_ci_low=none_to_nan(d.get("profile_ci_low")),
            profile_ci_high=none_to_nan(d.get("profile_ci_high")),
            profile=None if prof is None else ProfileGrid.from_dict(prof),
            lattice=bool(d.get("lattice", False)),
            se_minus=side(d.get("se_minus")),
            se_plus=side(d.get("se_plus")),
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
        return {**asdict(self), "value": finite_or_none(self.value)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GateResult:
        return cls(d["gate"], bool(d["passed"]), d["value"], d["criterion"], d.get("detail", ""))


@dataclass(frozen=True)
class PairVerdict:
    """Every gate of Zhou (2026) for pair (A, B) at threshold q, in order G1..G5, P1, P2."""

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


def _check_level(what: str, level: float, settings: GateSettings, gate: str) -> None:
    need = settings.level_of(gate)
    if not math.isclose(level, need, rel_tol=0, abs_tol=1e-9):
        raise ValueError(
            f"{what} was computed at CI level {level:g} but the registered rule needs "
            f"{need:g} for {gate} (alpha={settings.alpha:g}, multiplicity="
            f"{settings.multiplicity}, n_pairs={settings.n_pairs}, adjusted gates "
            f"{'/'.join(settings.adjusted_gates) or 'none'}); recompute it at that level"
        )


def _band_gate(name: str, lo: float, hi: float, est: float, margin: float) -> GateResult:
    ok = math.isfinite(lo) and math.isfinite(hi) and -margin <= lo and hi <= margin
    return GateResult(
        name,
        bool(ok),
        est,
        f"CI inside [-{margin:g}, {margin:g}]",
        f"CI [{shown(lo)}, {shown(hi)}]",
    )


def condition_stability(c: ConditionSummary, s: GateSettings) -> StabilityCheck:
    """G5's check of one condition under the registered edge and tolerance rules.

    Parameters
    ----------
    c : ConditionSummary
        The condition at threshold q, with ξ̂ at q ± δ and their exceedance counts.
    s : GateSettings
        The registered rules (δ, tolerance, edge and tolerance rules, s.e. multiplier).

    Returns
    -------
    StabilityCheck
        :func:`tailgate.stats.stability.stability_check` of the condition.

    References
    ----------
    Zhou (2026), Section 3.
    """
    return stability_check(
        c.xi,
        c.xi_minus,
        c.xi_plus,
        q=c.q,
        delta=s.stability_delta,
        tolerance=s.stability_tolerance,
        edge=s.stability_edge,
        rule=s.stability_rule,
        se_multiplier=s.stability_se_multiplier,
        n_q=c.n_exc,
        n_minus=c.n_minus,
        n_plus=c.n_plus,
        se_minus=c.se_minus,
        se_plus=c.se_plus,
    )


def _g5(a: ConditionSummary, b: ConditionSummary, s: GateSettings) -> GateResult:
    checks = [condition_stability(c, s) for c in (a, b)]
    dev = max(c.deviation for c in checks)
    tol = (
        f"{s.stability_tolerance:g}"
        if s.stability_rule == "fixed"
        else f"{s.stability_se_multiplier:g} s.e. of the difference"
    )
    return GateResult(
        "G5",
        all(c.passed for c in checks),
        dev,
        f"max |xi(q±{s.stability_delta:g}) - xi(q)| < {tol}; side beyond the data range: "
        f"{s.stability_edge}; side without data: fails",
        "; ".join(f"{c.condition}: {k.describe()}" for c, k in zip((a, b), checks, strict=True)),
    )


def p1_gate(a: ConditionSummary, b: ConditionSummary, s: GateSettings) -> GateResult:
    """P1 of Zhou (2026), Section 3, by the registered ``p1_method`` at P1's level.

    Parameters
    ----------
    a, b : ConditionSummary
        The two conditions at the same threshold.
    s : GateSettings
        The registered rules (P1's method, level and ``lr_calibration``).

    Returns
    -------
    GateResult
        Under ``lr_test``: the p-value, passing below α_P1; otherwise the gap between the two
        ξ CIs (percentile, or profile-likelihood as :func:`p1_reads` says), passing above 0.
        It fails unless both fits are interior.

    References
    ----------
    Zhou (2026), Section 3.
    """
    fits_ok = a.fit_status == "ok" and b.fit_status == "ok"
    level = s.level_of("P1")
    if s.p1_method == "lr_test":
        t = lr_test_grids(a.profile, b.profile)
        how = s.lr_calibration
        if how == "bootstrap" and min(a.n_exc, b.n_exc) < s.lr_bootstrap_below:
            t = lr_bootstrap(t, a.n_exc, b.n_exc)
            how = f"parametric bootstrap below {s.lr_bootstrap_below} exceedances"
        elif how in ("bartlett", "bootstrap"):
            t = bartlett_corrected(t, a.n_exc, b.n_exc)
            how = "bartlett"
        alpha = s.alpha_of("P1")
        ok = fits_ok and math.isfinite(t.pvalue) and t.pvalue < alpha
        return GateResult(
            "P1",
            bool(ok),
            t.pvalue,
            f"likelihood-ratio test of xi_A = xi_B ({how}) rejects at alpha {alpha:.4g}",
            f"LR {shown(t.statistic)}, p {shown(t.pvalue)}",
        )
    if p1_reads(s.p1_method, a.lattice or b.lattice) == "profile":
        lo_a, hi_a = a.profile_ci_low, a.profile_ci_high
        lo_b, hi_b = b.profile_ci_low, b.profile_ci_high
        what = "profile-likelihood"
        if s.p1_method == "percentile":
            what += " (the percentile method on a lattice)"
    else:
        lo_a, hi_a, lo_b, hi_b = a.xi_ci_low, a.xi_ci_high, b.xi_ci_low, b.xi_ci_high
        what = "percentile"
    sep = max(lo_b - hi_a, lo_a - hi_b)
    return GateResult(
        "P1",
        bool(fits_ok and sep > 0),
        sep,
        f"{level:.4g} {what} xi CIs do not overlap (gap > 0)",
        f"CIs [{shown(lo_a, a)}, {shown(hi_a, a)}] vs [{shown(lo_b, b)}, {shown(hi_b, b)}]",
    )


def evaluate_pair(
    a: ConditionSummary, b: ConditionSummary, bulk: BulkEquivalence, settings: GateSettings
) -> PairVerdict:
    """All gates and pass criteria of Section 3 of Zhou (2026) for conditions ``a`` and ``b`` at q.

    Every CI must have been computed at the level the registered rule gives its gate (checked).

    Parameters
    ----------
    a, b : ConditionSummary
        The two conditions at the same threshold q.
    bulk : BulkEquivalence
        The CIs of mean(A) − mean(B) and TVaR(A) − TVaR(B).
    settings : GateSettings
        The registered rules.

    Returns
    -------
    PairVerdict
        G1–G5, P1 and P2 of the pair at q, in that order.

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are at different thresholds, or a CI is not at its gate's level.

    References
    ----------
    Zhou (2026), Section 3.
    """
    if not math.isclose(a.q, b.q, abs_tol=1e-12):
        raise ValueError(f"pair compares different thresholds: {a.q} vs {b.q}")
    for what, lvl, gate in (
        (f"xi CI of {a.condition}", a.ci_level, "P1"),
        (f"xi CI of {b.condition}", b.ci_level, "P1"),
        ("mean difference CI", bulk.mean.level, "G1"),
        ("TVaR difference CI", bulk.tvar.level, "G2"),
    ):
        _check_level(what, lvl, settings, gate)
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
    gof_alpha = s.alpha_of("G4")
    g4 = GateResult(
        "G4",
        bool(math.isfinite(p_min) and p_min > gof_alpha),
        p_min,
        f"min AD p > {gof_alpha:.4g}",
        f"AD p {shown(a.ad_pvalue, a)}, {shown(b.ad_pvalue, b)}",
    )
    g5 = _g5(a, b, s)
    return PairVerdict(
        a.condition, b.condition, a.q, (g1, g2, g3, g4, g5, p1_gate(a, b, s), p2_gate(a, b, s))
    )


def p2_gate(a: ConditionSummary, b: ConditionSummary, s: GateSettings) -> GateResult:
    """P2 of Zhou (2026), Section 3: both fits interior and |ξ̂_A − ξ̂_B| above Δfloor.

    Parameters
    ----------
    a, b : ConditionSummary
        The two conditions at the same threshold.
    s : GateSettings
        The registered rules (Δfloor).

    Returns
    -------
    GateResult
        P2, with |ξ̂_A − ξ̂_B| as its value.

    References
    ----------
    Zhou (2026), Section 3.
    """
    fits_ok = a.fit_status == "ok" and b.fit_status == "ok"
    dxi = abs(a.xi - b.xi)
    return GateResult(
        "P2",
        bool(fits_ok and dxi > s.delta_floor),
        dxi,
        f"|xi_A - xi_B| > {s.delta_floor:g}",
        f"fits {a.fit_status}, {b.fit_status}",
    )
