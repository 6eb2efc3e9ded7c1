"""``tailgate audit``: re-verify a study's results folder (DESIGN: "Provenance").

The audit checks, and reports each check by name (any failure: exit 4):

1. **results folder** — it is ``<project>/results/<study>``, a real folder, with no link inside;
2. **lock chain** — entry hashes, links, recorded length and head;
3. **pre-registration** — the file and the input files it pins against the chain head, and
   optionally one published hash (``expected_hash``: any entry's ``entry_hash`` or
   ``canonical_hash``; that entry and every one before it are checked);
4. **git** (skipped only with ``no_git``, and then timing is reported as unverified), read as a
   skeptical reviewer (:mod:`tailgate.prereg.gitreview`) — no links at the registration, no
   shallow clone, the pre-registration and lock committed as they are (compared by blob hash);
   every committed version of the lock on any branch extends the one before (append-only);
   every entry is in some commit; the commit that first holds entry 0 predates the first data
   artifact; an amendment committed or made after data says so (``data_existed``). Commit dates
   are the committer's; ``tsa_cert`` verifies trusted timestamps (:mod:`tailgate.prereg.timestamp`);
5. **files and records** — every file has a record and every record a file, with the recorded
   SHA-256 (tables: which rows changed); every other file fails, except the rules' ``*.log``
   files under ``logs/`` (anything else there fails too);
6. **inputs** — inputs recorded inside the folder still have the recorded hashes; pinned input
   files were the pinned ones;
7. **chain head at production** — each record's lock entry existed and was the head at the time;
8. **code** — every record of the study was made by the same code (digest of the tailgate
   package and workflow); a digest other than the auditor's is a note; **runtime** — no record
   was made with an import hook whose content is not what a packaging tool writes
   (:mod:`tailgate.prereg.startup`), compiled code that is not its source, or a tailgate module
   from elsewhere (:mod:`tailgate.prereg.runtime`);
9. **realised design** — rows, exceedances and bootstrap sizes behind the statistics, and the
   deviations ``verdict.json`` must list (:mod:`tailgate.prereg.deviations`);
10. **verdicts** — every recorded outcome re-derived by the functions registered with
    :func:`register_verdict_check` (the protocol's gates and H1, and each analysis);
11. **report** — ``report.html``, ``report.md``, the figures and what they plot re-rendered from
    the stored statistics and compared by content (:mod:`tailgate.prereg.compare`: byte for byte
    when the recorded versions are the auditor's).

Before them, **environment**: how the auditor's Python and package versions differ from those
recorded with the results (:mod:`tailgate.environment`); a difference is a note, never a failure.

``tailgate audit --reproduce`` (:mod:`tailgate.prereg.reproduce`) goes further: it re-runs every
derived stage from the data with the auditor's code and compares every file (a transformers
study's scores, per-token losses, judge grades and embeddings recomputed from its generations
with the registered models); what it could not recompute here is listed in
:attr:`AuditReport.cannot_prove`.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from tailgate.errors import DamagedFileError, TailgateError
from tailgate.forked import Forked
from tailgate.prereg.canonical import sha256_file
from tailgate.prereg.gitinfo import repo_root
from tailgate.prereg.lock import Lock, LockIntegrityError, parse_time, read_lock
from tailgate.prereg.study import NAME_RE, Study, load, lock_path_for, results_dir_for
from tailgate.prereg.verdict_checks import (
    load_builtin_checks,
    register_verdict_check,
    verdict_checks,
)

__all__ = [
    "CANNOT_PROVE",
    "AuditReport",
    "Check",
    "audit",
    "register_verdict_check",
    "verdict_checks",
]

CANNOT_PROVE = (
    "What an audit cannot prove: that the data came from the registered models and prompts; "
    "and, with local files alone, that a researcher who rewrote git history (or never committed "
    "the lock before collecting data) did not register after seeing results. A receipt "
    "published before the data (tailgate freeze prints it; --tag makes a tag to push) closes "
    "that: pass its hash as --expected-hash; so does a trusted timestamp (freeze --timestamp "
    "URL), verified with --tsa-cert."
)

_SKIP_DIRS = {"provenance", "logs", ".snakemake"}
#: the one kind of file ``logs/`` may hold: the rules' logs (read by people, not audited)
LOG_SUFFIX = ".log"


@dataclass(frozen=True)
class Check:
    """One audit check: its name, what was examined, and the failures (file-naming strings)."""

    name: str
    detail: str
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class AuditReport:
    """All checks of one audit; ``ok`` when none failed."""

    results_dir: Path
    checks: list[Check]
    #: what this audit in particular could not establish (beside :data:`CANNOT_PROVE`, which
    #: holds for every audit): e.g. a score taken as recorded by ``--reproduce`` because its
    #: model cannot be loaded here
    cannot_prove: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[str]:
        return [f for c in self.checks for f in c.failures]

    def lines(self) -> list[str]:
        out = [f"audit of {self.results_dir}"]
        for c in self.checks:
            out.append(f"[{'ok' if c.ok else 'FAILED'}] {c.name}: {c.detail}")
            out.extend(f"    FAILED: {f}" for f in c.failures)
            out.extend(f"    note: {n}" for n in c.notes)
        out.append("audit passed" if self.ok else f"audit FAILED: {len(self.failures)} problem(s)")
        out.append(CANNOT_PROVE)
        if self.cannot_prove:
            out.append("What this audit in particular cannot prove:")
            out.extend(f"    - {item}" for item in self.cannot_prove)
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape (``audit_version`` 1)."""
        return {
            "audit_version": 1,
            "results_dir": str(self.results_dir),
            "ok": self.ok,
            "checks": [
                {
                    "name": c.name,
                    "ok": c.ok,
                    "detail": c.detail,
                    "failures": list(c.failures),
                    "notes": list(c.notes),
                }
                for c in self.checks
            ],
            "cannot_prove": CANNOT_PROVE,
            "cannot_prove_here": list(self.cannot_prove),
        }


