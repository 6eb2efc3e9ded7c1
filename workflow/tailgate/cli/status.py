"""``tailgate status``: a study's timeline — registration, amendments, workflow runs — and its
state now, from the lock (:mod:`tailgate.prereg.lock`), git and the run ledger
(:mod:`tailgate.runs.ledger`). Reads only; ``--audit`` adds the full audit's outcome. Where the
ledger and its history in git part — a committed run the ledger no longer holds, or holds
rewritten, and runs no commit holds yet — is shown under the results line (``ledger_git``).

The JSON shape (``--json``) is versioned by ``format``: ``tailgate.status/1``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tailgate.cli.base import Verbs, print_json, verb
from tailgate.errors import EXIT_OK
from tailgate.prereg.study import results_dir_for

STATUS_FORMAT = "tailgate.status/1"


def prereg_of(study_or_path: str) -> Path:
    """``preregistrations/<study>.yaml`` for a study name; a path is taken as it is."""
    p = Path(study_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return p
    return Path("preregistrations") / f"{study_or_path}.yaml"


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _lock_events(lock: Any) -> list[dict[str, Any]]:
    from tailgate.prereg.deviations import amendment_log
    from tailgate.prereg.history import lock_history

    history = lock_history(lock.path, [e["entry_hash"] for e in lock.chain])
    logged, deviations = amendment_log(lock)
    amendments = {a["seq"]: a for a in logged}
    deviating = {d["amendment"] for d in deviations}
    events = []
    for e in lock.chain:
        committed = history.introduced.get(e["entry_hash"])
        ev: dict[str, Any] = {
            "event": "registered" if e["seq"] == 0 else "amended",
            "time": str(e["time"]),
            "seq": int(e["seq"]),
            "entry_hash": str(e["entry_hash"]),
            "canonical_hash": str(e["canonical_hash"]),
            "data_existed": bool(e.get("data_existed")),
            "committed": None
            if committed is None
            else {"commit": committed[0], "time": committed[1].isoformat()},
        }
        if e["seq"] in amendments:
            a = amendments[e["seq"]]
            ev.update(
                reason=a["reason"],
                classes=a["classes"],
                fields=[f["path"] for f in a["fields"]],
                deviation=e["seq"] in deviating,
            )
        events.append(ev)
    return events


def _run_events(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "event": "run",
            "time": r["time"],
            "run": r["run"],
            "outcome": r["outcome"],
            "mode": r.get("mode", "confirmatory"),
            "lock_seq": (r.get("lock_head") or {}).get("seq"),
            "git": r.get("git"),
            "code_digest": r.get("code_digest"),
            "jobs_total": r.get("jobs_total"),
            "jobs": r.get("jobs"),
            "failed": r.get("failed"),
            "answer": r.get("answer"),
            "verdicts": r.get("verdicts"),
        }
        for r in runs
    ]


def study_status(prereg: str | Path, *, run_audit: bool = False) -> dict[str, Any]:
    """The status document (module docstring); ``PreregError`` when the file is invalid."""
    from tailgate.prereg.guard import check_frozen
    from tailgate.runs.ledger import git_history, read_ledger, verify_ledger
    from tailgate.runtime.provenance import PROVENANCE_DIR, record_files

    state = check_frozen(prereg)
    study, lock = state.study, state.lock
    results = results_dir_for(study.path)
    events = _lock_events(lock) if lock is not None else []
    events += _run_events(read_ledger(results))
    events.sort(key=lambda e: e["time"])
    n_records = len(record_files(results / PROVENANCE_DIR))
    doc: dict[str, Any] = {
        "format": STATUS_FORMAT,
        "study": study.name,
        "prereg": str(study.path),
        "results": _shown(results),
        "frozen": lock is not None,
        "matches_lock": state.ok,
        "problem": state.problem,
        "changes": [c.to_json() for c in state.changes],
        "artifacts": n_records,
        "ledger_problems": verify_ledger(results),
        "ledger_git": git_history(results),
        "events": events,
        "audit": None,
    }
    if run_audit and lock is not None and results.is_dir():
        from tailgate.audit import audit

        rep = audit(results, prereg=study.path)
        doc["audit"] = {
            "passed": rep.ok,
            "failed_checks": [c.name for c in rep.checks if not c.ok],
        }
    return doc


def _event_line(e: dict[str, Any]) -> list[str]:
    when = e["time"][:19].replace("T", " ")
    if e["event"] in ("registered", "amended"):
        commit = e["committed"]
        where = f"committed {commit['commit'][:10]}" if commit else "not committed"
        head = f"{when}  {e['event']:<10} entry {e['seq']}  {e['entry_hash'][:12]}…  ({where})"
        if e["event"] == "registered":
            return [head]
        tag = "DEVIATION" if e.get("deviation") else "no deviation"
        data = "after data" if e["data_existed"] else "before data"
        return [
            head,
            f"{'':21}{tag}, {data}: {', '.join(e.get('fields', [])) or '—'}",
            f"{'':21}reason: {e.get('reason', '')}",
        ]
    git = e.get("git") or {}
    commit = (git.get("commit") or "")[:10] + (" (dirty)" if git.get("dirty") else "")
    verdicts = ", ".join(
        f"{v['scorer']}/{v['scale']}{' (headline)' if v.get('headline') else ''} {v['verdict']}"
        for v in sorted(e["verdicts"] or [], key=lambda v: not v.get("headline"))
    )
    lines = [
        f"{when}  run {e['run']:<6} {e['outcome']:<8} {e['jobs_total'] or 0} job(s), entry "
        f"{e['lock_seq']}, git {commit or '—'}, code {str(e.get('code_digest'))[:10]}"
    ]
    if e.get("mode") == "exploratory":
        lines.append(f"{'':21}EXPLORATORY run (registration not required to be committed)")
    answer = e.get("answer")
    if answer:
        lines.append(f"{'':21}answer: {answer['outcome']} — {answer['summary']}")
    if verdicts:
        lines.append(f"{'':21}H1: {verdicts}")
    for f in e.get("failed") or []:
        lines.append(f"{'':21}failed: rule {f['rule']} (log {f['log'] or '—'})")
    return lines


def format_status(doc: dict[str, Any]) -> str:
    """The status as text for the terminal."""
    out = [f"study {doc['study']}  ({doc['prereg']})"]
    if not doc["frozen"]:
        out.append(f"  not frozen: run 'tailgate freeze {doc['prereg']}'")
    elif doc["matches_lock"]:
        out.append("  pre-registration: matches the lock's chain head")
    else:
        out.append(f"  pre-registration: REFUSED — {doc['problem']}")
        for c in doc["changes"]:
            out.append(f"    {c['field']}: {c['old']!r} → {c['new']!r} ({c['class']})")
    out.append(f"  results: {doc['results']} ({doc['artifacts']} recorded artifact(s))")
    for p in doc["ledger_problems"]:
        out.append(f"  run ledger: {p}")
    history = doc["ledger_git"]
    for p in history["lost"]:
        out.append(f"  run ledger not as committed: {p}")
    if history["uncommitted"]:
        runs = history["uncommitted"]
        span = f"{runs[0]}" if len(runs) == 1 else f"{runs[0]}–{runs[-1]}"
        out.append(
            f"  run ledger: run(s) {span} not in any commit"
            + ("" if history["committed"] else " (the ledger was never committed)")
            + f"; commit {doc['results']}/runs.jsonl, or publish each run's receipt"
        )
    out.append("")
    out.append("timeline (UTC)")
    if not doc["events"]:
        out.append("  nothing yet")
    for e in doc["events"]:
        out.extend("  " + line for line in _event_line(e))
    out.append("")
    if doc["audit"] is None:
        out.append(f"audit: not run here — 'tailgate audit {doc['results']}' (or status --audit)")
    else:
        a = doc["audit"]
        out.append(
            "audit: PASSED"
            if a["passed"]
            else f"audit: FAILED ({', '.join(a['failed_checks'])}) — run 'tailgate audit "
            f"{doc['results']}' for details"
        )
    return "\n".join(out)


def add_status(sub: Verbs) -> None:
    """``tailgate status STUDY``."""
    p = verb(
        sub,
        "status",
        "a study's timeline: registration, amendments, runs, and its state now",
        "Print the timeline of STUDY (a name, or the path of its pre-registration): the "
        "registration and every amendment from the lock (time, commit that holds it, fields, "
        "whether data existed, deviation), every workflow run from results/<study>/runs.jsonl "
        "(time, outcome, jobs, git commit, code digest, lock entry, verdict), and whether the "
        "pre-registration matches its lock now. --audit also runs the full audit. Writes "
        "nothing. Exit 0 (also when the pre-registration is refused: the status says so), 2 on "
        "invalid input.\n\nexample: tailgate status mystudy --json",
        _cmd_status,
    )
    p.add_argument("study", metavar="STUDY", help="study name or preregistrations/<study>.yaml")
    p.add_argument("--json", action="store_true", help="print the status as JSON (README)")
    p.add_argument("--audit", action="store_true", help="also run 'tailgate audit' (seconds)")


def _cmd_status(args: argparse.Namespace) -> int:
    doc = study_status(prereg_of(args.study), run_audit=args.audit)
    if args.json:
        print_json("status", {k: v for k, v in doc.items() if k != "format"})
    else:
        print(format_status(doc))
    return EXIT_OK
