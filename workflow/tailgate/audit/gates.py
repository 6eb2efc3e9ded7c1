"""Audit check ``protocol``: re-derive every gate and the H1 verdict from stored statistics.

Listed in :data:`tailgate.audit.verdicts.VERDICT_CHECKS`. For
every ``gates/<scorer>/<scale>.json`` it rebuilds the per-condition summaries from the stored
``fits/…json`` (not from the gates file's own copy), takes
the stored bulk-equivalence CIs, re-evaluates G1–G5, P1, P2 at every band threshold and the H1
verdict under the registered settings (:func:`tailgate.stages.gates.evaluate`), and compares
each recorded outcome — in the gates file, in ``verdict.json`` and in the sensitivity files — with
the re-derived one. Any disagreement is a failure naming the file, the pair, the threshold and
the gate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tailgate.analyses.registry import kind_of
from tailgate.plans.branch import registered_branch
from tailgate.plans.entries import BRANCH_DIR
from tailgate.plans.layout import Layout
from tailgate.prereg.lock import read_lock
from tailgate.prereg.study import Study

from .criteria import compare_criteria
from .findings import read_or_fail

__all__ = ["registered_plan_check", "verdict_check"]


def _check_gates(
    rd: Path, study: Study, path: Path, fails: list[str], fits_of: Any = None
) -> dict | None:
    """Re-derive one gates document from the fits it read (``fits_of(scorer, scale,
    condition)``: their paths; absent, ``rd/fits/…``)."""
    from tailgate.protocol.registered import registered_settings
    from tailgate.stages.gates import evaluate, summaries_from_fits
    from tailgate.stages.sensitivity import stored_inputs

    doc = read_or_fail(path, fails)
    if doc is None:
        return None
    scorer, scale = doc.get("scorer"), doc.get("scale")
    names = study.protocol_conditions()
    fits = {}
    fits_of = fits_of or Layout(rd).fits
    for c in names:
        fits[c] = read_or_fail(Path(fits_of(str(scorer), str(scale), c)), fails)
        if fits[c] is None:
            return None
    summaries = summaries_from_fits(fits, list(study.thresholds.band))
    _, bulk = stored_inputs(doc)
    settings = registered_settings(study, scorer=str(scorer), scale=str(scale))
    v = evaluate(study, summaries, bulk, settings)
    recorded = {(p["a"], p["b"], round(float(p["q"]), 10)): p for p in doc["protocol"]["pairs"]}
    for p in v.pairs:
        key = (p.a, p.b, round(p.q, 10))
        rec = recorded.get(key)
        where = f"{path}: pair {p.a} vs {p.b} at q={p.q:g}"
        if rec is None:
            fails.append(f"{where}: missing from the recorded matrix")
            continue
        for g, rg in zip(p.gates, rec["gates"], strict=False):
            if g.gate != rg["gate"] or g.passed != bool(rg["passed"]):
                fails.append(
                    f"{where}: gate {g.gate} recorded {'pass' if rg['passed'] else 'fail'}, "
                    f"re-derived {'pass' if g.passed else 'fail'}"
                )
        if p.first_failing != rec.get("first_failing") or p.passed != bool(rec.get("passed")):
            fails.append(
                f"{where}: recorded first failing gate {rec.get('first_failing')}, re-derived "
                f"{p.first_failing}"
            )
    if len(recorded) != len(v.pairs):
        fails.append(f"{path}: records {len(recorded)} pair-thresholds, re-derived {len(v.pairs)}")
    if doc["protocol"].get("h1") != v.h1 or doc["report"]["h1"]["verdict"] != v.h1:
        fails.append(f"{path}: recorded H1 {doc['protocol'].get('h1')}, re-derived {v.h1}")
    rec_pass = sorted(tuple(x) for x in doc["protocol"].get("passing_pairs", []))
    if rec_pass != sorted(v.passing_pairs):
        fails.append(
            f"{path}: recorded passing pairs {rec_pass}, re-derived {list(v.passing_pairs)}"
        )
    for p in doc["report"]["pairs"]:
        for at in p["thresholds"]:
            try:
                d = v.at(p["a"], p["b"], float(at["q"]))
            except KeyError:
                fails.append(f"{path}: report lists unknown pair {p['a']} vs {p['b']}")
                continue
            if bool(at["passed"]) != d.passed or at["first_failing"] != d.first_failing:
                fails.append(
                    f"{path}: report table for {p['a']} vs {p['b']} at q={at['q']:g} says "
                    f"{at['first_failing'] or 'PASS'}, re-derived {d.first_failing or 'PASS'}"
                )
    _check_sensitivity(rd, study, doc, fails)
    return {"scorer": scorer, "scale": scale, "h1": v.h1, "passing": list(v.passing_pairs), "v": v}


def _check_sensitivity(rd: Path, study: Study, gates: dict, fails: list[str]) -> None:
    from tailgate.stages.sensitivity import sensitivity_document

    path = Layout(rd).file("sensitivity", scorer=gates["scorer"], scale=gates["scale"])
    if not path.is_file():
        return
    doc = read_or_fail(path, fails)
    if doc is None:
        return
    expect = sensitivity_document(study, gates)
    if doc.get("h1") != expect["h1"] or doc.get("rows") != expect["rows"]:
        fails.append(f"{path}: recorded sensitivity differs from the re-derived one")


def verdict_check(results_dir: Path, study: Study) -> list[str]:
    """Failures (file-naming strings) where a recorded verdict disagrees with the re-derived one."""
    rd = Path(results_dir)
    fails: list[str] = []
    gate_files = Layout(rd).every("gates")
    verdict_path = Layout(rd).file("verdict")
    derived = {}
    for path in gate_files:
        res = _check_gates(rd, study, path, fails)
        if res is not None:
            derived[(res["scorer"], res["scale"])] = res
    if not verdict_path.is_file():
        return fails
    verdict = read_or_fail(verdict_path, fails)
    if verdict is None:
        return fails
    if verdict.get("prereg_hash") != study.canonical_hash:
        fails.append(f"{verdict_path}: prereg_hash is not the registered canonical hash")
    if not study.has_protocol:
        if verdict.get("h1") is not None or verdict.get("gates") or gate_files:
            fails.append(
                f"{verdict_path}: records an H1 verdict or gates, but the study registers no "
                "protocol (protocol.enabled: false)"
            )
        return fails
    head = verdict.get("headline") or {}
    main = derived.get((head.get("scorer"), head.get("scale")))
    if main is None:
        fails.append(f"{verdict_path}: no gates file re-derives the headline analysis")
    elif (verdict.get("h1") or {}).get("verdict") != main["h1"]:
        fails.append(
            f"{verdict_path}: recorded H1 {(verdict.get('h1') or {}).get('verdict')}, re-derived "
            f"{main['h1']} ({head.get('scorer')}, {head.get('scale')} scale)"
        )
    for g in verdict.get("gates", []):
        d = derived.get((g.get("scorer"), g.get("scale")))
        if d is None:
            fails.append(f"{verdict_path}: gates of {g.get('scorer')}/{g.get('scale')} not found")
            continue
        if g["h1"]["verdict"] != d["h1"]:
            fails.append(
                f"{verdict_path}: {g['scorer']}/{g['scale']} H1 recorded {g['h1']['verdict']}, "
                f"re-derived {d['h1']}"
            )
        for p in g["pairs"]:
            for at in p["thresholds"]:
                try:
                    r = d["v"].at(p["a"], p["b"], float(at["q"]))
                except KeyError:
                    fails.append(f"{verdict_path}: unknown pair {p['a']} vs {p['b']}")
                    continue
                if bool(at["passed"]) != r.passed or at["first_failing"] != r.first_failing:
                    fails.append(
                        f"{verdict_path}: {g['scorer']}/{g['scale']} {p['a']} vs {p['b']} at "
                        f"q={at['q']:g} recorded {at['first_failing'] or 'PASS'}, re-derived "
                        f"{r.first_failing or 'PASS'}"
                    )
                for gate, outcome in at["gates"].items():
                    rg = next((x for x in r.gates if x.gate == gate), None)
                    if rg is not None and outcome.get("passed") is not None:
                        if bool(outcome["passed"]) != rg.passed:
                            fails.append(
                                f"{verdict_path}: {g['scorer']}/{g['scale']} {p['a']} vs "
                                f"{p['b']} at q={at['q']:g}: gate {gate} recorded "
                                f"{'pass' if outcome['passed'] else 'fail'}, re-derived "
                                f"{'pass' if rg.passed else 'fail'}"
                            )
    return fails


def _row_differences(where: Path, key: str, recorded: Any, derived: list[dict]) -> list[str]:
    """Per-row differences of the ``h1`` or ``criteria`` rows of ``registered_plan``."""
    fields = ("scorer", "scale") if key == "h1" else ("analysis", "criterion")
    outcome = "h1" if key == "h1" else "registered"
    rows = {
        tuple(x.get(f) for f in fields): x for x in recorded or [] if isinstance(x, dict)
    }  # fmt: skip
    out = []
    for row in derived:
        got = rows.pop(tuple(row[f] for f in fields), None)
        if got != row:
            name = "H1 of " if key == "h1" else "criterion "
            out.append(
                f"{where}: registered_plan {name}{' · '.join(str(row[f]) for f in fields)} "
                f"recorded {(got or {}).get(outcome)}, re-derived {row[outcome]} under entry 0"
                + (" (its details differ)" if got and got.get(outcome) == row[outcome] else "")
            )
    out += [f"{where}: registered_plan {key} row {k} is not re-derived" for k in rows]
    return out


def _differences(where: Path, recorded: Any, derived: dict[str, Any]) -> list[str]:
    """Where ``verdict.json``'s ``registered_plan`` differs from the re-derived one, by part."""
    if not isinstance(recorded, dict):
        return [f"{where}: registered_plan is {recorded!r:.60}, not the re-derived outcome"]
    out = []
    for key in sorted(recorded.keys() | derived.keys()):
        r, d = recorded.get(key), derived.get(key)
        if r == d:
            continue
        found = _row_differences(where, key, r, d) if key in ("h1", "criteria") else []
        out += found or [f"{where}: registered_plan.{key} differs from the re-derived one"]
    return out