def _prereg_of(rd: Path) -> Path:
    """``<project>/preregistrations/<study>.yaml`` beside ``<project>/results/<study>``, found
    from the path as written (a linked results folder does not lead elsewhere)."""
    return Path(os.path.abspath(rd)).parent.parent / "preregistrations" / f"{rd.name}.yaml"


def audit(
    results_dir: str | Path,
    *,
    prereg: str | Path | None = None,
    expected_hash: str | None = None,
    no_git: bool = False,
    tsa_cert: str | Path | None = None,
) -> AuditReport:
    """Audit ``results_dir`` (``results/<study>``) against its pre-registration and lock."""
    from tailgate.prereg.guard import links_in

    rd = Path(results_dir)
    # 1. the results folder itself
    if rd.is_symlink():
        return AuditReport(
            rd,
            [
                Check(
                    "results folder",
                    str(rd),
                    [
                        f"{rd}: the results folder is a link to {os.readlink(rd)}; audit the "
                        "real folder inside the project that registered it"
                    ],
                )
            ],
        )
    if not rd.is_dir():
        return AuditReport(rd, [Check("results folder", str(rd), [f"{rd}: no such folder"])])
    if prereg is None and not NAME_RE.match(rd.name):
        return AuditReport(
            rd, [Check("results folder", str(rd), [f"{rd}: not a results/<study> folder"])]
        )
    prereg_path = Path(prereg) if prereg is not None else _prereg_of(rd)
    fails = [f"{link}: links are not allowed in a results folder" for link in links_in(rd)]
    if os.path.realpath(results_dir_for(prereg_path)) != os.path.realpath(rd):
        fails.append(
            f"{rd}: not the results folder of {prereg_path} (that is "
            f"{results_dir_for(prereg_path)})"
        )
    checks = [Check("results folder", f"{rd} (no links)", fails)]

    # 2. lock chain
    lock_path = lock_path_for(prereg_path)
    lock = _guarded(checks, "lock", lock_path, _check_lock, lock_path, checks)

    # 3. pre-registration, pins, published hash
    study = _guarded(
        checks, "pre-registration", prereg_path, _check_prereg, prereg_path, lock, checks
    )
    # the report is re-rendered beside the other checks, which do not read what it computes
    # (most of the audit's time: its figures); it is still listed last
    with Forked(_report_checks, rd, study) as report:
        if expected_hash is not None:
            checks.append(
                _guarded(
                    checks,
                    "published hash",
                    lock_path,
                    _check_published,
                    expected_hash,
                    lock,
                    lock_path,
                )
            )

        records = _guarded(checks, "artifacts", rd / "provenance", _records, rd, checks)
        environment = _guarded(checks, "environment", rd, _check_environment, records)
        first = _guarded(checks, "artifacts", rd / "provenance", _first_artifact, records)

        # 4. git
        checks.append(
            _guarded(
                checks, "git", lock_path, _check_git, prereg_path, lock_path, lock, first, no_git
            )
        )

        if lock is not None and (tsa_cert is not None or lock.timestamps):
            checks.append(
                _guarded(
                    checks,
                    "trusted timestamps",
                    lock_path,
                    _check_timestamps,
                    lock,
                    tsa_cert,
                    first,
                )
            )

        # 5-8. files, inputs, production head, code
        if records is not None:
            checks.extend(
                _guarded(
                    checks, "artifacts", rd, _check_artifacts, rd, records, lock, lock_path, first
                )
                or []
            )
            checks.append(_guarded(checks, "code", rd / "provenance", _check_code, records))
            checks.append(_guarded(checks, "runtime", rd / "provenance", _check_runtime, records))
            checks.append(
                _guarded(checks, "run ledger", rd / "runs.jsonl", _check_ledger, rd, lock)
            )
            checks.append(_guarded(checks, "confirmatory", rd, _check_confirmatory, rd, records))

        # 9-11. realised design, verdicts, report
        if study is not None:
            checks.append(
                _guarded(
                    checks, "realised design", rd / "verdict.json", _check_realised, rd, study, lock
                )
            )
        checks.extend(
            _guarded(checks, "verdicts", rd, _check_verdicts, rd, study, prereg_path) or []
        )
        checks.extend(report.result())
        return AuditReport(rd, [c for c in (environment, *checks) if c is not None])


