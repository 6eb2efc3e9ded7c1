"""What a plan's stages read of the registration, for telling whether an amendment changed the
inputs of the stored statistics (DESIGN: "Amendments"): the parts read by the stages upstream of
the gates (:func:`statistics_changes`) and by an analysis (:func:`analysis_reads`), and the
scales a scorer is analysed on (:func:`scales_for`). The
registered-plan branch (:mod:`tailgate.plans.branch`) re-computes what they name under entry 0
of the lock; :mod:`tailgate.stages.registered_plan` re-derives the rest from the stored
statistics.
"""

from __future__ import annotations

from typing import Any

from tailgate.prereg.answer import protocol_settings
from tailgate.prereg.study import Study

from .fingerprint import stage_reads

__all__ = ["STAGE_GRAPH", "UPSTREAM_STAGES", "analysis_reads", "scales_for", "statistics_changes"]

#: the workflow's DAG up to the gates and analyses: stage -> (the stages whose files its jobs
#: read, the wildcard its fingerprint is keyed by); an analysis reads what its kind declares
STAGE_GRAPH: dict[str, tuple[tuple[str, ...], str | None]] = {
    "select_prompts": ((), None),
    "generate": (("select_prompts",), "condition"),
    "score": (("generate",), "scorer"),
    "embed": (("generate",), "embedder"),
    "transform": (("score",), "scorer"),
    "transform_summary": (("score",), "scorer"),
    "fit": (("transform", "transform_summary"), "condition"),
    "bulk": (("transform",), None),
    "gates": (("fit", "bulk"), None),
    "analysis": ((), "analysis"),
    "grade": (("analysis",), "analysis"),
}


def upstream_of(stage: str) -> list[str]:
    """The stages whose files the jobs of ``stage`` read, directly or through others."""
    out: list[str] = []
    for up in STAGE_GRAPH[stage][0]:
        out += [s for s in [*upstream_of(up), up] if s not in out]
    return out


#: the stages whose outputs the gates read, with the wildcard each job is keyed by
UPSTREAM_STAGES = tuple((s, STAGE_GRAPH[s][1]) for s in upstream_of("gates"))

#: parts an upstream stage reads that the re-derivation of the registered plan handles itself
#: (:mod:`tailgate.stages.registered_plan`; the scan's display intervals enter no gate)
_HANDLED = (
    "protocol.thresholds.band",
    "protocol.stability.resamples",
    "protocol.stability.intervals",
)


def _handled(part: str) -> bool:
    return part in _HANDLED or (part.startswith("conditions[") and part.endswith("].pilot"))


def scales_for(study: Study, scorer: str) -> list[str]:
    """The scales a scorer is analysed on: every registered scale for a bounded (probability)
    scorer; ``identity`` for an unbounded one (probability and logit need scores in [0, 1])."""
    if study.scorer(scorer).get("bounded", True):
        return study.scales
    return ["identity"]


def statistics_changes(registered: Study, amended: Study) -> list[str]:
    """The registration parts, read by a stage upstream of the gates, that differ between the
    registered and the amended study (sorted; empty when the stored statistics serve both)."""
    names = {
        "condition": sorted(
            {c["name"] for c in registered.conditions()} | {c["name"] for c in amended.conditions()}
        ),
        "scorer": sorted(
            {s["name"] for s in registered.scorers()} | {s["name"] for s in amended.scorers()}
        ),
    }
    changed: set[str] = set()
    for stage, wildcard in UPSTREAM_STAGES:
        jobs = [{}] if wildcard is None else [{wildcard: n} for n in names[wildcard]]
        for wc in jobs:
            old, new = stage_reads(registered, stage, **wc), stage_reads(amended, stage, **wc)
            changed.update(
                k for k in old.keys() | new.keys() if old.get(k) != new.get(k) and not _handled(k)
            )
    return sorted(changed)


def analysis_reads(study: Study, name: str) -> dict[str, Any]:
    """What the analysis stage of ``name`` reads of the registration, with the protocol's
    study-wide defaults as the analysis sees them (:func:`tailgate.prereg.answer.
    protocol_settings`) and its own spec without its criteria (which the statistics skip)."""
    from tailgate.analyses.registry import kind_of

    reads = stage_reads(study, "analysis", analysis=name)
    spec = study.analyses().get(name) or {}
    falls_back = kind_of(spec).protocol_defaults if spec else ()
    protocol = protocol_settings(study.data)
    out: dict[str, Any] = {}
    for part, value in reads.items():
        if part.startswith("protocol."):
            field = part.split(".", 1)[1]
            if field in falls_back:  # read only where the kind falls back on the protocol
                out[part] = protocol.get(field)
        else:
            out[part] = value
    return out
