"""The run ledger: one line per workflow run in ``results/<study>/runs.jsonl``.

Snakemake calls :func:`finish_run` when a run ends (the Snakefile's ``onsuccess``/``onerror``):
it appends the run — UTC start (read from the name of Snakemake's log) and end time, outcome,
git commit, code digest, lock head, the jobs per rule that finished (not those planned: a run
that fails or is stopped part-way counts what ran), the failed jobs and the jobs a signal stopped
with their logs, the study's answer and H1 verdicts — and re-records the ledger like any artifact
(its provenance record holds its SHA-256; ``tailgate audit`` checks it and the chain of line
hashes). Then it prints the run's answer on the
terminal (:mod:`tailgate.runs.summary`), ending with the **run receipt**: the SHA-256 of the run's
line, to publish with the results (:func:`find_run`, ``tailgate audit --expected-run``), so that
a run removed or rewritten later is found even though the chain itself can be rebuilt.

Each line also binds the results: ``results`` holds the SHA-256 of every artifact of the
folder when the run ended (as its provenance record names it; the ledger itself aside), written
as the changes since the last line that records them — ``files``: path → SHA-256, ``null`` for
an artifact removed since, every artifact where ``base`` is ``null`` — and ``sha256``, the
digest of the whole mapping (:func:`results_digest`), so that a receipt vouches for the files,
not only for the line. :func:`run_results` replays the mappings; ``tailgate audit`` fails when
the newest successful run's mapping is not the folder's and when two successful runs of the
same code, lock entry and versions disagree on a file (:mod:`tailgate.audit.runs`).

A run stopped by SIGINT (Ctrl-C) or SIGTERM is recorded as ``interrupted``, not ``error``
(:mod:`tailgate.runs.interrupts`). A run with nothing to do still prints the answer
(:func:`answer_when_up_to_date`).

A run that failed before anything was recorded leaves no ledger line (the results folder would
otherwise say that data exists). The ledger is the study's experiment-tracking view
(``tailgate status``); runs with Snakemake's ``--no-hooks`` are not in it, so it is history, not
evidence: the contract rests on the lock, the records and git.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tailgate.code import code_digest
from tailgate.errors import DamagedFileError
from tailgate.files.atomic import write_text
from tailgate.files.safe_read import load_json, loads_json, read_text
from tailgate.plans.layout import Layout
from tailgate.prereg.committed import run_mode
from tailgate.prereg.guard import verify_study
from tailgate.prereg.lock import parse_time
from tailgate.runs.interrupts import unfinished_jobs
from tailgate.runs.joblog import finished_jobs, job_entries
from tailgate.runs.summary import headline_first, print_summary
from tailgate.runtime.environment import current
from tailgate.runtime.provenance import PROVENANCE_DIR, iter_records, record, record_files

__all__ = [
    "LEDGER",
    "UP_TO_DATE",
    "answer_when_up_to_date",
    "find_run",
    "finish_run",
    "git_history",
    "ledger_head",
    "missing_heads",
    "read_ledger",
    "results_digest",
    "run_environments",
    "run_jobs",
    "run_results",
    "run_summary",
    "snakemake_log",
    "verify_ledger",
]

#: what the summary says of a run that found every output up to date (nothing ran)
UP_TO_DATE = "up to date"
#: the ledger's name inside results/<study>
LEDGER = "runs.jsonl"
#: 2: each line records its results' digests (``results``)
LEDGER_VERSION = 2


def _line_hash(line: str) -> str:
    return hashlib.sha256(line.encode()).hexdigest()


def ledger_text(results: str | Path) -> str:
    """The ledger's text ("" when there is none), read as a regular file of bounded size
    (:mod:`tailgate.files.safe_read`: a pipe or a device is a damaged ledger, never a wait)."""
    path = Path(results) / LEDGER
    try:
        return read_text(path)
    except FileNotFoundError:
        return ""


def _parse(line: str, path: Path, i: int) -> Any:
    """One ledger line as JSON (None when it is not JSON or nested too deep)."""
    try:
        return loads_json(line, f"{path}, line {i}")
    except DamagedFileError:
        return None


def read_ledger(results: str | Path) -> list[dict[str, Any]]:
    """The ledger's runs, oldest first ([] when there is none)."""
    path = Path(results) / LEDGER
    runs = []
    for i, line in enumerate(ledger_text(results).splitlines(), start=1):
        if not line.strip():
            continue
        run = _parse(line, path, i)
        if not isinstance(run, dict) or not {"run", "time", "outcome"} <= run.keys():
            raise DamagedFileError(
                f"{path}, line {i}: damaged run ledger line (not a run record). Fix: restore "
                "the ledger from a backup; 'tailgate audit' reports the whole chain"
            )
        runs.append(run)
    return runs