def _report_checks(rd: Path, study: Study | None) -> list[Check]:
    """The report's check, or the failed check naming a damaged input it read."""
    if study is None:
        return []
    checks: list[Check] = []
    check = _guarded(checks, "report", rd / "report.html", _check_report, rd, study)
    return [*checks, *([check] if check is not None else [])]


#: what a damaged file can raise while a check reads it
_DAMAGE = (KeyError, TypeError, ValueError, AttributeError, IndexError, OSError, DamagedFileError)


def _guarded(checks: list[Check], name: str, where: Path, fn: Any, *args: Any) -> Any:
    """``fn(*args)``; a damaged input it reads (a JSON list where an object belongs, text where
    a number belongs, …) becomes a failed check naming the file, never a crashed audit."""
    try:
        return fn(*args)
    except _DAMAGE as exc:
        checks.append(
            Check(
                name,
                str(where),
                [
                    f"{where}: damaged or unreadable input ({type(exc).__name__}: {exc}); restore "
                    "it from the run that wrote it, or re-run that stage"
                ],
            )
        )
        return None


def _check_lock(lock_path: Path, checks: list[Check]) -> Lock | None:
    try:
        lock = read_lock(lock_path)
    except TailgateError as exc:
        checks.append(Check("lock chain", str(lock_path), [str(exc)]))
        return None
    if lock is None:
        checks.append(Check("lock chain", str(lock_path), [f"{lock_path}: no lock file"]))
        return None
    try:
        lock.verify()
    except LockIntegrityError as exc:
        checks.append(Check("lock chain", str(lock_path), [f"{lock_path}: {exc}"]))
        return None
    checks.append(
        Check(
            "lock chain",
            f"{lock_path}: {len(lock.chain)} chain entries, hashes and links verified",
            notes=_amendment_notes(lock),
        )
    )
    return lock


def _check_prereg(prereg_path: Path, lock: Lock | None, checks: list[Check]) -> Study | None:
    from tailgate.prereg.pins import pin_changes, pins_of

    try:
        study = load(prereg_path)
    except TailgateError as exc:
        checks.append(Check("pre-registration", str(prereg_path), [str(exc)]))
        return None
    fails = []
    if lock is not None:
        if study.canonical_hash != lock.head_hash:
            fails.append(
                f"{prereg_path}: differs from the lock's chain head (entry {lock.head['seq']}); "
                f"run 'tailgate verify {prereg_path}' for the field diff"
            )
        try:
            now = pins_of(study, import_rows=False, registered=lock.head_entry.get("pins", {}))
        except TailgateError as exc:
            fails.append(str(exc))
        else:
            for f in pin_changes(lock.head_entry.get("pins", {}), now):
                fails.append(
                    f"{prereg_path}: the input file of {f} differs from its pin in "
                    f"{lock.path.name} (edited, replaced or removed after it was registered)"
                )
    checks.append(
        Check("pre-registration", f"{prereg_path} hashes to {study.canonical_hash}", fails)
    )
    return study


def _check_published(expected: str, lock: Lock | None, lock_path: Path) -> Check:
    h = expected.strip().lower()
    entry = None
    if lock is not None:
        entry = next((e for e in lock.chain if h in (e["entry_hash"], e["canonical_hash"])), None)
    if entry is None:
        return Check(
            "published hash",
            f"expected {expected}",
            [
                f"{lock_path}: no chain entry has the published hash {expected} (the registration "
                "was replaced or rewritten after the receipt was published)"
            ],
        )
    return Check(
        "published hash",
        f"{expected} is entry {entry['seq']}; it and the {entry['seq']} entr"
        f"{'y' if entry['seq'] == 1 else 'ies'} before it verified",
    )