def registered_plan_check(results_dir: Path, study: Study) -> list[str]:
    """Failures where the registered-plan branch or ``verdict.json``'s ``registered_plan``
    disagrees with its re-derivation under entry 0 of the lock (module docstring)."""
    from tailgate.plans.reads import scales_for
    from tailgate.stages.registered_plan import registered_plan_document

    rd = Path(results_dir)
    fails: list[str] = []
    lock = read_lock(study.lock_path)
    chain = lock.chain if lock is not None else []
    verdict_path = Layout(rd).file("verdict")
    verdict = read_or_fail(verdict_path, fails) if verdict_path.is_file() else None
    branch = registered_branch(study, rd.as_posix(), chain)
    if branch is None:
        if (rd / BRANCH_DIR).exists():
            fails.append(
                f"{rd / BRANCH_DIR}: registered-plan artifacts, but the lock has no amendment"
            )
        if isinstance(verdict, dict) and verdict.get("registered_plan") is not None:
            fails.append(
                f"{verdict_path}: records a registered-plan outcome, but the lock has no amendment"
            )
        return fails
    plan = branch.registered
    gates_docs = []
    for p in map(Path, branch.gates_targets()):
        if not p.is_file():
            if verdict is not None:
                fails.append(f"{p}: missing (the registered plan's gates, computed under entry 0)")
            continue
        checked = _check_gates(
            rd / BRANCH_DIR,
            plan,
            p,
            fails,
            fits_of=lambda s, sc, c: branch.path("fits", scorer=s, scale=sc, condition=c),
        )
        if checked is not None:
            gates_docs.append(read_or_fail(p, fails))
    analysis_docs = []
    specs = plan.analyses()
    for p in map(Path, branch.analysis_targets()):
        if not p.is_file():
            if verdict is not None:
                fails.append(f"{p}: missing (a registered-plan analysis, computed under entry 0)")
            continue
        doc = read_or_fail(p, fails)
        if doc is None:
            continue
        name = str(doc.get("analysis"))
        spec = specs.get(name)
        if spec is None or p != Path(branch.pattern("analysis").format(analysis=name)):
            fails.append(f"{p}: not the statistics of entry 0's analysis '{name}'")
            continue
        if doc.get("spec") != spec or doc.get("kind") != spec["kind"]:
            fails.append(f"{p}: computed under a spec that is not entry 0's")
        derived = [o.to_dict() for o in kind_of(spec).criteria(spec, doc.get("statistics", {}))]
        compare_criteria(str(p), doc.get("criteria", []), derived, fails)
        analysis_docs.append(doc)
    if not isinstance(verdict, dict):
        return fails
    main_gates = []
    if study.has_protocol:
        for s in study.scorers():
            for sc in scales_for(study, s["name"]):
                g = read_or_fail(Layout(rd).gates(s["name"], sc), fails)
                if g is not None:
                    main_gates.append(g)
    main_analyses = [
        d
        for name in study.analyses()
        if (d := read_or_fail(Layout(rd).analysis(name), fails)) is not None
    ]
    if fails:
        return fails
    derived = registered_plan_document(
        study, chain, main_gates, main_analyses, gates_docs, analysis_docs
    )
    recorded = verdict.get("registered_plan")
    if recorded != json.loads(json.dumps(derived)):
        fails += _differences(verdict_path, recorded, json.loads(json.dumps(derived)))
    return fails
