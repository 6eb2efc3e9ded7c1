"""The decision rules a pre-registration registers, read once for every stage (Section 3 of Zhou
(2026)).

:func:`registered_settings` turns the ``protocol`` block into :class:`GateSettings`;
:func:`family_pairs` names the pairs of the multiplicity family. Absent optional fields mean the
documented defaults (the schema gives them none, so they never enter the canonical hash):

``protocol.family``
    ``registered`` (absent): every registered pair is in the family, m = their number;
    ``confirmatory``: pairs with a ``pilot`` condition are left out of the family, are evaluated
    and reported as exploratory, and cannot make H1 pass.
``protocol.adjusted_gates``
    gates held at α/m under Bonferroni; absent: G1, G2 and P1 (Zhou (2026): "Bonferroni-corrected
    α = 0.05/6" on the CIs). G4 may be added; G3, G5 and P2 are not tests.
``protocol.p1_method``
    ``percentile`` (absent; Zhou (2026)'s CI non-overlap), ``profile`` or ``lr_test``.
``protocol.lr_calibration``
    ``bartlett`` (absent; the LR statistic over its null mean), ``chi2`` (uncorrected) or
    ``bootstrap`` (a parametric-bootstrap p-value below ``protocol.lr_bootstrap_below``
    exceedances, absent: 200; Bartlett above).
``protocol.tolerances.proposed``
    ``data`` where init proposed the G1/G2 tolerances from the data (the report says so);
    absent: chosen by the registrant.
``protocol.stability.edge``, ``tolerance_rule``, ``se_multiplier``
    G5's rule for a side beyond the data range (absent: ``one_sided``), its tolerance
    (absent: ``fixed``, the registered 0.05) and the multiple of the s.e. under ``se``
    (absent: 2).
``protocol.thresholds.min_levels``
    under ``ties: lattice``, the fewest distinct exceedance values the headline threshold may
    leave (absent: 30, :data:`MIN_LEVELS`; the schema's floor 4 is the fewest at which the
    discretised G4 can reject, methods note P10): ``design`` and ``freeze`` refuse imported scores
    that leave fewer, and the operating characteristics simulate that coarsest lattice.
``protocol.thresholds.ceiling``
    under ``ties: lattice``, the capped end of the bad tail in the scores' own units (absent:
    none): :func:`ceiling` turns it round with the scores, and the fits take its cell as
    right-censored (:class:`tailgate.stats.lattice.Cells`).
"""

from __future__ import annotations

from typing import Any

from tailgate.protocol.gates import GateSettings
from tailgate.stats.inference import LR_BOOTSTRAP_BELOW

__all__ = [
    "MIN_LEVELS",
    "ceiling",
    "family_pairs",
    "min_levels",
    "registered_settings",
    "tolerances_for",
]

#: G5's multiple of the s.e. under ``tolerance_rule: se`` when none is registered
SE_MULTIPLIER = 2.0
#: fewest distinct exceedance values at the headline threshold under ``ties: lattice`` when
#: ``protocol.thresholds.min_levels`` is absent (methods note P10)
MIN_LEVELS = 30


def min_levels(study: Any) -> int:
    """The registered ``protocol.thresholds.min_levels`` (absent: :data:`MIN_LEVELS`)."""
    return int(study.protocol["thresholds"].get("min_levels", MIN_LEVELS))


def ceiling(study: Any, scale: str = "identity", worse: str | None = "higher") -> float | None:
    """The registered ``protocol.thresholds.ceiling`` (absent: None) on the severities' own
    scale of a scorer whose bad tail is ``worse``, analysed on ``scale``: turned round as the
    scores are (:func:`tailgate.transform.transform_scores`: −c on the identity scale, 1 − c on
    the probability scale, whose grades the logit scale's cells are)."""
    c = study.protocol["thresholds"].get("ceiling")
    if c is None:
        return None
    if worse != "lower":
        return float(c)
    return -float(c) if scale == "identity" else 1.0 - float(c)


def family_pairs(study: Any) -> list[tuple[str, str]]:
    """The registered pairs that form the multiplicity family (and may make H1 pass)."""
    pairs = study.pairs()
    if study.protocol.get("family", "registered") != "confirmatory":
        return pairs
    pilots = {c["name"] for c in study.data["conditions"] if c.get("pilot", False)}
    return [(a, b) for a, b in pairs if a not in pilots and b not in pilots]


def tolerances_for(
    study: Any, scorer: str | None = None, scale: str | None = None
) -> dict[str, float]:
    """The registered G1/G2 tolerances ``{"mean", "tvar"}`` of one scorer and scale, in that
    scale's units: ``protocol.tolerances.mean``/``tvar``, replaced by the entry of
    ``protocol.tolerances.scales`` for the scale (e.g. ``logit``) and then by the one for the
    scorer's scale (e.g. ``severity/identity``), field by field."""
    tol = study.protocol["tolerances"]
    out = {"mean": float(tol["mean"]), "tvar": float(tol["tvar"])}
    by_scale = tol.get("scales") or {}
    for key in (scale, f"{scorer}/{scale}"):
        for name, value in (by_scale.get(key) or {}).items():
            out[name] = float(value)
    return out


def registered_settings(
    study: Any, multiplier: float = 1.0, *, scorer: str | None = None, scale: str | None = None
) -> GateSettings:
    """The registered decision rules of one scorer and scale (the tolerances of
    :func:`tolerances_for`), bulk tolerances scaled by ``multiplier`` (App. B of Zhou (2026))."""
    p = study.protocol
    st = p["stability"]
    tol = tolerances_for(study, scorer, scale)
    return GateSettings(
        delta_mu=tol["mean"] * multiplier,
        delta_tvar=tol["tvar"] * multiplier,
        n_star=int(p["min_exceedances"]),
        gof_alpha=float(p["gof"]["alpha"]),
        stability_delta=float(st["delta"]),
        stability_tolerance=float(st["tolerance"]),
        delta_floor=float(p["delta_floor"]),
        alpha=float(p["alpha"]),
        multiplicity=str(p["multiplicity"]),
        n_pairs=max(1, len(family_pairs(study))),
        tvar_level=float(p["tvar_level"]),
        family=str(p.get("family", "registered")),
        adjusted_gates=tuple(p.get("adjusted_gates", ("G1", "G2", "P1"))),
        stability_edge=str(st.get("edge", "one_sided")),
        stability_rule=str(st.get("tolerance_rule", "fixed")),
        stability_se_multiplier=float(st.get("se_multiplier", SE_MULTIPLIER)),
        p1_method=str(p.get("p1_method", "percentile")),
        lr_calibration=str(p.get("lr_calibration", "bartlett")),
        lr_bootstrap_below=int(p.get("lr_bootstrap_below", LR_BOOTSTRAP_BELOW)),
        tolerances_source=str(p["tolerances"].get("proposed", "registered")),
    )