def _records(rd: Path, checks: list[Check]) -> list[Any] | None:
    from tailgate.provenance import PROVENANCE_DIR, iter_records

    try:
        return iter_records(rd)
    except ValueError as exc:
        checks.append(Check("artifacts", str(rd / PROVENANCE_DIR), [str(exc)]))
        return None


def _first_artifact(records: list[Any] | None) -> tuple[datetime, str] | None:
    """The earliest recorded artifact of any kind (a record's ``kind`` is not trusted)."""
    times = []
    for r in records or []:
        try:
            times.append((parse_time(str(r.content.get("created"))), str(r.path)))
        except (ValueError, TypeError):
            continue
    return min(times) if times else None


def _check_git(
    prereg_path: Path,
    lock_path: Path,
    lock: Lock | None,
    first: tuple[datetime, str] | None,
    no_git: bool,
) -> Check:
    fails: list[str] = []
    notes: list[str] = []
    if lock is not None and first is not None:
        first_time, first_path = first
        frozen = parse_time(lock.chain[0]["time"])
        if frozen > first_time:
            fails.append(
                f"{lock_path}: frozen at {lock.chain[0]['time']}, after the first artifact "
                f"{first_path} ({first_time.isoformat()})"
            )
        for e in lock.chain[1:]:
            if parse_time(e["time"]) > first_time and not e.get("data_existed"):
                fails.append(
                    f"{lock_path}: amendment {e['seq']} was made at {e['time']}, after the first "
                    f"artifact {first_path}, but records that no data existed"
                )
    from tailgate.prereg.gitreview import linked_registration, review

    fails.extend(linked_registration(prereg_path, lock_path))
    if no_git:
        notes.append(
            "git not consulted (--no-git): when the registration was committed relative to the "
            "data is unverified"
        )
        return Check("git", "skipped (--no-git): timing unverified", fails, notes)
    if repo_root(prereg_path) is None:
        fails.append(
            f"{prereg_path}: not in a git work tree, so nothing shows when it was registered. "
            "Fix: commit the pre-registration and its lock before collecting data (or audit with "
            "--no-git, which reports the timing as unverified)"
        )
        return Check("git", "no git work tree", fails, notes)
    reviewed = review(prereg_path, lock_path, lock)
    fails.extend(reviewed.failures)
    notes.extend(reviewed.notes)
    history = reviewed.history
    if history is None or lock is None:
        return Check("git", "the registration's git history", fails, notes)
    for e in lock.chain:
        found = history.introduced.get(e["entry_hash"])
        if found is None:
            continue
        commit, when = found
        notes.append(f"entry {e['seq']} first committed in {commit[:12]} at {when.isoformat()}")
        if first is None:
            continue
        if e["seq"] == 0 and when > first[0]:
            fails.append(
                f"{lock_path}: entry 0 was first committed in {commit[:12]} at "
                f"{when.isoformat()}, after the first artifact {first[1]} "
                f"({first[0].isoformat()}): the registration does not predate the data"
            )
        elif e["seq"] > 0 and when > first[0] and not e.get("data_existed"):
            fails.append(
                f"{lock_path}: amendment {e['seq']} was first committed in {commit[:12]} after "
                f"the first artifact {first[1]}, but records that no data existed"
            )
    detail = f"{len(history.versions)} committed version(s) of the lock (every branch and tag)"
    return Check("git", detail, fails, notes)


def _check_timestamps(
    lock: Lock, tsa_cert: str | Path | None, first: tuple[datetime, str] | None
) -> Check:
    from tailgate.prereg.timestamp import verify_tokens

    found = verify_tokens(lock, None if tsa_cert is None else Path(tsa_cert), first)
    detail = (
        f"tokens verified against {tsa_cert}"
        if tsa_cert is not None
        else "tokens listed, not verified (no --tsa-cert)"
    )
    return Check("trusted timestamps", detail, found.failures, found.notes)


def _amendment_notes(lock: Lock) -> list[str]:
    """One note per amendment, its changes derived from the snapshots (never its own list)."""
    from tailgate.prereg.lock import amendment_changes

    notes = []
    for previous, e in pairwise(lock.chain):
        changes = amendment_changes(previous, e)
        loosen = [c.field for c in changes if c.direction == "loosening"]
        decision = [c.field for c in changes if c.decision]
        notes.append(
            f"amendment {e['seq']} at {e['time']}"
            + (" after data existed" if e.get("data_existed") else " before any data was found")
            + f": {e.get('reason')!r}; decision fields changed: {', '.join(decision) or 'none'}"
            + (f"; loosening: {', '.join(loosen)}" if loosen else "")
            + ("; a deviation from the registered plan" if decision else "")
        )
    return notes


