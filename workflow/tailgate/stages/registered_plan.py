"""The outcome under the registered plan (entry 0 of the lock), beside the amended outcome.

Zhou (2026) itself moved to another scale and threshold after seeing data; tailgate makes such
moves visible (DESIGN: "Amendments"). After an amendment ``verdict.json``, the report and the
run's answer show, for the H1 verdict of every scorer and scale and for every analysis
criterion, the outcome the frozen registration gives on the same data. It is obtained one of two
ways, whichever is valid:

* **Re-derived from the stored statistics** where the amendment changed decision rules only:
  the stored gate inputs of each gates document (per-condition summaries and bulk CIs,
  :func:`tailgate.stages.sensitivity.stored_inputs`) are evaluated by
  :func:`tailgate.stages.gates.evaluate` under the settings of the entry-0 registration
  (:func:`tailgate.protocol.registered.registered_settings`) — the mechanism the gates stage,
  the sensitivity multiverse and the audit use — and each entry-0 criterion is evaluated by its
  analysis kind on the stored statistics (a kind's statistics never read its criteria). A
  changed threshold band is allowed when every entry-0 threshold was fitted (each threshold's
  fit does not depend on the others); a changed pilot flag matters only through the family
  size, hence the CI level, which the fits record and the gates check.
* **Computed by the registered-plan branch** of the workflow where the amendment changed what
  the statistics are (seed, bootstrap, stability window, CI level, a threshold never fitted,
  an analysis's own fields, the data…): :mod:`tailgate.plans.branch` runs entry 0's fits,
  bulk bootstraps, gates and analyses under ``results/<study>/registered/``, sharing every job
  whose registered inputs are unchanged, and the outcome is read from the branch's gates and
  analysis documents.

The one thing that cannot be computed is a registered plan whose pinned input file (an import
file, a checkpoint) was replaced on disk by the amended plan's; the rows then say which file to
restore.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from tailgate.analyses.registry import kind_of
from tailgate.plans.branch import registered_branch
from tailgate.prereg.answer import answer_document
from tailgate.prereg.study import Study
from tailgate.protocol.gates_file import gates_file_from_protocol
from tailgate.protocol.registered import registered_settings

from .analyses import criteria_rows, h1_row
from .common import headline_of
from .gates import evaluate
from .sensitivity import stored_inputs

__all__ = [
    "registered_plan_criteria",
    "registered_plan_document",
    "registered_plan_verdicts",
]

# --- H1 ---------------------------------------------------------------------------------------


def _row(
    scorer: str, scale: str, headline: bool, h1: Any, passing: list[str], reason: str, gates: Any
) -> dict[str, Any]:
    return {
        "scorer": scorer,
        "scale": scale,
        "headline": headline,
        "h1": h1,
        "passing_pairs": passing,
        "reason": reason,
        "gates": gates,
    }


def _is_headline(registered: Study, scorer: str, scale: str) -> bool:
    head = headline_of(registered) if registered.has_protocol and registered.scorers() else {}
    return (head.get("scorer"), head.get("scale")) == (scorer, scale)


def _rederived(registered: Study, gates: Mapping[str, Any]) -> dict[str, Any]:
    """The entry-0 verdict of one stored gates document, re-derived from its gate inputs."""
    scorer, scale = str(gates["scorer"]), str(gates["scale"])
    headline = _is_headline(registered, scorer, scale)
    summaries, bulk = stored_inputs(gates)
    thresholds = registered.thresholds.band
    kept = {k: v for k, v in summaries.items() if any(math.isclose(k, q) for q in thresholds)}
    settings = registered_settings(registered, scorer=scorer, scale=scale)
    verdict = evaluate(registered, kept, bulk, settings)
    passing = [f"{a} vs {b}" for a, b in verdict.passing_pairs]
    reason = f"band rule '{verdict.band_rule}': " + (
        f"{', '.join(passing)} pass every gate" if passing else "no registered pair passes"
    )
    view = gates_file_from_protocol(verdict.to_dict(), scorer=scorer, scale=scale, reason=reason)
    return _row(
        scorer,
        scale,
        headline,
        verdict.h1,
        passing,
        f"re-derived from the stored statistics under entry 0 ({reason})",
        view,
    )


def _computed(registered: Study, doc: Mapping[str, Any], changed: Sequence[str]) -> dict[str, Any]:
    """The entry-0 verdict of a gates document of the registered-plan branch."""
    scorer, scale = str(doc["scorer"]), str(doc["scale"])
    h1 = doc["report"]["h1"]
    return _row(
        scorer,
        scale,
        _is_headline(registered, scorer, scale),
        h1["verdict"],
        list(h1["passing_pairs"]),
        _computed_reason(changed, f"gates/{scorer}/{scale}.json") + ": " + str(h1["reason"]),
        doc["report"],
    )


def _computed_reason(changed: Sequence[str], document: str) -> str:
    """Why an outcome was read from the registered-plan branch's ``registered/<document>``."""
    return (
        "computed under entry 0 from its own statistics (the amendment changed "
        + ", ".join(changed)
        + f"; registered/{document})"
    )