def ledger_head(results: str | Path) -> dict[str, Any] | None:
    """The ledger's last line as ``{"runs": n, "line_sha256": …}`` (None without a ledger):
    what an amendment records, so that runs removed or rewritten after it are found."""
    lines = [x for x in ledger_text(results).splitlines() if x.strip()]
    if not lines:
        return None
    return {"runs": len(lines), "line_sha256": _line_hash(lines[-1])}


def missing_heads(results: str | Path, chain: list[dict[str, Any]]) -> list[str]:
    """Each lock entry whose recorded ledger head (:func:`ledger_head`) is not a line of the
    ledger as it is now: the runs seen by that amendment were removed or rewritten since."""
    path = Path(results) / LEDGER
    lines = [x for x in ledger_text(results).splitlines() if x.strip()]
    out = []
    for e in chain:
        head = e.get("ledger_head") if isinstance(e, dict) else None
        if not isinstance(head, dict):
            continue
        n = head.get("runs")
        found = isinstance(n, int) and 0 < n <= len(lines)
        if not found or _line_hash(lines[n - 1]) != head.get("line_sha256"):
            out.append(
                f"{path}: lock entry {e.get('seq')} recorded the ledger at run {n} "
                f"({str(head.get('line_sha256'))[:12]}…), which the ledger no longer holds: runs "
                "were removed or rewritten after that amendment"
            )
    return out


def _line_hashes(results: str | Path) -> list[str]:
    return [_line_hash(x) for x in ledger_text(results).splitlines() if x.strip()]


def find_run(results: str | Path, receipt: str) -> int | None:
    """The run whose ledger line has the SHA-256 ``receipt`` (a run receipt, printed when the
    run ended; a prefix of at least 12 hex digits will do), None when the ledger holds no such
    line."""
    want = receipt.strip().lower()
    if len(want) < 12:
        return None
    for i, h in enumerate(_line_hashes(results), start=1):
        if h == want or (len(want) < 64 and h.startswith(want)):
            return i
    return None


def git_history(results: str | Path) -> dict[str, Any]:
    """Where the ledger and its history in git part (read from every committed version of
    ``runs.jsonl``, :func:`tailgate.prereg.gitinfo.committed_versions`): ``committed`` (whether
    any commit holds it), ``lost`` (one line per committed run the ledger now lacks or holds
    rewritten: commit, run number, line hash) and ``uncommitted`` (runs of the ledger that no
    commit holds)."""
    from tailgate.prereg.gitinfo import committed_versions

    path = Path(results) / LEDGER
    current = _line_hashes(results)
    versions = committed_versions(path)
    lost: dict[int, str] = {}
    seen: set[str] = set()
    for v in versions:
        if v.content is None or v.link:
            continue
        text = v.content.decode("utf-8", errors="replace")
        for i, line in enumerate((x for x in text.splitlines() if x.strip()), start=1):
            h = _line_hash(line)
            seen.add(h)
            if i in lost:
                continue
            if i > len(current):
                lost[i] = (
                    f"run {i} ({h[:12]}…), committed in {v.commit[:12]}, is no longer in the "
                    "ledger (removed)"
                )
            elif current[i - 1] != h:
                lost[i] = (
                    f"run {i} ({h[:12]}…), committed in {v.commit[:12]}, is another line in the "
                    f"ledger now ({current[i - 1][:12]}…: rewritten)"
                )
    return {
        "committed": any(v.content is not None for v in versions),
        "lost": [lost[i] for i in sorted(lost)],
        "uncommitted": [i for i, h in enumerate(current, start=1) if h not in seen],
    }