def _files(rd: Path) -> list[str]:
    """Every file (and link) under ``rd`` outside the skipped folders, relative, sorted. Every
    one must have a provenance record: a file nothing recorded (a report written beside the
    results, Snakemake's own ``--report``) fails the audit, so that nothing under the results
    folder reads as the study's output without being one."""
    out = []
    for dirpath, dirnames, filenames in os.walk(rd, followlinks=False):
        rel_dir = Path(dirpath).relative_to(rd)
        if rel_dir.parts and rel_dir.parts[0] in _SKIP_DIRS:
            continue
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in [*filenames, *links]:
            rel = (rel_dir / name).as_posix()
            if rel.split("/")[0] not in _SKIP_DIRS:
                out.append(rel)
    return sorted(out)


def _stray_logs(rd: Path) -> list[str]:
    """Files under ``logs/`` that are not rule logs (``*.log`` plain files): logs are not
    audited, so nothing else may hide there."""
    out = []
    for dirpath, dirnames, filenames in os.walk(rd / "logs", followlinks=False):
        for name in [
            *filenames,
            *(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))),
        ]:
            path = Path(dirpath) / name
            if path.is_symlink() or not name.endswith(LOG_SUFFIX):
                out.append(
                    f"{path}: not a rule log; logs/ is not audited and may hold only the rules' "
                    f"*{LOG_SUFFIX} files. Fix: move it out of the results folder (write "
                    "Snakemake's --report outside results/)"
                )
    return sorted(out)


def _check_artifacts(
    rd: Path,
    records: list[Any],
    lock: Lock | None,
    lock_path: Path,
    first: tuple[datetime, str] | None,
) -> list[Check]:
    from tailgate.provenance import RowsDigest, record_path, rows_digest

    checks: list[Check] = []
    by_path: dict[str, Any] = {}
    fails: list[str] = []
    for rec in records:
        rel = str(rec.content.get("path", ""))
        expected_record = record_path(rd / rel, rd)
        if expected_record.name != rec.record_file.name:
            fails.append(
                f"{rec.record_file}: record describes '{rel}', which belongs in "
                f"{expected_record.name} (record moved or swapped)"
            )
        by_path[rel] = rec
    files = _files(rd)
    fails.extend(_stray_logs(rd))
    hashes: dict[str, str] = {}
    for rel in files:
        rec = by_path.get(rel)
        f = rd / rel
        if f.is_symlink():
            continue  # reported by the results-folder check
        if rec is None:
            fails.append(
                f"{f}: no provenance record ({record_path(f, rd).name} is missing or was deleted)"
            )
            continue
        digest = sha256_file(f)
        hashes[rel] = digest
        if digest != rec.sha256:
            where = ""
            if "rows_digest" in rec.content:
                try:
                    old = RowsDigest(**rec.content["rows_digest"])
                    where = "; " + old.changed_rows(rows_digest(f))
                except Exception as exc:  # unreadable table: say so
                    where = f"; the table cannot be read ({type(exc).__name__})"
            fails.append(
                f"{f}: SHA-256 differs from its provenance record (edited or replaced after it "
                f"was recorded){where}"
            )
    for rel, rec in by_path.items():
        if rel not in hashes and not (rd / rel).is_file():
            fails.append(f"{rd / rel}: recorded in {rec.record_file.name} but missing")
    checks.append(
        Check(
            "artifacts",
            f"{len(files)} file(s) hashed against {len(records)} record(s) (the rules' "
            "*.log files under logs/ are not audited)",
            fails,
        )
    )
    checks.append(_check_inputs(rd, by_path, hashes, lock))
    checks.append(_check_heads(rd, by_path, lock, lock_path))
    detail = f"first artifact {first[1]}" if first else "no artifacts recorded"
    checks.append(Check("first artifact", detail))
    return checks


