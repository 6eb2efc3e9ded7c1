"""The H1 verdict under the registered plan (entry 0 of the lock), beside the amended verdict.

Zhou (2026) itself moved to another scale and threshold after seeing data; tailgate makes such moves
visible (DESIGN: "Amendments"). After an amendment the report shows, for every scorer and scale,
the verdict the frozen registration would have given. It is re-derived with one mechanism, the one
the gates stage, the sensitivity multiverse and the audit use: the stored gate inputs of each
gates document (per-condition summaries and bulk CIs, :func:`tailgate.stages.sensitivity.
stored_inputs`) are evaluated by :func:`tailgate.stages.gates.evaluate` under the settings of the
entry-0 registration (:func:`tailgate.protocol.registered.registered_settings`).

That is valid only where the amendment changed decision rules, not the statistics themselves.
The stored statistics were made by the stages upstream of the gates; each reads the parts of the
registration :mod:`tailgate.stages.dependencies` lists. If any of them reads differently under
entry 0 (another seed, scale, bootstrap, stability window, CI level…), the statistics entry 0
would have produced are not the stored ones and the verdict is reported as not re-derivable, with
the parts that differ. A changed threshold band is allowed when every entry-0 threshold was fitted
(each threshold's fit does not depend on the others); a changed pilot flag matters only through
the family size, hence the CI level, which the fits record and the gates check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tailgate.prereg.study import Study
from tailgate.protocol.registered import registered_settings

from .common import band, read_json, scales_for
from .dependencies import stage_reads
from .gates import evaluate
from .sensitivity import stored_inputs
from .verdict import headline_of

__all__ = [
    "UPSTREAM_STAGES",
    "registered_plan_criteria",
    "registered_plan_of",
    "registered_plan_verdicts",
    "statistics_changes",
]

#: the stages whose outputs the gates read, with the wildcard each job is keyed by
UPSTREAM_STAGES: tuple[tuple[str, str | None], ...] = (
    ("select_prompts", None),
    ("generate", "condition"),
    ("score", "scorer"),
    ("transform", "scorer"),
    ("fit", "condition"),
    ("bulk", None),
)

#: parts an upstream stage reads that the re-derivation handles itself (module docstring)
_HANDLED = ("protocol.thresholds.band", "protocol.stability.resamples")


def _handled(part: str) -> bool:
    return part in _HANDLED or (part.startswith("conditions[") and part.endswith("].pilot"))


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


def _not_derived(scorer: str, scale: str, headline: bool, reason: str) -> dict[str, Any]:
    return {
        "scorer": scorer,
        "scale": scale,
        "headline": headline,
        "h1": None,
        "passing_pairs": [],
        "reason": reason,
        "gates": None,
    }


def _one(registered: Study, gates: Mapping[str, Any], blocked: Sequence[str]) -> dict[str, Any]:
    from tailgate.report.adapt import gates_file_from_protocol

    scorer, scale = str(gates["scorer"]), str(gates["scale"])
    head = headline_of(registered) if registered.scorers() else {}
    headline = (head.get("scorer"), head.get("scale")) == (scorer, scale)
    names = [s["name"] for s in registered.scorers()]
    if scorer not in names or scale not in scales_for(registered, scorer):
        return _not_derived(
            scorer, scale, False, f"the registered plan has no {scorer}, {scale}-scale analysis"
        )
    if blocked:
        return _not_derived(
            scorer,
            scale,
            headline,
            "not re-derivable from the stored statistics: the amendment changed "
            + ", ".join(blocked)
            + ", which the fits or bulk CIs depend on; re-run the study under entry 0 to compare",
        )
    summaries, bulk = stored_inputs(gates)
    thresholds = band(registered)
    missing = [
        q for q in thresholds if not any(math.isclose(q, k, abs_tol=1e-9) for k in summaries)
    ]
    if missing:
        return _not_derived(
            scorer,
            scale,
            headline,
            "not re-derivable from the stored statistics: the registered band has threshold(s) "
            + ", ".join(f"q = {q:g}" for q in missing)
            + " that were not fitted under the amended plan",
        )
    kept = {k: v for k, v in summaries.items() if any(math.isclose(k, q) for q in thresholds)}
    try:
        settings = registered_settings(registered, scorer=scorer, scale=scale)
        verdict = evaluate(registered, kept, bulk, settings)
    except (KeyError, ValueError) as exc:  # a pair without bulk CIs, a CI at another level
        reason = str(exc.args[0]) if exc.args else type(exc).__name__
        return _not_derived(
            scorer, scale, headline, f"not re-derivable from the stored statistics: {reason}"
        )
    passing = [f"{a} vs {b}" for a, b in verdict.passing_pairs]
    reason = f"band rule '{verdict.band_rule}': " + (
        f"{', '.join(passing)} pass every gate" if passing else "no registered pair passes"
    )
    view = gates_file_from_protocol(verdict.to_dict(), scorer=scorer, scale=scale, reason=reason)
    return {
        "scorer": scorer,
        "scale": scale,
        "headline": headline,
        "h1": verdict.h1,
        "passing_pairs": passing,
        "reason": f"re-derived from the stored statistics under entry 0 ({reason})",
        "gates": view,
    }


def registered_plan_verdicts(
    amended: Study, chain: Sequence[Mapping[str, Any]], gates: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The verdict under entry 0 of ``chain`` for every gates document (report shape
    :class:`tailgate.report.model.RegisteredPlanVerdict`); empty when there is no amendment."""
    if len(chain) < 2:
        return []
    registered = _entry_study(amended, chain[0])
    blocked = statistics_changes(registered, amended)
    return [_one(registered, g, blocked) for g in gates]


