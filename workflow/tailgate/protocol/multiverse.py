"""The multiverse view: the H1 verdict under every registered alternative (App. B of Zhou (2026)).

Would another reasonable analyst have published? :func:`multiverse` re-evaluates, from the
stored statistics of one gates document only (no refitting), the verdict under every
combination of

* the threshold rule: the band rules ``any`` and ``all``, and each band threshold as the only
  headline (Section 6.3 of Zhou (2026): the single-threshold analyses an analyst could have run);
* the tolerance multipliers of ``protocol.sensitivity`` (App. B, Table 5);
* the G5 rule: the fixed tolerance, 2 s.e. of the side difference, and the fixed tolerance with
  sides beyond the data range failing;
* the P1 method: percentile, profile-likelihood, likelihood-ratio test.

The scale is the remaining dimension: one document per scale, combined by the caller
(``tailgate multiverse``, the report). Multiplicity and CI levels are not varied: the stored
CIs exist only at the registered levels. The registered cell is marked.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from tailgate.protocol.gates import P1_METHODS, ConditionSummary, GateSettings, PairVerdict
from tailgate.protocol.verdict import h1_verdict, pairwise_matrix
from tailgate.stats.equivalence import BulkEquivalence

__all__ = ["G5_VARIANTS", "grid", "multiverse", "threshold_rules"]

#: G5 alternatives: (label, settings changes)
G5_VARIANTS: dict[str, dict[str, Any]] = {
    "fixed": {"stability_rule": "fixed", "stability_edge": "one_sided"},
    "se x2": {
        "stability_rule": "se",
        "stability_se_multiplier": 2.0,
        "stability_edge": "one_sided",
    },
    "fixed, edge fails": {"stability_rule": "fixed", "stability_edge": "fail"},
}


def threshold_rules(band: Sequence[float]) -> list[tuple[str, str, float | None]]:
    """(label, band rule, headline q) for ``any``, ``all`` and every threshold as headline.

    Parameters
    ----------
    band : Sequence[float]
        The thresholds of the band.

    Returns
    -------
    list of tuple of (str, str, float or None)
        ``("any", "any", None)``, ``("all", "all", None)``, then ``("headline q=…", "headline",
        q)`` for each q of ``band``.

    References
    ----------
    Zhou (2026), Section 6.3.
    """
    return [("any", "any", None), ("all", "all", None)] + [
        (f"headline q={q:g}", "headline", float(q)) for q in band
    ]


def _g5_label(s: GateSettings) -> str:
    for label, change in G5_VARIANTS.items():
        if all(getattr(s, k) == v for k, v in change.items() if k != "stability_se_multiplier"):
            if s.stability_rule != "se" or s.stability_se_multiplier == 2.0:
                return label
    return f"registered ({s.stability_rule}, {s.stability_edge})"


def multiverse(
    summaries: Mapping[float, Mapping[str, ConditionSummary]],
    bulk: Mapping[tuple[str, str], BulkEquivalence],
    settings: GateSettings,
    *,
    pairs: Sequence[tuple[str, str]],
    family: Sequence[tuple[str, str]],
    band: Sequence[float],
    headline_q: float,
    band_rule: str,
    multipliers: Sequence[float],
) -> dict[str, Any]:
    """Every cell of the multiverse (module docstring) as a JSON-ready document.

    Each pairwise matrix (every pair at every band threshold) is evaluated once per tolerance
    multiplier, G5 rule and P1 method, and read by every threshold rule.

    Parameters
    ----------
    summaries : Mapping[float, Mapping[str, ConditionSummary]]
        The stored statistics per threshold q and condition.
    bulk : Mapping[tuple[str, str], BulkEquivalence]
        The stored bulk-difference CIs per pair (A, B).
    settings : GateSettings
        The registered rules; its G5 rule joins :data:`G5_VARIANTS` if none of them.
    pairs : Sequence[tuple[str, str]]
        The registered pairs, in registration order.
    family : Sequence[tuple[str, str]]
        The pairs that may make H1 pass.
    band : Sequence[float]
        The thresholds of the band.
    headline_q : float
        The registered headline threshold.
    band_rule : str
        The registered band rule.
    multipliers : Sequence[float]
        The tolerance multipliers of ``protocol.sensitivity`` (1 is always added).

    Returns
    -------
    dict[str, Any]
        ``dimensions`` (the values of each dimension), ``cells`` (one per combination: its
        values, ``h1``, ``passing_pairs``, ``registered``), ``pass_share`` (the share of cells
        that PASS) and ``registered`` (the registered cell).

    References
    ----------
    Zhou (2026), Appendix B, Table 5; Section 6.3.
    """
    band = [float(q) for q in band]
    g5 = dict(G5_VARIANTS)
    registered_g5 = _g5_label(settings)
    if registered_g5 not in g5:
        g5[registered_g5] = {}
    rules = threshold_rules(band)
    mults = sorted({float(m) for m in multipliers} | {1.0})
    # the threshold rule decides only how the pairs' results combine into H1: each pairwise
    # matrix (every pair at every band threshold) is evaluated once and read by every rule
    matrices: dict[tuple[float, str, str], tuple[GateSettings, tuple[PairVerdict, ...]]] = {}
    cells = []
    for (label, rule, q_head), m, g5_label, p1 in itertools.product(rules, mults, g5, P1_METHODS):
        key = (m, g5_label, p1)
        if key not in matrices:
            s = dataclasses.replace(
                settings,
                delta_mu=settings.delta_mu * m,
                delta_tvar=settings.delta_tvar * m,
                p1_method=p1,
                **g5[g5_label],
            )
            matrices[key] = s, pairwise_matrix(summaries, bulk, s, pairs)
        s, matrix = matrices[key]
        v = h1_verdict(
            matrix,
            headline_q=headline_q if q_head is None else q_head,
            band=band,
            settings=s,
            band_rule=rule,
            family=family,
        )
        registered = (
            rule == band_rule
            and (q_head is None or math.isclose(q_head, headline_q))
            and math.isclose(m, 1.0)
            and g5_label == registered_g5
            and p1 == settings.p1_method
        )
        cells.append(
            {
                "threshold_rule": label,
                "multiplier": m,
                "g5": g5_label,
                "p1": p1,
                "h1": v.h1,
                "passing_pairs": [f"{a} vs {b}" for a, b in v.passing_pairs],
                "registered": registered,
            }
        )
    n_pass = sum(c["h1"] == "PASS" for c in cells)
    return {
        "dimensions": {
            "threshold_rule": [r[0] for r in rules],
            "multiplier": mults,
            "g5": list(g5),
            "p1": list(P1_METHODS),
        },
        "cells": cells,
        "pass_share": round(n_pass / len(cells), 6),
        "registered": next(c for c in cells if c["registered"]),
    }


def grid(doc: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The multiverse as a table: one row per (threshold rule, G5 rule), one column per
    (P1 method, multiplier); cells ``PASS``/``KILL``, the registered cell in brackets.

    Parameters
    ----------
    doc : Mapping[str, Any]
        A document of :func:`multiverse`.

    Returns
    -------
    header : list of str
        ``threshold rule``, ``G5``, then one ``<p1> ×<multiplier>`` per column.
    rows : list of list of str
        The rows, in the order of the document's dimensions.
    """
    dims = doc["dimensions"]
    at = {(c["threshold_rule"], c["g5"], c["p1"], c["multiplier"]): c for c in doc["cells"]}
    cols = [(p1, m) for p1 in dims["p1"] for m in dims["multiplier"]]
    header = ["threshold rule", "G5"] + [f"{p1} ×{m:g}" for p1, m in cols]
    rows = []
    for rule in dims["threshold_rule"]:
        for g5 in dims["g5"]:
            row = [rule, g5]
            for p1, m in cols:
                c = at[(rule, g5, p1, m)]
                row.append(f"[{c['h1']}]" if c["registered"] else c["h1"])
            rows.append(row)
    return header, rows