def verify_ledger(results: str | Path) -> list[str]:
    """Problems of the ledger's chain: each line names the hash of the line before it."""
    path = Path(results) / LEDGER
    problems, previous = [], None
    for i, line in enumerate(ledger_text(results).splitlines(), start=1):
        run = _parse(line, path, i)
        if run is None:
            problems.append(f"{LEDGER} line {i}: not JSON (or nested too deep)")
            break
        if not isinstance(run, dict):
            problems.append(f"{LEDGER} line {i}: damaged (a JSON {type(run).__name__}, not a run)")
            break
        if run.get("previous") != previous or run.get("run") != i:
            problems.append(
                f"{LEDGER} line {i}: does not follow line {i - 1} (a run was removed, reordered or "
                "edited)"
            )
        previous = _line_hash(line)
    return problems


def results_digest(files: Mapping[str, str]) -> str:
    """The SHA-256 of a results mapping (path → SHA-256): over ``path\0sha256\n`` per file, in
    path order."""
    h = hashlib.sha256()
    for path, digest in sorted(files.items()):
        h.update(f"{path}\0{digest}\n".encode())
    return h.hexdigest()


def _hex(x: Any) -> bool:
    return isinstance(x, str) and len(x) == 64 and all(c in "0123456789abcdef" for c in x)


def run_results(runs: list[Any]) -> tuple[list[dict[str, str] | None], list[str]]:
    """Per run (ledger order), the SHA-256 of every artifact when it ended, replayed from each
    line's ``results`` (module docstring); None for a line that records none (written by an
    older tailgate) or a damaged one, which is then also a problem in words."""
    out: list[dict[str, str] | None] = []
    problems: list[str] = []
    for i, run in enumerate(runs, start=1):
        field = run.get("results") if isinstance(run, dict) else None
        if field is None:
            out.append(None)
            continue
        files = field.get("files") if isinstance(field, dict) else None
        base = field.get("base") if isinstance(field, dict) else None
        known = base is None or (type(base) is int and 0 < base < i and out[base - 1] is not None)
        if (
            not isinstance(files, dict)
            or not known
            or not all(isinstance(k, str) and (v is None or _hex(v)) for k, v in files.items())
        ):
            out.append(None)
            problems.append(f"run {i} records its results' digests damaged (or on a damaged base)")
            continue
        mapping = dict(out[base - 1] or {}) if base is not None else {}
        for path, digest in files.items():
            if digest is None:
                mapping.pop(path, None)
            else:
                mapping[path] = digest
        if field.get("sha256") != results_digest(mapping):
            out.append(None)
            problems.append(
                f"run {i} records results whose digests do not add up to its recorded "
                f"results digest {str(field.get('sha256'))[:12]}… (the line was edited)"
            )
            continue
        out.append(mapping)
    return out, problems


def _results_field(results: Path, lines: list[str]) -> dict[str, Any]:
    """This run's ``results`` (module docstring): the artifacts' recorded SHA-256 now, as the
    changes since the last line that records them."""
    now = {
        str(r.path): str(r.content.get("sha256"))
        for r in iter_records(results)
        if str(r.path) != LEDGER
    }
    path = results / LEDGER
    mappings, _ = run_results([_parse(x, path, i) for i, x in enumerate(lines, start=1)])
    base = next((i for i in range(len(mappings), 0, -1) if mappings[i - 1] is not None), None)
    before = mappings[base - 1] if base is not None else None
    files: dict[str, str | None] = {
        p: d for p, d in sorted(now.items()) if before is None or before.get(p) != d
    }
    files.update({p: None for p in sorted(before or {}) if p not in now})
    return {"base": base, "files": files, "sha256": results_digest(now)}


def _bound_results(results: Path, lines: list[str]) -> dict[str, Any] | None:
    """:func:`_results_field`, or None where a damaged record stops it (the audit then fails
    the run, and names that record)."""
    try:
        return _results_field(results, lines)
    except Exception:  # the run's line is kept whatever a record holds
        return None


