"""Sensitivity stage: the H1 verdict under scaled tolerances (App. B and Table 5 of Zhou (2026)).

``sensitivity[scorer, scale]`` re-evaluates the stored gate inputs of the gates document
with (δμ, δTVaR) multiplied by each registered ``protocol.sensitivity.tolerance_multipliers``
(Zhou (2026): ×0.5 tight, ×1 registered, ×2 loose) and writes
``sensitivity/<scorer>/<scale>.json`` (:class:`tailgate.protocol.documents.SensitivityFile`):
one row per multiplier and band threshold with the admissible (G1–G4) and passing pairs, plus the H1
verdict per multiplier. The bulk CIs do not change with the tolerances, only the bands do.
It also holds the multiverse of the gates document (``multiverse``; every threshold rule,
multiplier, G5 rule and P1 method, :mod:`tailgate.protocol.multiverse`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from tailgate.files.atomic import write_json
from tailgate.prereg.study import Study
from tailgate.protocol.gates import ConditionSummary
from tailgate.protocol.multiverse import multiverse
from tailgate.protocol.registered import family_pairs, registered_settings
from tailgate.stats.equivalence import BulkEquivalence

from .common import open_stage, read_json
from .gates import evaluate

__all__ = ["multiverse_document", "sensitivity_document", "sensitivity_stage", "stored_inputs"]


def stored_inputs(
    gates: Mapping[str, Any],
) -> tuple[dict[float, dict[str, ConditionSummary]], dict[tuple[str, str], BulkEquivalence]]:
    """The gate inputs recorded in a gates document: summaries per threshold and bulk CIs."""
    summaries = {
        float(q): {c: ConditionSummary.from_dict(s) for c, s in by_c.items()}
        for q, by_c in gates["summaries"].items()
    }
    bulk = {(e["a"], e["b"]): BulkEquivalence.from_dict(e) for e in gates["bulk"]}
    return summaries, bulk


def _label(m: float) -> str:
    if math.isclose(m, 1.0):
        return "pre-registered"
    return "tight" if m < 1 else "loose"


def sensitivity_document(study: Study, gates: Mapping[str, Any]) -> dict[str, Any]:
    """The ``sensitivity/<scorer>/<scale>.json`` document."""
    summaries, bulk = stored_inputs(gates)
    rows = []
    verdicts = []
    for m in study.sensitivity.tolerance_multipliers:
        settings = registered_settings(study, m, scorer=gates["scorer"], scale=gates["scale"])
        v = evaluate(study, summaries, bulk, settings)
        verdicts.append(
            {
                "multiplier": float(m),
                "delta_mu": settings.delta_mu,
                "delta_tvar": settings.delta_tvar,
                "h1": v.h1,
                "passing_pairs": [f"{a} vs {b}" for a, b in v.passing_pairs],
            }
        )
        for q in v.thresholds:
            at = [p for p in v.pairs if math.isclose(p.q, q, abs_tol=1e-12)]
            rows.append(
                {
                    "label": _label(float(m)),
                    "multiplier": float(m),
                    "delta_mu": settings.delta_mu,
                    "delta_tvar": settings.delta_tvar,
                    "q": float(q),
                    "n_pairs": len(at),
                    "admissible_pairs": [f"{p.a} vs {p.b}" for p in at if p.admissible],
                    "passing_pairs": [f"{p.a} vs {p.b}" for p in at if p.passed],
                }
            )
    return {
        "scorer": gates["scorer"],
        "scale": gates["scale"],
        "rows": rows,
        "h1": verdicts,
        "multiverse": multiverse_document(study, gates),
    }


def multiverse_document(study: Study, gates: Mapping[str, Any]) -> dict[str, Any]:
    """The multiverse of one gates document (:mod:`tailgate.protocol.multiverse`)."""
    summaries, bulk = stored_inputs(gates)
    return {
        "scorer": gates["scorer"],
        "scale": gates["scale"],
        **multiverse(
            summaries,
            bulk,
            registered_settings(study, scorer=gates["scorer"], scale=gates["scale"]),
            pairs=study.pairs(),
            family=family_pairs(study),
            band=list(study.thresholds.band),
            headline_q=study.thresholds.headline,
            band_rule=study.rules.band_rule,
            multipliers=list(study.sensitivity.tolerance_multipliers),
        ),
    }


def sensitivity_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    gates: str | os.PathLike[str],
    out: str | os.PathLike[str],
) -> dict[str, Any]:
    """Write and record ``sensitivity/<scorer>/<scale>.json`` from the gates document."""
    ctx = open_stage(prereg, results)
    doc = sensitivity_document(ctx.study, read_json(gates, "gates"))
    write_json(out, doc)
    ctx.record(out, inputs=[gates])
    return doc