def _entry_study(amended: Study, entry: Mapping[str, Any]) -> Study:
    """The study as a lock entry registered it."""
    return Study(
        path=amended.path,
        data=entry["prereg"],
        canonical_hash=str(entry["canonical_hash"]),
        raw_hash=str(entry.get("raw_hash", "")),
    )


#: the stages that make the data an analysis reads
DATA_STAGES = tuple(s for s in UPSTREAM_STAGES if s[0] not in ("fit", "bulk"))


def _analysis_reads(study: Study, name: str) -> dict[str, Any]:
    """What the analysis stage of ``name`` reads of the registration, with the protocol's
    study-wide defaults as the analysis sees them (:func:`tailgate.prereg.answer.
    protocol_settings`) and its own spec without its criteria (statistics never read them)."""
    from tailgate.analyses.registry import kind_of
    from tailgate.prereg.answer import protocol_settings

    reads = stage_reads(study, "analysis", analysis=name)
    spec = study.data.get("analyses", {}).get(name) or {}
    falls_back = kind_of(spec).protocol_defaults if spec else ()
    protocol = protocol_settings(study.data)
    out: dict[str, Any] = {}
    for part, value in reads.items():
        if part == f"analyses.{name}":
            out[part] = {k: v for k, v in spec.items() if k != "criteria"}
        elif part.startswith("protocol."):
            field = part.split(".", 1)[1]
            if field in falls_back:  # read only where the kind falls back on the protocol
                out[part] = protocol.get(field)
        else:
            out[part] = value
    return out


def _data_changes(registered: Study, amended: Study) -> set[str]:
    names = {
        "condition": {c["name"] for c in registered.conditions()}
        | {c["name"] for c in amended.conditions()},
        "scorer": {s["name"] for s in registered.scorers()}
        | {s["name"] for s in amended.scorers()},
    }
    changed: set[str] = set()
    for stage, wildcard in DATA_STAGES:
        jobs = [{}] if wildcard is None else [{wildcard: n} for n in sorted(names[wildcard])]
        for wc in jobs:
            old, new = stage_reads(registered, stage, **wc), stage_reads(amended, stage, **wc)
            changed.update(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    return changed


def registered_plan_of(
    study: Study, results: str | Path, verdict: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[Path]]:
    """The registered-plan verdicts of a study's results, and the files they were read from (the
    gates documents of ``verdict`` and the lock); ``([], [])`` when the lock has no amendment."""
    from tailgate.prereg.lock import read_lock

    lock = read_lock(study.lock_path)
    if lock is None or len(lock.chain) < 2:
        return [], []
    paths = [
        Path(results) / "gates" / str(g["scorer"]) / f"{g['scale']}.json" for g in verdict["gates"]
    ]
    docs = [read_json(p, "gates") for p in paths]
    return registered_plan_verdicts(study, lock.chain, docs), [*paths, Path(study.lock_path)]


def registered_plan_criteria(
    study: Study, chain: Sequence[Mapping[str, Any]], analyses: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Every analysis criterion under the registered plan (entry 0 of the lock) beside its
    outcome as amended, re-derived by the analysis kind from the stored statistics.

    An analysis whose entry-0 spec differs from the current one only in ``criteria`` has the
    statistics entry 0 would have computed (a kind's statistics never read its criteria), so
    each entry-0 criterion is evaluated on them; otherwise the row says which fields changed the
    statistics. Rows: ``analysis``, ``criterion``, ``registered`` and ``amended`` (outcomes, or
    None where the plan has no such criterion or it cannot be re-derived), ``reason``. Empty
    when the lock has no amendment."""
    from tailgate.analyses.registry import kind_of

    if len(chain) < 2:
        return []
    plan = _entry_study(study, chain[0])
    data_changed = _data_changes(plan, study)
    first = plan.data.get("analyses") or {}
    now = study.data.get("analyses") or {}
    stats = {str(d.get("analysis")): d.get("statistics") or {} for d in analyses}
    rows: list[dict[str, Any]] = []
    for name in sorted(set(first) | set(now)):
        old, new = first.get(name), now.get(name)
        amended = (
            {o.name: o.outcome for o in kind_of(new).criteria(new, stats.get(name, {}))}
            if new is not None
            else {}
        )
        if old is None or new is None:
            reason = (
                "not in the registered plan (added by an amendment)"
                if old is None
                else "removed by an amendment: its statistics were not computed"
            )
            names = [c["name"] for c in (new or old or {}).get("criteria", [])]
            rows += [
                {"analysis": name, "criterion": c, "registered": None,
                 "amended": amended.get(c), "reason": reason}
                for c in names
            ]  # fmt: skip
            continue
        before, after = _analysis_reads(plan, name), _analysis_reads(study, name)
        changed = sorted(
            data_changed
            | {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        )
        registered: dict[str, str] = {}
        reason = ""
        if changed:
            reason = (
                "not re-derived: the amendment changed "
                + ", ".join(changed)
                + " (read by the analysis or the data it reads), so the stored statistics are "
                "not the registered plan's"
            )
        else:
            registered = {
                o.name: o.outcome for o in kind_of(old).criteria(old, stats.get(name, {}))
            }
        old_specs = {c["name"]: c for c in old.get("criteria", [])}
        new_specs = {c["name"]: c for c in new.get("criteria", [])}
        for c in [*old_specs, *(n for n in new_specs if n not in old_specs)]:
            note = reason
            if not note:
                if c not in old_specs:
                    note = "added by an amendment"
                elif c not in new_specs:
                    note = "removed by an amendment"
                elif old_specs[c] != new_specs[c]:
                    note = "changed by an amendment"
            rows.append(
                {"analysis": name, "criterion": c, "registered": registered.get(c),
                 "amended": amended.get(c), "reason": note}
            )  # fmt: skip
    return rows