def _check_inputs(
    rd: Path, by_path: dict[str, Any], hashes: dict[str, str], lock: Lock | None
) -> Check:
    from tailgate.prereg.pins import project_root

    root = project_root(_prereg_of(rd))
    fails = []
    for rel, rec in sorted(by_path.items()):
        entry = None
        if lock is not None:
            head = rec.content.get("prereg", {}).get("lock_head", {})
            plan = rec.content.get("plan")
            if isinstance(plan, dict) and plan.get("name") == "registered":
                head = plan  # computed under entry 0: its inputs are the files entry 0 pinned
            entry = lock.entry_by_hash(str(head.get("entry_hash")))
        pinned = {}
        for p in (entry or {}).get("pins", {}).values():
            q = Path(os.path.expanduser(p["path"]))
            pinned[os.path.realpath(q if q.is_absolute() else root / q)] = p
        for inp in rec.content.get("inputs", []):
            irel = inp.get("artifact")
            if irel is None:
                q = Path(str(inp.get("path")))
                pin = pinned.get(os.path.realpath(q if q.is_absolute() else root / q))
                if pin is not None and pin.get("sha256") != inp.get("sha256"):
                    fails.append(
                        f"{rd / rel}: made from {inp.get('path')} with SHA-256 "
                        f"{str(inp.get('sha256'))[:12]}…, but the registration pins "
                        f"{pin['sha256'][:12]}… (the input file was not the registered one)"
                    )
                continue
            now = hashes.get(irel)
            if now is None:
                if not (rd / irel).is_file():
                    fails.append(f"{rd / rel}: its input {rd / irel} is missing")
            elif now != inp["sha256"]:
                fails.append(
                    f"{rd / rel}: its input {rd / irel} changed after it was produced "
                    f"(recorded {inp['sha256'][:12]}…, now {now[:12]}…)"
                )
    return Check("inputs", "recorded inputs: artifacts and pinned files", fails)


def _check_heads(rd: Path, by_path: dict[str, Any], lock: Lock | None, lock_path: Path) -> Check:
    fails: list[str] = []
    notes: list[str] = []
    if lock is None:
        fails.append(f"{lock_path}: no verified lock, so no artifact can be tied to a registration")
        return Check("chain head at production", "each record's lock entry and time", fails)
    times = [parse_time(e["time"]) for e in lock.chain]
    for rel, rec in sorted(by_path.items()):
        pre = rec.content.get("prereg", {})
        head = pre.get("lock_head", {})
        entry = lock.entry_by_hash(str(head.get("entry_hash")))
        f = rd / rel
        if entry is None:
            fails.append(
                f"{f}: produced under lock entry {head.get('seq')} "
                f"({str(head.get('entry_hash'))[:12]}…), which is not in the chain of "
                f"{lock_path.name} (truncated or replaced chain)"
            )
            continue
        if entry["canonical_hash"] != pre.get("canonical_hash"):
            fails.append(f"{f}: recorded pre-registration hash is not that of its lock entry")
            continue
        problem = _plan_problem(rel, rec.content.get("plan"), pre, lock)
        if problem:
            fails.append(f"{f}: {problem}")
            continue
        try:
            created = parse_time(str(rec.content.get("created")))
        except ValueError:
            fails.append(f"{f}: its record has no readable creation time")
            continue
        seq = entry["seq"]
        if created < times[seq] or (seq + 1 < len(times) and created >= times[seq + 1]):
            fails.append(
                f"{f}: created {rec.content.get('created')}, when entry {seq} was not the "
                "chain head"
            )
        elif seq < len(lock.chain) - 1:
            notes.append(f"{f}: produced under entry {seq}, before a later amendment")
    return Check("chain head at production", "each record's lock entry and time", fails, notes[:10])


def _plan_problem(rel: str, plan: Any, pre: dict[str, Any], lock: Lock) -> str | None:
    """Why a record's ``plan`` (:mod:`tailgate.stages.plan`) does not fit where its artifact
    lies: the registered plan's folder holds what was computed under entry 0 of the lock, the
    rest what was computed under the chain head the record names (None: it fits)."""
    from tailgate.stages.plan import BRANCH_DIR, HEAD, REGISTERED

    if rel.split("/")[0] == BRANCH_DIR:
        first = lock.chain[0]
        ok = (
            isinstance(plan, dict)
            and plan.get("name") == REGISTERED
            and plan.get("entry_hash") == first["entry_hash"]
            and plan.get("canonical_hash") == first["canonical_hash"]
        )
        if ok and len(lock.chain) > 1:
            return None
        return (
            "lies in the registered plan's folder, but its record does not say it was computed "
            "under entry 0 of the lock (moved there from the main results, or written by hand)"
        )
    if plan is None:  # a record made before records named their plan
        return None
    if (
        not isinstance(plan, dict)
        or plan.get("name") != HEAD
        or plan.get("canonical_hash") != pre.get("canonical_hash")
    ):
        return (
            f"its record says it was computed under plan {plan!r:.80}, not the chain head it "
            f"names (a registered-plan artifact belongs in {BRANCH_DIR}/)"
        )
    return None


