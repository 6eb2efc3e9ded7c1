"""Verdict stage: ``verdict.json``, the study's outcome (Section 3 and 6.4 of Zhou (2026)).

Collects every ``gates/<scorer>/<scale>.json`` and ``sensitivity/<scorer>/<scale>.json`` into the
:class:`tailgate.protocol.documents.Verdict` document: the study's registered answer
(:mod:`tailgate.prereg.answer`), the H1 verdict of the headline analysis (the first
registered scorer on ``protocol.headline_scale``), the per-pair per-threshold gate table with the
first failing gate, the tolerance sensitivity, the pre-registration's canonical hash and the
amendment chain of its lock, the realised design (rows, exceedances and bootstrap sizes actually
used) and the deviations from the registered plan (:mod:`tailgate.prereg.deviations`: a shortfall
against the registered design, results after an amendment that changed a decision rule once data
existed), and after an amendment the outcome under the registered plan (entry 0 of the lock)
beside the amended one: its answer, the H1 verdict of every scorer and scale and every analysis
criterion (:mod:`tailgate.stages.registered_plan`). No times or versions of this run
enter the file, so identical inputs give identical bytes; they live in its provenance record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from tailgate.files.atomic import canonical_json_bytes, write_bytes
from tailgate.prereg.answer import answer_document
from tailgate.prereg.committed import run_mode
from tailgate.prereg.deviations import (
    amendment_log,
    design_deviations,
    generated_rows,
    realised_design,
    run_deviations,
)
from tailgate.prereg.lock import read_lock
from tailgate.prereg.study import Study

from .analyses import criteria_rows, h1_row, read_analyses
from .common import headline_of, open_stage, read_json

__all__ = ["amendments_of", "headline_of", "verdict_bytes", "verdict_document", "verdict_stage"]


def amendments_of(study: Study) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The lock's amendments (report shape) and the deviations they make."""
    return amendment_log(read_lock(study.lock_path))


def verdict_document(
    study: Study,
    gates: Sequence[Mapping[str, Any]],
    sensitivity: Sequence[Mapping[str, Any]],
    fits: Sequence[Mapping[str, Any]] = (),
    analyses: Sequence[Mapping[str, Any]] = (),
    generated: Mapping[str, int] | None = None,
    mode: str = "confirmatory",
    registered_gates: Sequence[Mapping[str, Any]] = (),
    registered_analyses: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The ``verdict.json`` document (``fits``: every fits document, and ``generated``: rows per
    condition in the generation shards, for the realised design; ``analyses``: every
    ``analyses/<name>/statistics.json``, for the criteria table; ``registered_gates`` and
    ``registered_analyses``: the registered-plan branch's gates and analysis documents, for
    the outcome under the registered plan, :func:`tailgate.stages.registered_plan.
    registered_plan_document`).

    ``answer`` (:mod:`tailgate.prereg.answer`) is the study's registered answer: the criteria
    rows it names and their outcome. A study that registers no protocol has no headline, H1,
    gates or sensitivity (``null`` and empty lists)."""
    from .registered_plan import registered_plan_document

    amendments, deviations = amendments_of(study)
    realised = realised_design(study, fits, generated)
    deviations = run_deviations(mode) + design_deviations(realised) + deviations
    rows = criteria_rows(study, analyses)
    protocol: dict[str, Any] = {"headline": None, "band_rule": None, "h1": None}
    if study.has_protocol:
        head = headline_of(study)
        main = next(
            (g for g in gates if g["scorer"] == head["scorer"] and g["scale"] == head["scale"]),
            None,
        )
        if main is None:
            raise ValueError(f"no gates document for the headline {head['scorer']}/{head['scale']}")
        protocol = {
            "headline": head,
            "band_rule": study.rules.band_rule,
            "h1": dict(main["report"]["h1"]),
        }
        rows = [h1_row(study, main["report"]["h1"], head), *rows]
    return {
        # what the study registered as its answer: first here, in the run summary and the report
        "answer": answer_document(study.data, rows),
        "study": study.name,
        "prereg_hash": study.canonical_hash,
        **protocol,
        "gates": [g["report"] for g in gates],
        "sensitivity": [dict(s) for s in sensitivity],
        "amendments": amendments,
        "deviations": deviations,
        "realised_design": realised,
        # the study's pre-registered criteria table: H1 first (when the protocol is
        # registered), then every analysis criterion re-derived from its stored statistics
        # (tailgate.stages.analyses)
        "criteria": rows,
        # after an amendment: the outcome under the registered plan (entry 0), else null
        "registered_plan": registered_plan_document(
            study, _chain(study), gates, analyses, registered_gates, registered_analyses
        ),
    }


def _chain(study: Study) -> list[dict[str, Any]]:
    lock = read_lock(study.lock_path)
    return list(lock.chain) if lock is not None else []


def verdict_bytes(doc: dict[str, Any]) -> bytes:
    """``verdict.json``'s bytes: the document's own field order (the answer first), every nested
    object with sorted keys, as :func:`tailgate.files.atomic.canonical_json_bytes` writes it."""
    text = ",\n".join(
        f"  {json.dumps(key)}: "
        + canonical_json_bytes(value).decode().rstrip("\n").replace("\n", "\n  ")
        for key, value in doc.items()
    )
    return ("{\n" + text + "\n}\n").encode()


def verdict_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    gates: Sequence[str | os.PathLike[str]],
    sensitivity: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    fits: Sequence[str | os.PathLike[str]] = (),
    analyses: Sequence[str | os.PathLike[str]] = (),
    generations: Sequence[str | os.PathLike[str]] = (),
    registered_gates: Sequence[str | os.PathLike[str]] = (),
    registered_analyses: Sequence[str | os.PathLike[str]] = (),
) -> dict[str, Any]:
    """Write and record ``verdict.json``; ``registered_gates`` and ``registered_analyses``:
    the registered-plan branch's documents (:mod:`tailgate.plans.branch`)."""
    ctx = open_stage(prereg, results)
    doc = verdict_document(
        ctx.study,
        [read_json(g, "gates") for g in gates],
        [read_json(s, "sensitivity") for s in sensitivity],
        [read_json(f, "fits") for f in fits],
        read_analyses(analyses),
        generated_rows(generations) if generations else None,
        run_mode(),
        [read_json(g, "registered-plan gates") for g in registered_gates],
        read_analyses(registered_analyses),
    )
    write_bytes(out, verdict_bytes(doc))
    branch = [*registered_gates, *registered_analyses]
    ctx.record(
        out,
        inputs=[*gates, *sensitivity, *fits, *analyses, *generations, *branch, ctx.study.lock_path],
        kind="report",
    )
    return doc
