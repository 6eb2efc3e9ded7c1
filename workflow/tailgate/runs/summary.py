"""The run's answer on the terminal, printed when a workflow run ends (:mod:`tailgate.runs.ledger`).

On success: the study's registered answer first (:mod:`tailgate.prereg.answer`: H1, or the
analysis criteria it names, with their outcomes), then — when the study registers the protocol —
the H1 verdict per scorer and scale (Zhou 2026, Section 3: every gate G1–G5, P1, P2 at a band
threshold, combined by the registered band rule) with the passing pairs or each pair's first
failing gate at the headline threshold, the other analyses' criteria, after an amendment the
outcome under the registered plan (entry 0 of the lock) beside the amended one, the deviations
from the registered plan, and where the report is. On error: which jobs failed and the end of
their logs. Stopped by Ctrl-C or SIGTERM: one line, :data:`STOPPED`, on stderr. Snakemake's own
log above it is left as it is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from tailgate.files.safe_read import load_json
from tailgate.plans.layout import Layout
from tailgate.prereg.committed import EXPLORATORY, run_mode

__all__ = [
    "answer_lines",
    "headline_first",
    "print_summary",
    "registered_plan_lines",
    "verdict_lines",
]

RULE = "─" * 72
#: what a run stopped by SIGINT or SIGTERM prints (the ledger records it as ``interrupted``)
STOPPED = "stopped; run the same command to resume; finished jobs are kept"


def _at_headline(pair: dict[str, Any], q: float) -> dict[str, Any] | None:
    return next((t for t in pair.get("thresholds", []) if abs(float(t["q"]) - q) < 1e-12), None)


def _criterion_line(c: dict[str, Any]) -> str:
    return f"  {c['analysis']} · {c['name']}: {c.get('outcome')}"


def answer_lines(verdict: dict[str, Any]) -> list[str]:
    """The study's answer (``verdict.json``'s ``answer``): outcome, summary and each criterion
    it names; nothing for a verdict written before answers were registered."""
    answer = verdict.get("answer")
    if not answer:
        return []
    how = "registered" if answer.get("registered") else "derived from what is registered"
    lines = [
        f"answer: {answer['outcome']} — {answer['summary']}  [{', '.join(answer['items'])}; {how}]"
    ]
    for c in answer.get("criteria", []):
        if c.get("analysis") != "protocol":
            lines.append(_criterion_line(c))
    return lines


def headline_first(items: Any, head: dict[str, Any] | None) -> list[Any]:
    """``items`` (mappings with ``scorer`` and ``scale``) with the headline scorer and scale
    first, the others in their order."""
    key = ((head or {}).get("scorer"), (head or {}).get("scale"))
    return sorted(items, key=lambda g: (g["scorer"], g["scale"]) != key)


def verdict_lines(verdict: dict[str, Any]) -> list[str]:
    """The answer, then the verdict per scorer/scale and why, from ``verdict.json`` (headline
    first), then the criteria the answer does not name."""
    head = verdict.get("headline") or {}
    lines: list[str] = answer_lines(verdict)
    gates = headline_first(verdict.get("gates", []), head)
    headline = (head.get("scorer"), head.get("scale"))
    for g in gates:
        h1 = g["h1"]
        tag = " (headline)" if (g["scorer"], g["scale"]) == headline else ""
        lines.append(
            f"H1 {g['scorer']} / {g['scale']}{tag}: {h1['verdict']}  "
            f"[band rule {verdict.get('band_rule')}, headline q = {g['headline_q']:g}]"
        )
        if h1.get("passing_pairs"):
            lines.append(f"  passing: {', '.join(h1['passing_pairs'])}")
            continue
        fails = []
        for p in g.get("pairs", []):
            t = _at_headline(p, float(g["headline_q"]))
            first = (t or {}).get("first_failing") or "—"
            fails.append(f"{p['a']} vs {p['b']}: {first}")
        if fails:
            lines.append("  first failing gate at the headline q: " + "; ".join(fails))
    named = (verdict.get("answer") or {}).get("criteria", [])
    crit = [
        c for c in verdict.get("criteria", []) if c.get("analysis") != "protocol" and c not in named
    ]
    if crit:
        passed = sum(c.get("outcome") == "PASS" for c in crit)
        label = "other criteria" if named else "further analyses"
        lines.append(f"{label}: {passed} of {len(crit)} criteria PASS")
        for c in crit:
            if c.get("outcome") != "PASS":
                lines.append(_criterion_line(c))
    lines += registered_plan_lines(verdict)
    devs = verdict.get("deviations", [])
    amends = verdict.get("amendments", [])
    if devs:
        lines.append(
            f"deviations from the registered plan: {len(devs)} ("
            + ", ".join(
                str(d.get("what", "")).split(":")[0]
                if d.get("amendment") is None
                else f"amendment {d['amendment']}"
                for d in devs
            )
            + "; see the report)"
        )
    elif amends:
        lines.append(f"amendments: {len(amends)}, none a deviation")
    else:
        lines.append("deviations from the registered plan: none")
    return lines


def registered_plan_lines(verdict: dict[str, Any]) -> list[str]:
    """After an amendment: the answer under the registered plan (entry 0), its H1 verdict per
    scorer and scale beside the amended one, and the criteria whose outcome differs."""
    plan = verdict.get("registered_plan")
    if not plan:
        return []
    answer = plan.get("answer")
    lines = [
        f"under the registered plan (entry {plan['entry']}, beside amendment "
        f"{plan['amended_entry']}): "
        + (f"answer {answer['outcome']} — {answer['summary']}" if answer else "answer not computed")
    ]
    now = {(g["scorer"], g["scale"]): g["h1"]["verdict"] for g in verdict.get("gates", [])}
    changed = (plan.get("statistics_changed") or {}).get("protocol") or []
    for r in headline_first(plan.get("h1", []), plan.get("headline")):
        tag = " (headline)" if r.get("headline") else ""
        then = r["h1"] or "not computed"
        amended = now.get((r["scorer"], r["scale"]), "not analysed")
        how = "computed under entry 0" if changed else "re-derived from the stored statistics"
        if r["h1"] is None:
            how = r["reason"]
        lines.append(
            f"  H1 {r['scorer']} / {r['scale']}{tag}: {then} (as amended: {amended}); {how}"
        )
    if changed:
        lines.append(f"  entry 0's own fits and gates: the amendment changed {', '.join(changed)}")
    rows = plan.get("criteria", [])
    differ = [r for r in rows if r.get("registered") != r.get("amended")]
    if rows:
        lines.append(f"  criteria: {len(rows) - len(differ)} of {len(rows)} as amended")
        for r in differ:
            lines.append(
                f"    {r['analysis']} · {r['criterion']}: registered {r.get('registered') or '—'}, "
                f"amended {r.get('amended') or '—'}"
            )
    return lines


def _tail(path: Path, n: int = 4) -> list[str]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-n:]


def print_summary(
    study: Any,
    results: Path,
    *,
    outcome: str,
    run: dict[str, Any] | None,
    log: str | None,
    out: TextIO | None = None,
    receipt: str | None = None,
    jobs: dict[str, Any] | None = None,
) -> None:
    """Print the run's answer (module docstring); ``receipt``: the SHA-256 of the run's ledger
    line, printed last, to publish with the results; ``jobs``: the jobs that ran and failed
    (:func:`tailgate.runs.ledger.run_jobs`) where the run has no ledger line."""
    out = out or sys.stdout
    if outcome == "interrupted":  # Ctrl-C or SIGTERM: nothing to fix, one line, on stderr: where
        # stdout is a pipe (``| tee``), the same Ctrl-C closed it
        print(f"tailgate · study {study.name} · {STOPPED}", file=sys.stderr, flush=True)
        return
    ran = run or jobs or {}
    failed = ran.get("failed") or []
    n_jobs = ran.get("jobs_total") or 0
    run_no = f" · run {run['run']}" if run else ""
    print(RULE, file=out)
    print(f"tailgate · study {study.name}{run_no} · {outcome} ({n_jobs} job(s) run)", file=out)
    if run_mode() == EXPLORATORY:
        print(
            "EXPLORATORY run (exploratory=true): not a confirmatory test of the registered plan; "
            "the audit will not pass these results",
            file=out,
        )
    if outcome in ("success", "up to date"):  # up to date: nothing ran, the answer stands
        layout = Layout(results)
        vpath = layout.file("verdict")
        if vpath.is_file():
            for line in verdict_lines(load_json(vpath)):
                print(line, file=out)
        report = layout.file("report")
        if report.is_file():
            print(f"report: {report}  (and {layout.file('report_md')})", file=out)
        print(f"next: tailgate audit {results}  ·  history: tailgate status {study.name}", file=out)
    else:
        for f in failed or [{"rule": "?", "log": ""}]:
            print(f"failed: rule {f['rule']}" + (f", log {f['log']}" if f["log"] else ""), file=out)
            if f["log"]:
                for line in _tail(Path(f["log"])):
                    print(f"  | {line}", file=out)
        if log:
            print(f"Snakemake's log: {log}", file=out)
        print("fix the cause, then run the same command again (finished jobs are kept)", file=out)
    if receipt is not None and run is not None:
        print(
            f"run receipt: {receipt} (run {run['run']}); publish it with the results — a "
            f"reviewer checks that the run is still in the ledger with 'tailgate audit {results} "
            f"--expected-run {receipt}'",
            file=out,
        )
    print(RULE, file=out)