def _check_ledger(rd: Path, lock: Lock | None) -> Check:
    """The run ledger's lines follow each other (its bytes are checked with every artifact),
    and it still holds the run each amendment recorded as its head."""
    from tailgate.ledger import missing_heads, read_ledger, verify_ledger

    problems = verify_ledger(rd)
    problems += missing_heads(rd, lock.chain if lock is not None else [])
    runs = 0 if problems else len(read_ledger(rd))
    return Check(
        "run ledger",
        f"{runs} run(s) in a chain of line hashes, holding every amendment's recorded head",
        problems,
    )


def _check_confirmatory(rd: Path, records: list[Any]) -> Check:
    """No artifact was made by an exploratory run, and no exploratory run of the study came
    before its confirmatory ones (its data were seen before the registration was committed;
    :mod:`tailgate.prereg.committed`)."""
    from tailgate.ledger import LEDGER, read_ledger
    from tailgate.prereg.committed import EXPLORATORY

    fails: list[str] = []
    made = [str(r.path) for r in records if r.content.get("mode") == EXPLORATORY]
    if made:
        fails.append(
            f"{rd}: {len(made)} artifact(s) were made by an exploratory run (e.g. "
            f"{', '.join(made[:3])}): the registration was not required to be committed, so "
            "they are not a confirmatory result. Fix: commit the registration and run the "
            "workflow again (it re-runs every job)"
        )
    runs = [
        line.get("run")
        for line in read_ledger(rd)
        if isinstance(line, dict) and line.get("mode") == EXPLORATORY
    ]
    if runs and not made:
        fails.append(
            f"{rd / LEDGER}: run(s) {', '.join(map(str, runs))} of this study were exploratory: "
            "its data were seen before the registration was committed, so a later run is not a "
            "confirmatory test of the registered plan"
        )
    detail = "every artifact made by a run of the committed registration"
    return Check("confirmatory", detail, fails)