def _not_computed_reason(branch: Any, changed: Sequence[str], document: str) -> str:
    """Why an outcome under entry 0 is missing: the branch could not compute it, or its
    ``registered/<document>`` was not given."""
    why = "; ".join(branch.unavailable) or (
        f"the registered-plan branch's registered/{document} was not given"
    )
    return f"not computed under entry 0 (the amendment changed {', '.join(changed)}): {why}"


def _outcomes(spec: Mapping[str, Any], statistics: Mapping[str, Any]) -> dict[str, str]:
    """Criterion name -> outcome of analysis ``spec`` evaluated by its kind on ``statistics``."""
    return {o.name: o.outcome for o in kind_of(spec).criteria(spec, statistics)}


def registered_plan_verdicts(
    amended: Study,
    chain: Sequence[Mapping[str, Any]],
    gates: Sequence[Mapping[str, Any]],
    branch_gates: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The H1 verdict under entry 0 of ``chain`` for every scorer and scale of either plan
    (report shape :class:`tailgate.protocol.documents.RegisteredPlanVerdict`): re-derived from the
    amended plan's gates documents ``gates`` where they serve entry 0, else read from the
    registered-plan branch's ``branch_gates`` (module docstring). Empty when there is no
    amendment."""
    branch = registered_branch(amended, "", chain)
    if branch is None:
        return []
    registered = branch.registered
    changed = branch.protocol_reasons()
    ours = {(str(g["scorer"]), str(g["scale"])): g for g in branch_gates}
    stored = {(str(g["scorer"]), str(g["scale"])): g for g in gates}
    rows = []
    for scorer, scale in branch.analyses():
        headline = _is_headline(registered, scorer, scale)
        if not changed:
            if (scorer, scale) in stored:  # the amended plan analyses it (protocol_reasons)
                rows.append(_rederived(registered, stored[(scorer, scale)]))
        elif (scorer, scale) in ours:
            rows.append(_computed(registered, ours[(scorer, scale)], changed))
        else:
            reason = _not_computed_reason(branch, changed, f"gates/{scorer}/{scale}.json")
            rows.append(_row(scorer, scale, headline, None, [], reason, None))
    mine = set(branch.analyses())
    for key in stored:
        if key not in mine:
            rows.append(
                _row(
                    *key,
                    False,
                    None,
                    [],
                    f"the registered plan has no {key[0]}, {key[1]}-scale analysis",
                    None,
                )
            )
    return rows


# --- analysis criteria ------------------------------------------------------------------------


def registered_plan_criteria(
    study: Study,
    chain: Sequence[Mapping[str, Any]],
    analyses: Sequence[Mapping[str, Any]],
    branch_analyses: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Every analysis criterion under the registered plan (entry 0 of the lock) beside its
    outcome as amended.

    An analysis whose statistics the amended plan computed as entry 0 would have (its spec
    differs only in ``criteria``, and nothing it reads changed) has each entry-0 criterion
    evaluated by its kind on the stored statistics ``analyses``; any other is read from the
    registered-plan branch's documents ``branch_analyses``, computed under entry 0. Rows:
    ``analysis``, ``criterion``, ``registered`` and ``amended`` (outcomes, or None where that
    plan has no such criterion), ``reason``. Empty when the lock has no amendment."""
    branch = registered_branch(study, "", chain)
    if branch is None:
        return []
    plan = branch.registered
    first, now = plan.analyses(), study.analyses()
    stats = {str(d.get("analysis")): d.get("statistics") or {} for d in analyses}
    ours = {str(d.get("analysis")): d.get("statistics") or {} for d in branch_analyses}
    rows: list[dict[str, Any]] = []
    for name in sorted(set(first) | set(now)):
        old, new = first.get(name), now.get(name)
        amended = _outcomes(new, stats.get(name, {})) if new is not None else {}
        if old is None:
            names = [c["name"] for c in new.get("criteria", [])]
            rows += [
                {"analysis": name, "criterion": c, "registered": None,
                 "amended": amended.get(c),
                 "reason": "not in the registered plan (added by an amendment)"}
                for c in names
            ]  # fmt: skip
            continue
        changed = branch.analysis_reasons(name)
        registered: dict[str, str] = {}
        reason = ""
        document = f"analyses/{name}/statistics.json"
        if not changed:
            registered = _outcomes(old, stats.get(name, {}))
        elif name in ours:
            registered = _outcomes(old, ours[name])
            reason = _computed_reason(changed, document)
        else:
            reason = _not_computed_reason(branch, changed, document)
        old_specs = {c["name"]: c for c in old.get("criteria", [])}
        new_specs = {c["name"]: c for c in (new or {}).get("criteria", [])}
        for c in [*old_specs, *(n for n in new_specs if n not in old_specs)]:
            what = ""
            if c not in old_specs:
                what = "added by an amendment"
            elif c not in new_specs:
                what = "removed by an amendment"
            elif old_specs[c] != new_specs[c]:
                what = "changed by an amendment"
            note = "; ".join(x for x in (what, reason) if x)
            rows.append(
                {"analysis": name, "criterion": c, "registered": registered.get(c),
                 "amended": amended.get(c), "reason": note}
            )  # fmt: skip
    return rows


# --- the registered plan's outcome ------------------------------------------------------------


def _answer(
    plan: Study,
    h1: Sequence[Mapping[str, Any]],
    analyses: Sequence[Mapping[str, Any]],
    branch_analyses: Sequence[Mapping[str, Any]],
    own: set[str],
) -> dict[str, Any] | None:
    """The registered plan's answer (:func:`tailgate.prereg.answer.answer_document` of entry 0)
    from its H1 verdict and criteria; None where some of it could not be computed."""
    stored = {str(d.get("analysis")): d for d in analyses}
    ours = {str(d.get("analysis")): d for d in branch_analyses}
    docs = [(ours if n in own else stored).get(n) for n in plan.analyses()]
    if any(d is None for d in docs):
        return None
    rows = criteria_rows(plan, docs)  # type: ignore[arg-type]
    if plan.has_protocol:
        head = headline_of(plan)
        main = next((r for r in h1 if r["headline"]), None)
        if main is None or main["h1"] is None:
            return None
        reason = str(main["gates"]["h1"]["reason"]) if main.get("gates") else main["reason"]
        rows = [h1_row(plan, {"verdict": main["h1"], "reason": reason}, head), *rows]
    return answer_document(plan.data, rows)


def registered_plan_document(
    study: Study,
    chain: Sequence[Mapping[str, Any]],
    gates: Sequence[Mapping[str, Any]],
    analyses: Sequence[Mapping[str, Any]],
    branch_gates: Sequence[Mapping[str, Any]] = (),
    branch_analyses: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any] | None:
    """``verdict.json``'s ``registered_plan``: the outcome under entry 0 of ``chain`` beside
    the amended one — its answer, the H1 verdict of every scorer and scale
    (:func:`registered_plan_verdicts`) and every analysis criterion
    (:func:`registered_plan_criteria`), and what the amendment changed that the statistics
    depend on (``statistics_changed``: empty where everything was re-derived from the stored
    statistics). None when the lock has no amendment."""
    branch = registered_branch(study, "", chain)
    if branch is None:
        return None
    plan = branch.registered
    h1 = registered_plan_verdicts(study, chain, gates, branch_gates)
    criteria = registered_plan_criteria(study, chain, analyses, branch_analyses)
    own = {n for n in plan.analyses() if branch.analysis_reasons(n)}
    analyses_changed = {n: branch.analysis_reasons(n) for n in sorted(own)}
    return {
        "entry": int(chain[0]["seq"]),
        "entry_hash": str(chain[0]["entry_hash"]),
        "canonical_hash": str(chain[0]["canonical_hash"]),
        "amended_entry": int(chain[-1]["seq"]),
        "answer": _answer(plan, h1, analyses, branch_analyses, own),
        "headline": headline_of(plan) if plan.has_protocol else None,
        "band_rule": plan.rules.band_rule if plan.has_protocol else None,
        "statistics_changed": {"protocol": branch.protocol_reasons(), **analyses_changed},
        "h1": h1,
        "criteria": criteria,
    }
