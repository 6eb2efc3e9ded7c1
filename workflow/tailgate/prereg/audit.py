"""``tailgate audit``: re-verify a study's results directory (DESIGN: "Provenance").

The audit checks, and reports each check by name:

1. the lock's amendment chain (entry hashes, links, recorded length and head);
2. the pre-registration file against the chain head, and optionally the registered hash against
   one published elsewhere (``expected_hash``);
3. every artifact against its provenance record (SHA-256; for tables, which rows changed), every
   file without a record and every record without a file;
4. that each artifact was produced under the entry that was the chain head at the time, and that
   recorded inputs inside the results directory still have the recorded hashes;
5. that the lock predates the first data artifact (lock time, and git history when available);
6. the recorded verdicts, re-derived by the functions registered with
   :func:`register_verdict_check`; the protocol workflow's check
   (:func:`tailgate.stages.audit.verdict_check`) is registered by every audit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tailgate.errors import TailgateError
from tailgate.prereg.canonical import sha256_file
from tailgate.prereg.gitinfo import first_commit_time
from tailgate.prereg.lock import Lock, LockIntegrityError, parse_time, read_lock
from tailgate.prereg.study import NAME_RE, Study, load, lock_path_for

__all__ = [
    "CANNOT_PROVE",
    "AuditReport",
    "Check",
    "audit",
    "register_verdict_check",
    "verdict_checks",
]

CANNOT_PROVE = (
    "What an audit cannot prove: that the data came from the registered models and prompts, or "
    "that the lock and the records were not rewritten together; only a registered hash published "
    "elsewhere before the data (--expected-hash) anchors the chain."
)

VerdictCheck = Callable[[Path, Study], list[str]]
_VERDICT_CHECKS: dict[str, VerdictCheck] = {}
_SKIP_DIRS = {"provenance", "logs", ".snakemake"}


def register_verdict_check(name: str, fn: VerdictCheck) -> None:
    """Register ``fn(results_dir, study) -> list of failure strings`` under ``name``."""
    _VERDICT_CHECKS[name] = fn


def _register_protocol_check() -> None:
    """Register the protocol workflow's re-derivation of every gate and H1 verdict
    (:func:`tailgate.stages.audit.verdict_check`) unless a check of that name exists."""
    if "protocol" not in _VERDICT_CHECKS:
        from tailgate.stages.audit import verdict_check

        register_verdict_check("protocol", verdict_check)


def verdict_checks() -> dict[str, VerdictCheck]:
    """The registered verdict re-derivations (a copy)."""
    return dict(_VERDICT_CHECKS)


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
        return out


def _locate_prereg(results_dir: Path, prereg: str | Path | None) -> Path:
    if prereg is not None:
        return Path(prereg)
    return results_dir.resolve().parent.parent / "preregistrations" / f"{results_dir.name}.yaml"


def audit(
    results_dir: str | Path,
    *,
    prereg: str | Path | None = None,
    expected_hash: str | None = None,
) -> AuditReport:
    """Audit ``results_dir`` (``results/<study>``) against its pre-registration and lock."""
    rd = Path(results_dir)
    checks: list[Check] = []
    if not rd.is_dir():
        return AuditReport(rd, [Check("results", f"{rd}", [f"{rd}: no such results directory"])])
    if not NAME_RE.match(rd.name) and prereg is None:
        checks.append(Check("results", str(rd), [f"{rd}: not a results/<study> directory"]))
        return AuditReport(rd, checks)
    prereg_path = _locate_prereg(rd, prereg)

    # 1. lock chain
    lock: Lock | None = None
    lock_path = lock_path_for(prereg_path)
    try:
        lock = read_lock(lock_path)
    except TailgateError as exc:
        checks.append(Check("lock chain", str(lock_path), [str(exc)]))
    else:
        if lock is None:
            checks.append(Check("lock chain", str(lock_path), [f"{lock_path}: no lock file"]))
        else:
            try:
                lock.verify()
                checks.append(
                    Check(
                        "lock chain",
                        f"{lock_path}: {len(lock.chain)} chain entries, hashes and links verified",
                        notes=_amendment_notes(lock),
                    )
                )
            except LockIntegrityError as exc:
                checks.append(Check("lock chain", str(lock_path), [f"{lock_path}: {exc}"]))
                lock = None if not lock.chain else lock

    # 2. pre-registration vs chain head; published hash
    study: Study | None = None
    try:
        study = load(prereg_path)
    except TailgateError as exc:
        checks.append(Check("pre-registration", str(prereg_path), [str(exc)]))
    if study is not None and lock is not None:
        fails = []
        if study.canonical_hash != lock.head_hash:
            fails.append(
                f"{prereg_path}: differs from the lock's chain head (entry {lock.head['seq']}); "
                f"run 'tailgate verify {prereg_path}' for the field diff"
            )
        checks.append(
            Check("pre-registration", f"{prereg_path} hashes to {study.canonical_hash}", fails)
        )
    if expected_hash is not None:
        fails = []
        registered = lock.chain[0]["canonical_hash"] if lock is not None and lock.chain else None
        if registered != expected_hash.strip().lower():
            fails.append(
                f"{lock_path}: registered canonical hash {registered} does not equal the "
                f"published hash {expected_hash}"
            )
        checks.append(Check("published hash", f"expected {expected_hash}", fails))

    # 3-5. artifacts
    checks.extend(_check_artifacts(rd, lock, lock_path))

    # 6. verdicts
    _register_protocol_check()
    if not _VERDICT_CHECKS:
        checks.append(
            Check("verdicts", "verdict re-derivation is not available (no checks registered)")
        )
    elif study is None:
        checks.append(
            Check("verdicts", "not re-derived", [f"{prereg_path}: cannot load the study"])
        )
    else:
        for name, fn in sorted(_VERDICT_CHECKS.items()):
            try:
                fails = list(fn(rd, study))
            except Exception as exc:  # a crashing check is a failed check, not a crashed audit
                fails = [f"{name}: re-derivation raised {type(exc).__name__}: {exc}"]
            detail = "re-derived from stored statistics"
            if name == "protocol" and not (
                (rd / "verdict.json").exists() or (rd / "gates").exists()
            ):
                detail = (
                    "verdict re-derivation is not available: no recorded verdicts in this directory"
                )
            checks.append(Check(f"verdicts: {name}", detail, fails))
    return AuditReport(rd, checks)


def _amendment_notes(lock: Lock) -> list[str]:
    notes = []
    for e in lock.chain[1:]:
        loosen = [c["field"] for c in e.get("changes", []) if c.get("class") == "loosening"]
        decision = [c["field"] for c in e.get("changes", []) if c.get("decision")]
        notes.append(
            f"amendment {e['seq']} at {e['time']}"
            + (" after data existed" if e.get("data_existed") else " before any data")
            + f": {e.get('reason')!r}; decision fields changed: {', '.join(decision) or 'none'}"
            + (f"; loosening: {', '.join(loosen)}" if loosen else "")
        )
    return notes


def _check_artifacts(rd: Path, lock: Lock | None, lock_path: Path) -> list[Check]:
    from tailgate.provenance import (
        PROVENANCE_DIR,
        RowsDigest,
        iter_records,
        record_path,
        rows_digest,
    )

    checks: list[Check] = []
    try:
        records = iter_records(rd)
    except ValueError as exc:
        return [Check("artifacts", str(rd / PROVENANCE_DIR), [str(exc)])]
    by_path = {}
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
    files = sorted(
        p.relative_to(rd).as_posix()
        for p in rd.rglob("*")
        if p.is_file() and p.relative_to(rd).parts[0] not in _SKIP_DIRS
    )
    hashes: dict[str, str] = {}
    for rel in files:
        rec = by_path.get(rel)
        f = rd / rel
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
            fails.append(f"{f}: SHA-256 differs from its provenance record{where}")
    for rel, rec in by_path.items():
        if rel not in hashes and not (rd / rel).is_file():
            fails.append(f"{rd / rel}: recorded in {rec.record_file.name} but missing")
    checks.append(
        Check("artifacts", f"{len(files)} file(s) hashed against {len(records)} record(s)", fails)
    )

    # inputs recorded inside the results directory
    fails = []
    for rel, rec in by_path.items():
        for inp in rec.content.get("inputs", []):
            irel = inp.get("artifact")
            if irel is None:
                continue  # outside the results directory (e.g. the pre-registration)
            now = hashes.get(irel)
            if now is None:
                if not (rd / irel).is_file():
                    fails.append(f"{rd / rel}: its input {rd / irel} is missing")
            elif now != inp["sha256"]:
                fails.append(
                    f"{rd / rel}: its input {rd / irel} changed after it was produced "
                    f"(recorded {inp['sha256'][:12]}…, now {now[:12]}…)"
                )
    checks.append(Check("inputs", "recorded input hashes inside the results directory", fails))

    # produced under the chain head of the time
    fails = []
    notes = []
    if lock is None:
        fails.append(f"{lock_path}: no verified lock, so no artifact can be tied to a registration")
    else:
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
            created = parse_time(str(rec.content.get("created")))
            seq = entry["seq"]
            if created < times[seq] or (seq + 1 < len(times) and created >= times[seq + 1]):
                fails.append(
                    f"{f}: created {rec.content.get('created')}, when entry {seq} was not the "
                    "chain head"
                )
            elif seq < len(lock.chain) - 1:
                notes.append(f"{f}: produced under entry {seq}, before a later amendment")
    checks.append(
        Check("chain head at production", "each record's lock entry and time", fails, notes[:10])
    )

    # lock predates the first data artifact
    fails, notes = [], []
    data_times = sorted(
        (parse_time(str(r.content.get("created"))), r.path)
        for r in by_path.values()
        if r.kind == "data"
    )
    if lock is not None and data_times:
        first, first_path = data_times[0]
        frozen = parse_time(lock.chain[0]["time"])
        if frozen > first:
            fails.append(
                f"{lock_path}: frozen at {lock.chain[0]['time']}, after the first data artifact "
                f"{rd / first_path} ({first.isoformat()})"
            )
        committed = first_commit_time(lock_path)
        if committed is None:
            notes.append("git history not available for the lock: order checked by recorded times")
        elif committed > first:
            fails.append(
                f"{lock_path}: first committed {committed.isoformat()}, after the first data "
                f"artifact {rd / first_path}"
            )
        else:
            notes.append(f"lock first committed {committed.isoformat()}")
    detail = (
        f"first data artifact {data_times[0][1]}" if data_times else "no data artifacts recorded"
    )
    checks.append(Check("lock before data", detail, fails, notes))
    return checks
