"""What each workflow stage reads of the registration, so that an amendment re-runs exactly the
stages whose registered inputs it changed (Snakemake re-runs a job when its ``registered``
parameter — :func:`stage_fingerprint` — changes).

The schema declares, beside each field, the stages that read it (its ``x-registered``
annotation, :mod:`tailgate.prereg.fields`); a stage's reads are the canonical document's parts
so annotated: dotted paths, where ``conditions[c]``, ``scorers[s]`` and ``models[key]`` name one
entry and ``{condition}``, ``{scorer}`` and the like are the job's wildcards (the ``entry`` of
the annotation). Beside them, the *derived* values it reads
that depend on parts it does not otherwise read (the fit stores the gate CI level, which depends
on α, the multiplicity rule and the family size, not on the tolerances). Leaving a part out is a
correctness bug (a stale result after an amendment); ``tests/plans/test_stage_dependencies.py``
changes every decision rule in turn and checks that a stage whose fingerprint stayed the same
writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from tailgate.prereg.fields import STAGES, annotations

__all__ = ["STAGES", "stage_fingerprint", "stage_parts", "stage_reads"]


def _gate_level(study: Any) -> Any:
    from tailgate.protocol.registered import registered_settings

    return registered_settings(study).ci_level


def _power_settings(study: Any) -> Any:
    # the planned exceedances without the rest of the Eq. 2 design: Snakemake evaluates this
    # when it builds the plan, and the design's normal quantiles would load scipy there
    from tailgate.protocol.design import exceedances_at, planned_prompts
    from tailgate.protocol.registered import registered_settings

    s = registered_settings(study)
    return {
        "ci_level": s.ci_level,
        "alpha_p1": s.alpha_of("P1"),
        "n_pairs": s.n_pairs,
        "family": s.family,
        "adjusted_gates": list(s.adjusted_gates),
        "multiplicity": s.multiplicity,
        "p1_method": s.p1_method,
        "lr_calibration": s.lr_calibration,
        "n_exc_planned": exceedances_at(planned_prompts(study), study.thresholds.headline),
    }


#: stage -> derived values it reads (functions of the study)
STAGE_DERIVED: dict[str, dict[str, Callable[[Any], Any]]] = {
    "fit": {"gate_ci_level": _gate_level},
    "power": {"settings": _power_settings},
}


def _part(study: Any, path: str) -> Any:
    """The value at ``path`` of the canonical document (None when an optional part is absent)."""
    node: Any = study.data
    for key in re.findall(r"[^.\[]+(?:\[[^\]]*\])?", path):  # dots inside [...] are a name's
        if key.endswith("]") and "[" in key:
            field, name = key[:-1].split("[", 1)
            items = node.get(field) if isinstance(node, dict) else None
            if isinstance(items, dict):  # a keyed mapping, e.g. models[<key>]
                node = items.get(name)
            else:  # a list of named entries, e.g. conditions[<name>]
                named = [i for i in items or [] if isinstance(i, dict) and i.get("name") == name]
                node = named[0] if named else None
        elif isinstance(node, dict):
            node = node.get(key)
        else:
            return None
        if node is None:
            return None
    return node


#: a stage whose jobs read what another stage's read of the registration (the transform's
#: summary transforms the same scores again, to count their clipped ends)
READS_AS: dict[str, str] = {"transform_summary": "transform"}


def stage_parts(stage: str) -> tuple[str, ...]:
    """The registered parts ``stage`` reads, as the schema declares them (wildcards in braces)."""
    stage = READS_AS.get(stage, stage)
    if stage not in STAGES:
        raise KeyError(stage)
    return annotations().reads[stage]


def stage_reads(study: Any, stage: str, **wildcards: str) -> dict[str, Any]:
    """Everything ``stage`` reads of the registration, for the job with ``wildcards``."""
    stage = READS_AS.get(stage, stage)
    parts = {p.format(**wildcards): None for p in stage_parts(stage)}
    out: dict[str, Any] = {p: _part(study, p) for p in parts}
    for p in annotations().newer & out.keys():
        if out[p] is None:
            del out[p]
    for skipped in annotations().skips.get(stage, ()):  # a field of a block it reads
        block, _, key = skipped.format(**wildcards).rpartition(".")
        if isinstance(out.get(block), dict):
            out[block] = {k: v for k, v in out[block].items() if k != key}
    for name, fn in STAGE_DERIVED.get(stage, {}).items():
        # derived values are the protocol's (its gate level, its power design): a study without
        # the protocol runs none of the stages that read them
        out[f"derived:{name}"] = fn(study) if study.has_protocol else None
    return out


def stage_fingerprint(study: Any, stage: str, **wildcards: str) -> str:
    """SHA-256 (16 hex) of :func:`stage_reads`: a job's ``registered`` parameter."""
    text = json.dumps(
        stage_reads(study, stage, **wildcards),
        sort_keys=True,
        ensure_ascii=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]