def _git_state(path: Path) -> dict[str, Any] | None:
    from tailgate.prereg.gitinfo import head_state

    return head_state(path)


def _verdict(results: Path) -> dict[str, Any] | None:
    try:
        return load_json(Layout(results).file("verdict"))
    except FileNotFoundError:
        return None


def _verdicts(verdict: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """H1 per scorer and scale (empty when the study registers no protocol)."""
    if verdict is None:
        return None

    head = verdict.get("headline") or {}
    return [
        {
            "scorer": g["scorer"],
            "scale": g["scale"],
            "verdict": g["h1"]["verdict"],
            **(
                {"headline": True}
                if (g["scorer"], g["scale"]) == (head.get("scorer"), head.get("scale"))
                else {}
            ),
        }
        for g in headline_first(verdict.get("gates", []), head)
    ]


def _answer(verdict: dict[str, Any] | None) -> dict[str, Any] | None:
    """The study's answer: its items, outcome and summary (tailgate.prereg.answer)."""
    answer = (verdict or {}).get("answer")
    if not answer:
        return None
    return {k: answer[k] for k in ("items", "outcome", "summary")}


def _started(log: str | None) -> str | None:
    """When the run started (UTC), from the name Snakemake gives its log
    (``.snakemake/log/<local time %Y-%m-%dT%H%M%S.%f>.snakemake.log``); None without one."""
    if not log:
        return None
    try:
        local = datetime.strptime(Path(log).name.split(".snakemake")[0], "%Y-%m-%dT%H%M%S.%f")
    except ValueError:
        return None
    return local.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_summary(verdict: dict[str, Any] | None) -> dict[str, Any]:
    """What a successful run's line says of its outcome: the study's ``answer`` and the H1
    ``verdicts`` per scorer and scale (the audit re-makes both from the stored statistics)."""
    return {"answer": _answer(verdict), "verdicts": _verdicts(verdict)}


def run_environments(results: Path, since: str | None) -> list[dict[str, str]]:
    """The environments the run's jobs ran in: each distinct ``versions`` of the provenance
    records created since the previous run ended (``since``, its ledger time; None: every
    record), or this process's where the run made nothing. One, unless rules ran in
    environments of their own; the audit decides its comparison mode from them."""
    try:
        start = parse_time(since) if since else None
    except ValueError:
        start = None
    found: list[dict[str, str]] = []
    for rec in iter_records(results):
        if str(rec.path) == LEDGER:
            continue
        versions = rec.content.get("versions")
        if not isinstance(versions, dict):
            continue
        try:
            created = parse_time(str(rec.content.get("created")))
        except ValueError:
            continue
        if start is not None and created < start:
            continue
        env = {str(k): str(v) for k, v in versions.items()}
        if env not in found:
            found.append(env)
    if not found:
        found.append(current())
    return sorted(found, key=lambda e: json.dumps(e, sort_keys=True))


def _environments(results: Path, since: str | None) -> list[dict[str, str]]:
    """:func:`run_environments`, or this process's where a damaged record stops it (the audit
    then names that record)."""
    try:
        return run_environments(results, since)
    except Exception:  # the run's line is kept whatever a record holds
        return [current()]


def _time_of(line: str) -> str | None:
    """The time a ledger line records (None where it is damaged)."""
    run = _parse(line, Path(LEDGER), 0)
    return str(run["time"]) if isinstance(run, dict) and "time" in run else None


def answer_when_up_to_date(study: Any, results: str | Path, *, dryrun: bool) -> None:
    """Print the answer when Snakemake finds nothing to do: it then runs neither ``onsuccess``
    nor ``onerror``, so a handler of its log watches for its "Nothing to be done" line. Nothing
    is appended to the ledger (no job ran). Never raises."""
    import logging

    class _UpToDate(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                if dryrun or not str(record.getMessage()).startswith("Nothing to be done"):
                    return
                from tailgate.runs.summary import print_summary

                print_summary(study, Path(results), outcome=UP_TO_DATE, run=None, log=None)
            except Exception as exc:  # a log handler must not break Snakemake's end
                print(f"tailgate: no summary of this run: {exc}", file=sys.stderr)

    logging.getLogger("snakemake.logging").addHandler(_UpToDate(level=logging.INFO))


def snakemake_log(log: Any) -> str | None:
    """Snakemake's log file from what a handler receives (a path, or a list of paths)."""
    if isinstance(log, (list, tuple)):
        log = next((str(p) for p in log if p and Path(str(p)).is_file()), None)
    return str(log) if log else None


def run_jobs(workflow: Any) -> dict[str, Any]:
    """What this run's jobs did, from Snakemake's ``workflow`` when it ends: ``jobs`` (per rule,
    those that finished), ``jobs_total`` (without the ``all`` target), ``failed`` and ``stopped``
    (rule and log of each, :func:`tailgate.runs.interrupts.unfinished_jobs`); the counts are null
    where Snakemake's objects cannot be read (printed), never the jobs planned."""
    try:
        failed, stopped = unfinished_jobs(workflow)
        jobs: dict[str, int] | None = finished_jobs(workflow)
        entries = {"failed": job_entries(failed), "stopped": job_entries(stopped)}
    except Exception as exc:  # Snakemake's internals: the run's line is kept without counts
        print(f"tailgate: this run's jobs were not counted: {exc!r}", file=sys.stderr)
        jobs, entries = None, {"failed": [], "stopped": []}
    total = None if jobs is None else sum(v for k, v in jobs.items() if k != "all")
    return {"jobs": jobs, "jobs_total": total, **entries}


def finish_run(study: Any, results: str | Path, log: Any, outcome: str, workflow: Any) -> None:
    """Append this run to the ledger, record it, and print the run's answer (module docstring);
    ``workflow``: Snakemake's, whose jobs the line counts (:func:`run_jobs`).

    Never raises: the run's own outcome stands whatever happens here (a problem is printed).
    """
    results = Path(results)
    log = snakemake_log(log)
    jobs = run_jobs(workflow)
    try:
        appended = _append(study, results, log, outcome, jobs)
    except Exception as exc:  # a hook must not turn a finished run into a crash
        print(f"tailgate: the run ledger was not updated: {exc}", file=sys.stderr)
        appended = None
    head = ledger_head(results) if appended is not None else None
    try:
        print_summary(
            study,
            results,
            outcome=outcome,
            run=appended,
            jobs=jobs,
            log=log,
            receipt=head["line_sha256"] if head else None,
        )
    except Exception as exc:  # as above
        print(f"tailgate: no summary of this run: {exc}", file=sys.stderr)


def _append(
    study: Any, results: Path, log: str | None, outcome: str, jobs: dict[str, Any]
) -> dict[str, Any] | None:
    if not record_files(results / PROVENANCE_DIR):
        return None  # nothing was made: no history to keep, and no evidence of data
    path = results / LEDGER
    old = ledger_text(results)
    lines = [line for line in old.splitlines() if line.strip()]
    head = verify_study(study)
    verdict = _verdict(results)
    since = _time_of(lines[-1]) if lines else None
    run = {
        "ledger_version": LEDGER_VERSION,
        "run": len(lines) + 1,
        "previous": _line_hash(lines[-1]) if lines else None,
        "started": _started(log),
        "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "outcome": outcome,
        "mode": run_mode(),
        "lock_head": head,
        "git": _git_state(Path(study.path)),
        "code_digest": code_digest(),
        **jobs,  # jobs, jobs_total, failed, stopped
        **(run_summary(verdict) if outcome == "success" else {"answer": None, "verdicts": None}),
        # the environments its jobs ran in: the audit's comparison mode is the run's
        "environments": _environments(results, since),
        "snakemake_log": str(log) if log else None,
        # the digest of every artifact now: the receipt vouches for the files too
        "results": _bound_results(results, lines),
    }
    line = json.dumps(run, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    write_text(path, "".join(f"{x}\n" for x in [*lines, line]))
    record(path, results_dir=results, study=study, kind="report", extra={"ledger": True})
    return run
