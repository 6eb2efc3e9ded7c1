"""Audit check ``analyses``: re-derive every analysis criterion from its stored statistics.

Listed in :data:`tailgate.audit.verdicts.VERDICT_CHECKS`. For every registered analysis it
reads ``analyses/<name>/statistics.json``, checks that
the statistics were computed under the registered spec, re-derives each criterion's outcome with
the kind's :meth:`~tailgate.analyses.base.AnalysisKind.criteria` and compares it with the outcome
recorded there and in ``verdict.json``'s criteria table (whose H1 row must match its H1 verdict,
and which must have none when the study registers no protocol), and re-derives the study's
answer (:mod:`tailgate.prereg.answer`) from that table.
"""

from __future__ import annotations

from pathlib import Path

from tailgate.analyses.registry import kind_of
from tailgate.plans.layout import Layout
from tailgate.prereg.answer import answer_document
from tailgate.prereg.study import Study

from .findings import read_or_fail

__all__ = ["analyses_check", "compare_criteria"]


def compare_criteria(
    where: str, recorded: list[dict], derived: list[dict], fails: list[str]
) -> None:
    rec = {r.get("name"): r for r in recorded}
    for d in derived:
        r = rec.pop(d["name"], None)
        if r is None:
            fails.append(f"{where}: criterion '{d['name']}' is missing")
        elif r.get("outcome") != d["outcome"] or r.get("value") != d["value"]:
            fails.append(
                f"{where}: criterion '{d['name']}' recorded {r.get('outcome')} "
                f"(value {r.get('value')}), re-derived {d['outcome']} (value {d['value']})"
            )
    for name in rec:
        fails.append(f"{where}: criterion '{name}' is not registered")


def analyses_check(results_dir: Path, study: Study) -> list[str]:
    """Failures (file-naming strings) where a recorded criterion outcome disagrees with the
    one re-derived from stored statistics."""
    rd = Path(results_dir)
    fails: list[str] = []
    derived_all: dict[str, list[dict]] = {}
    for name, spec in study.analyses().items():
        path = Layout(rd).analysis(name)
        if not path.is_file():
            if Layout(rd).file("verdict").is_file():
                fails.append(f"{path}: missing (analysis '{name}' is registered)")
            continue
        doc = read_or_fail(path, fails)
        if doc is None:
            continue
        if doc.get("spec") != spec or doc.get("kind") != spec["kind"]:
            fails.append(f"{path}: computed under a spec that is not the registered one")
        derived = [o.to_dict() for o in kind_of(spec).criteria(spec, doc.get("statistics", {}))]
        derived_all[name] = derived
        compare_criteria(str(path), doc.get("criteria", []), derived, fails)
    verdict_path = Layout(rd).file("verdict")
    if not verdict_path.is_file():
        return fails
    verdict = read_or_fail(verdict_path, fails)
    if verdict is None:
        return fails
    rows = verdict.get("criteria")
    if rows is None:
        if study.analyses():
            fails.append(f"{verdict_path}: has no criteria table")
        return fails
    h1 = [r for r in rows if r.get("analysis") == "protocol"]
    if study.has_protocol:
        expect = "PASS" if (verdict.get("h1") or {}).get("verdict") == "PASS" else "KILL"
        if len(h1) != 1 or h1[0].get("outcome") != expect:
            fails.append(
                f"{verdict_path}: the criteria table's H1 row does not match its H1 verdict"
            )
    elif h1:
        fails.append(f"{verdict_path}: an H1 row, but the study registers no protocol")
    if verdict.get("answer") != answer_document(study.data, rows):
        fails.append(
            f"{verdict_path}: its answer is not the registered answer re-derived from its "
            "criteria table"
        )
    for name, derived in derived_all.items():
        recorded = [r for r in rows if r.get("analysis") == name]
        compare_criteria(f"{verdict_path} (analysis '{name}')", recorded, derived, fails)
    extra = {r.get("analysis") for r in rows} - {"protocol", *study.analyses()}
    for name in sorted(map(str, extra)):
        fails.append(f"{verdict_path}: criteria of unregistered analysis '{name}'")
    return fails
