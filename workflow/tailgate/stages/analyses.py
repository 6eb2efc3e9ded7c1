"""Analysis stages: one registered analysis (``analyses.<name>``) from the study's artifacts, in
two jobs, so that an amendment of its criteria re-grades without computing again.

``analysis[name]`` looks the kind up in :data:`tailgate.analyses.registry.KINDS`, computes its
statistics from the artifacts the kind names (:meth:`~tailgate.analyses.base.AnalysisKind.inputs`)
and writes ``analyses/<name>/measures.json``: the registered spec without its criteria and the
statistics (optional tables go beside it as ``<table>.parquet``). ``grade[name]`` reads them and
writes ``analyses/<name>/statistics.json``: the registered spec, the statistics and every
criterion's outcome, derived from those statistics by the kind's
:meth:`~tailgate.analyses.base.AnalysisKind.criteria` — the function ``verdict.json``
(:func:`criteria_rows`) and the audit call too. No times or versions enter either file;
identical inputs give identical bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tailgate.analyses.registry import analysis_spec, check_analyses, kind_of
from tailgate.errors import InputError
from tailgate.files.atomic import write_json, write_parquet
from tailgate.plans.fingerprint import stage_reads
from tailgate.prereg.study import Study

from .common import open_stage, read_json

__all__ = [
    "analysis_document",
    "analysis_stage",
    "criteria_rows",
    "grade_stage",
    "graded",
    "h1_row",
    "measures_document",
    "read_analyses",
]


def measures_document(study: Study, name: str, stats: Mapping[str, Any]) -> dict[str, Any]:
    """The ``measures.json`` document of analysis ``name``: its spec as the statistics read it
    (without the criteria: the schema's ``skipped_by``, :func:`tailgate.plans.fingerprint.
    stage_reads`), and the statistics."""
    spec = analysis_spec(study, name)
    return {
        "analysis": name,
        "kind": kind_of(spec).kind,
        "spec": stage_reads(study, "analysis", analysis=name)[f"analyses.{name}"],
        "statistics": dict(stats),
    }


def analysis_document(study: Study, name: str, stats: Mapping[str, Any]) -> dict[str, Any]:
    """The ``statistics.json`` document of analysis ``name`` from its statistics."""
    spec = analysis_spec(study, name)
    kind = kind_of(spec)
    return {
        "analysis": name,
        "kind": kind.kind,
        "spec": spec,
        "statistics": dict(stats),
        "criteria": [o.to_dict() for o in kind.criteria(spec, stats)],
    }


def graded(study: Study, name: str, measures: Mapping[str, Any]) -> dict[str, Any]:
    """The ``statistics.json`` document from a ``measures.json`` document, which must be
    analysis ``name``'s computed under the registered spec (``ValueError`` otherwise)."""
    expected = measures_document(study, name, {})
    if {k: measures.get(k) for k in ("analysis", "kind", "spec")} != {
        k: expected[k] for k in ("analysis", "kind", "spec")
    }:
        raise ValueError(
            f"the statistics of analysis '{name}' were computed under another spec than the "
            "registered one"
        )
    stats = measures.get("statistics")
    if not isinstance(stats, dict):
        raise ValueError(f"the statistics of analysis '{name}' are not a mapping")
    return analysis_document(study, name, stats)


def analysis_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    analysis: str,
    inputs: Mapping[str, Sequence[str | os.PathLike[str]]],
    out: str | os.PathLike[str],
    threads: int = 1,
    *,
    plan: str = "head",
) -> dict[str, Any]:
    """Write and record ``analyses/<analysis>/measures.json`` (and the kind's tables)."""
    ctx = open_stage(prereg, results, plan)
    check_analyses(ctx.study.data, ctx.study.path)
    spec = analysis_spec(ctx.study, analysis)
    paths = {k: [str(p) for p in v] for k, v in inputs.items()}
    result = kind_of(spec).compute(ctx.study, analysis, spec, paths, threads=threads)
    flat = [p for v in paths.values() for p in v]
    for table, data in sorted(result.tables.items()):
        tpath = Path(out).with_name(f"{table}.parquet")
        write_parquet(tpath, data)
        ctx.record(tpath, inputs=flat)
    doc = measures_document(ctx.study, analysis, result.statistics)
    write_json(out, doc)
    ctx.record(out, inputs=flat, extra={"analysis": analysis, "kind": doc["kind"]})
    return doc


def grade_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    analysis: str,
    measures: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    plan: str = "head",
) -> dict[str, Any]:
    """Write and record ``analyses/<analysis>/statistics.json`` from its ``measures.json``."""
    ctx = open_stage(prereg, results, plan)
    try:
        doc = graded(ctx.study, analysis, read_json(measures, "analysis statistics"))
    except ValueError as exc:
        raise InputError(
            f"{measures}: {exc}. Fix: run the workflow again, which computes them afresh"
        ) from None
    write_json(out, doc)
    ctx.record(out, inputs=[str(measures)], extra={"analysis": analysis, "kind": doc["kind"]})
    return doc


def read_analyses(paths: Sequence[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """The ``statistics.json`` documents, sorted by analysis name."""
    docs = [read_json(p, "analysis statistics") for p in paths]
    return sorted(docs, key=lambda d: str(d.get("analysis")))


def h1_row(study: Study, h1: Mapping[str, Any], headline: Mapping[str, Any]) -> dict[str, Any]:
    """Zhou (2026)'s H1 as a row of the study's criteria table, in the verdict's own words: PASS
    iff the verdict is PASS, else KILL (one word for one outcome in the terminal, the report,
    ``verdict.json`` and the tracker)."""
    verdict = str(h1.get("verdict"))
    return {
        "analysis": "protocol",
        "kind": "protocol",
        "name": "H1",
        "statistic": f"H1 verdict ({headline['scorer']}, {headline['scale']} scale, band rule "
        f"{study.rules.band_rule})",
        "comparison": "==",
        "threshold": "PASS",
        "borderline": None,
        "value": verdict,
        "outcome": "PASS" if verdict == "PASS" else "KILL",
        "note": str(h1.get("reason", "")),
    }


def criteria_rows(study: Study, docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every registered analysis criterion's outcome, re-derived from the stored statistics
    with the registered spec (not the copy in the file); analyses in name order."""
    by_name = {d["analysis"]: d for d in docs}
    rows = []
    for name, spec in study.analyses().items():
        kind = kind_of(spec)
        stats = by_name[name]["statistics"] if name in by_name else {}
        for o in kind.criteria(spec, stats):
            rows.append({"analysis": name, "kind": kind.kind, **o.to_dict()})
    return rows
