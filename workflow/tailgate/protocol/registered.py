"""The decision rules a pre-registration registers, read once for every stage (Section 3 of Zhou
(2026)) from the protocol's typed readers (:mod:`tailgate.prereg.protocol_blocks`, where each
absent optional field's default is written)."""

from __future__ import annotations

from typing import Any

from tailgate.protocol.gates import GateSettings, registered_rules

__all__ = ["ceiling", "family_pairs", "registered_settings", "tolerances_for"]


def ceiling(study: Any, scale: str = "identity", worse: str | None = "higher") -> float | None:
    """The registered ``protocol.thresholds.ceiling`` (absent: None) on the severities' own
    scale.

    It is turned round as the scores are (:func:`tailgate.data.transform.transform_scores`);
    the fits take its cell as right-censored (:class:`tailgate.stats.lattice.Cells`).

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).
    scale : str, default "identity"
        The scale the scorer is analysed on.
    worse : str or None, default "higher"
        The scorer's bad tail; only ``"lower"`` turns the ceiling round.

    Returns
    -------
    float or None
        The ceiling c, or for ``worse="lower"`` −c on the identity scale and 1 − c on the
        probability scale (whose grades the logit scale's cells are); None when absent.
    """
    c = study.thresholds.ceiling
    if c is None or worse != "lower":
        return c
    return -c if scale == "identity" else 1.0 - c


def family_pairs(study: Any) -> list[tuple[str, str]]:
    """The registered pairs that form the multiplicity family (and may make H1 pass).

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).

    Returns
    -------
    list of tuple of (str, str)
        Every registered pair, or under ``protocol.family: confirmatory`` those without a
        pilot condition.
    """
    pairs = study.pairs()
    if study.rules.family != "confirmatory":
        return pairs
    pilots = {c["name"] for c in study.conditions() if c.get("pilot", False)}
    return [(a, b) for a, b in pairs if a not in pilots and b not in pilots]


def tolerances_for(
    study: Any, scorer: str | None = None, scale: str | None = None
) -> dict[str, float]:
    """The registered G1/G2 tolerances ``{"mean", "tvar"}`` of one scorer and scale, in that
    scale's units.

    ``protocol.tolerances.mean``/``tvar``, replaced by the entry of
    ``protocol.tolerances.scales`` for the scale (e.g. ``logit``) and then by the one for the
    scorer's scale (e.g. ``severity/identity``), field by field.

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).
    scorer : str or None, default None
        The scorer.
    scale : str or None, default None
        The scale.

    Returns
    -------
    dict[str, float]
        The tolerances by field (``mean``, ``tvar``).
    """
    tol = study.tolerances
    out = {"mean": tol.mean, "tvar": tol.tvar}
    by_scale = tol.scales or {}
    for key in (scale, f"{scorer}/{scale}"):
        for name, value in (by_scale.get(key) or {}).items():
            out[name] = float(value)
    return out


def registered_settings(
    study: Any, multiplier: float = 1.0, *, scorer: str | None = None, scale: str | None = None
) -> GateSettings:
    """The registered decision rules of one scorer and scale (the tolerances of
    :func:`tolerances_for`).

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).
    multiplier : float, default 1.0
        Factor on the bulk (G1/G2) tolerances (App. B of Zhou (2026)).
    scorer : str or None, default None
        The scorer.
    scale : str or None, default None
        The scale.

    Returns
    -------
    GateSettings
        The rules, for the multiplicity family of :func:`family_pairs`.

    References
    ----------
    Zhou (2026), Appendix B.
    """
    return GateSettings(
        **registered_rules(
            study.protocol,
            n_pairs=len(family_pairs(study)),
            tolerances=tolerances_for(study, scorer, scale),
            multiplier=multiplier,
        )
    )