def _mode_of(rd: Path, artifact: Path) -> str:
    """The run mode an artifact's provenance record names (confirmatory when it names none)."""
    from tailgate.prereg.committed import CONFIRMATORY
    from tailgate.provenance import record_path

    try:
        content = json.loads(record_path(artifact, rd).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return CONFIRMATORY  # a missing or damaged record fails the artifact check
    return str(content.get("mode", CONFIRMATORY)) if isinstance(content, dict) else CONFIRMATORY


def _check_code(records: list[Any]) -> Check:
    from tailgate.code import code_digest
    from tailgate.ledger import LEDGER

    groups: dict[str | None, list[str]] = {}
    for r in records:
        if str(r.path) == LEDGER:  # re-recorded by every run, whatever code ran its jobs
            continue
        digest = (r.content.get("code") or {}).get("digest")
        groups.setdefault(digest, []).append(str(r.path))
    fails, notes = [], []
    if None in groups:
        paths = groups.pop(None)
        fails.append(
            f"{len(paths)} record(s) carry no code digest, e.g. {paths[0]} (made by an older "
            "tailgate or written by hand); re-run the workflow"
        )
    if len(groups) > 1:
        parts = [
            f"{d[:12]}… ({len(p)} file(s), e.g. {p[0]})"
            for d, p in sorted(groups.items(), key=lambda kv: -len(kv[1]))
        ]
        fails.append(
            "the study's artifacts were made by different code: " + "; ".join(parts) + ". Re-run "
            "the whole workflow with one version ('snakemake --forceall'), or compare with "
            "'tailgate audit --reproduce'"
        )
    mine = code_digest()
    if groups and set(groups) != {mine}:
        notes.append(
            f"made by code {', '.join(d[:12] + '…' for d in groups if d)}, not the auditor's "
            f"{mine[:12]}…; 'tailgate audit --reproduce' re-runs the stages with the auditor's code"
        )
    detail = f"{len(records)} record(s), {len(groups)} code digest(s)"
    return Check("code", detail, fails, notes)


def _check_runtime(records: list[Any]) -> Check:
    from tailgate.prereg.runtime import check_runtime

    fails, notes = check_runtime(records)
    detail = "modules loaded, compiled files and import hooks of every job"
    return Check("runtime", detail, fails, notes)


def _check_realised(rd: Path, study: Study, lock: Lock | None) -> Check:
    from tailgate.prereg.deviations import (
        amendment_log,
        design_deviations,
        generated_rows,
        realised_design,
        run_deviations,
    )

    verdict_path = rd / "verdict.json"
    if not verdict_path.is_file():
        return Check("realised design", "no verdict.json to check")
    fails: list[str] = []
    fits = []
    for f in sorted((rd / "fits").glob("*/*/*.json")):
        try:
            fits.append(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            fails.append(f"{f}: cannot be read ({exc})")
    try:
        verdict = json.loads(verdict_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Check("realised design", str(verdict_path), [f"{verdict_path}: {exc}"])
    if not isinstance(verdict, dict):
        return Check(
            "realised design",
            str(verdict_path),
            [
                f"{verdict_path}: damaged (a JSON {type(verdict).__name__}, not the verdict "
                "document)"
            ],
        )
    for f in sorted((rd / "fits").glob("*/*/*.json")):  # one damaged fit is named, not a crash
        try:
            realised_design(study, [json.loads(f.read_text(encoding="utf-8"))])
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            fails.append(f"{f}: damaged fit document ({type(exc).__name__}: {exc})")
    if fails:
        return Check("realised design", "the fits", fails)
    shards = [
        rd / "generations" / c["name"] / f"shard-{k}.parquet"
        for c in study.conditions()
        for k in range(int(study.data["generation"]["shards"]))
    ]
    present = [s for s in shards if s.is_file()]
    try:
        generated = generated_rows(present) if present else None
    except (OSError, ValueError) as exc:
        return Check("realised design", "the generations", [f"a generation shard: {exc}"])
    realised = realised_design(study, fits, generated)
    expected = (
        run_deviations(_mode_of(rd, verdict_path))
        + design_deviations(realised)
        + amendment_log(lock)[1]
    )
    recorded = verdict.get("deviations", [])
    for d in expected:
        if d not in recorded:
            fails.append(f"{verdict_path}: does not list the deviation: {d['what']}")
    for d in recorded:
        if d not in expected:
            fails.append(f"{verdict_path}: lists a deviation the audit does not derive: {d}")
    if verdict.get("realised_design") != json.loads(json.dumps(realised)):
        fails.append(f"{verdict_path}: its realised design differs from the fits and generations")
    detail = f"{len(expected)} deviation(s) derived from the lock, the fits and the generations"
    return Check("realised design", detail, fails, [d["what"] for d in expected][:10])


def _check_verdicts(rd: Path, study: Study | None, prereg_path: Path) -> list[Check]:
    load_builtin_checks()
    if study is None:
        return [Check("verdicts", "not re-derived", [f"{prereg_path}: cannot load the study"])]
    checks = []
    for name, fn in sorted(verdict_checks().items()):
        try:
            fails = list(fn(rd, study))
        except Exception as exc:  # a crashing check is a failed check, not a crashed audit
            fails = [f"{name}: re-derivation raised {type(exc).__name__}: {exc}"]
        detail = "re-derived from stored statistics"
        if name == "protocol" and not ((rd / "verdict.json").exists() or (rd / "gates").exists()):
            detail = "verdict re-derivation is not available: no recorded verdicts in this folder"
        elif name == "protocol" and not study.has_protocol:
            detail = "no protocol registered: checked that no H1 verdict or gates are recorded"
        elif name == "registered plan":
            detail = _registered_plan_detail(study)
        checks.append(Check(f"verdicts: {name}", detail, fails))
    return checks


def _registered_plan_detail(study: Study) -> str:
    from tailgate.stages.branch import registered_branch

    try:
        branch = registered_branch(study, "")
    except TailgateError as exc:  # a damaged lock: the check itself names the file
        return f"not re-derived: {exc}"
    if branch is None:
        return "no amendment: the chain head is the registered plan"
    own = len(branch.gates_targets()) + len(branch.analysis_targets())
    return "the outcome under entry 0 re-derived beside the amended one" + (
        f", {own} document(s) of its branch re-derived under entry 0" if own else ""
    )


def _check_environment(records: list[Any] | None) -> Check:
    from tailgate.environment import environment_check

    return environment_check(records or [])


def _check_report(rd: Path, study: Study) -> Check:
    from tailgate.prereg.compare import compare_made, compared_exactly
    from tailgate.stages.report import rerender, rerendered

    if not (rd / "report.html").is_file():
        return Check("report", "no report.html to check")
    # pixels are compared only byte for byte: rasterise when some output is compared so
    pixels = any(compared_exactly(rd, rel) for rel in rerendered(study).values())
    with tempfile.TemporaryDirectory(prefix="tailgate-audit-") as tmp:
        try:
            made = rerender(rd, study, Path(tmp), pixels=pixels)
        except Exception as exc:  # the stored statistics cannot make a report: say so
            return Check("report", "re-rendered", [f"{rd}: cannot re-render the report ({exc})"])
        found = compare_made(
            rd, made, "differs from the report re-rendered from the stored verdict and statistics"
        )
    return Check(
        "report", f"re-rendered from stored statistics, compared {found.mode}", found.failures
    )
