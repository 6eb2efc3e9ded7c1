"""The lock file and its amendment chain (DESIGN: "Lock", "Amendments").

``<stem>.lock.json`` beside a pre-registration holds a hash chain of entries. Entry 0 is the
freeze; every later entry is an amendment. Each entry carries the canonical snapshot of the
pre-registration it registers (so a later diff can name fields), its canonical and raw hashes,
the derived design, the pins of the local files it names (:mod:`tailgate.prereg.pins`), versions
and the digest of the code (:mod:`tailgate.code`), UTC time, git state, whether data already
existed (:mod:`tailgate.prereg.evidence`), and
``previous_entry_hash``; ``entry_hash`` is the SHA-256 of the canonical JSON of everything else
in the entry. The lock also records ``chain_length`` and ``head`` so a truncated chain is
detected.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tailgate import __version__
from tailgate.code import code_digest
from tailgate.errors import EXIT_REFUSED, DamagedFileError, InputError, TailgateError
from tailgate.files.atomic import write_json
from tailgate.files.safe_read import load_json
from tailgate.prereg.canonical import canonical_hash
from tailgate.prereg.diff import UNCLASSIFIED, Change, diff
from tailgate.prereg.pins import pin_changes
from tailgate.prereg.schema import SCHEMA_VERSION

__all__ = [
    "LOCK_VERSION",
    "Lock",
    "LockIntegrityError",
    "amendment_changes",
    "make_entry",
    "read_lock",
    "utc_now",
    "write_lock",
]

LOCK_VERSION = 1


class LockIntegrityError(TailgateError):
    """The lock's chain does not verify; the message names the entry and the fault (exit 3)."""

    exit_code = EXIT_REFUSED


def utc_now() -> str:
    """Current UTC time, ISO 8601 with microseconds and a ``Z``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def tool_versions() -> dict[str, str]:
    return {"tailgate": __version__, "python": platform.python_version()}


def entry_hash(entry: dict[str, Any]) -> str:
    """SHA-256 over the entry's content (which includes ``previous_entry_hash``)."""
    return canonical_hash({k: v for k, v in entry.items() if k != "entry_hash"})


def make_entry(
    *,
    seq: int,
    kind: str,
    previous_entry_hash: str | None,
    snapshot: dict[str, Any],
    raw_hash: str,
    derived: dict[str, Any],
    data_existed: bool,
    git: dict[str, Any] | None,
    reason: str | None = None,
    changes: list[dict[str, Any]] | None = None,
    pins: dict[str, Any] | None = None,
    ledger: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A new chain entry with its ``entry_hash`` (``pins``: :mod:`tailgate.prereg.pins`;
    ``ledger``: an amendment's view of the run ledger, :func:`tailgate.runs.ledger.ledger_head`)."""
    entry: dict[str, Any] = {
        "seq": seq,
        "type": kind,
        "previous_entry_hash": previous_entry_hash,
        "canonical_hash": canonical_hash(snapshot),
        "raw_hash": raw_hash,
        "schema_version": SCHEMA_VERSION,
        "tool_versions": {**tool_versions(), "code": code_digest()},
        "time": utc_now(),
        "git": git,
        "data_existed": data_existed,
        "derived": derived,
        "pins": pins or {},
        "prereg": snapshot,
    }
    if kind == "amendment":
        entry["reason"] = reason
        entry["changes"] = changes or []
        entry["ledger_head"] = ledger
    entry["entry_hash"] = entry_hash(entry)
    return entry


def amendment_changes(previous: dict[str, Any], entry: dict[str, Any]) -> list[Any]:
    """The changes ``entry`` makes to ``previous`` (:class:`tailgate.prereg.diff.Change`): the
    field diff of their snapshots, then each pinned input file that differs. Derived from the
    entries' content every time, never read from the ``changes`` an amendment lists about
    itself, so a forged list cannot hide a changed decision rule."""
    out = diff(previous.get("prereg") or {}, entry.get("prereg") or {})
    old_pins, new_pins = previous.get("pins") or {}, entry.get("pins") or {}
    for f in pin_changes(old_pins, new_pins):
        old, new = old_pins.get(f), new_pins.get(f)
        kind = "added" if old is None else "removed" if new is None else "changed"
        out.append(Change(f"pins.{f}", old, new, kind, UNCLASSIFIED, True))
    return out


@dataclass(frozen=True)
class Lock:
    """A lock file's content: ``chain`` (entries, oldest first), recorded length and head, and
    the trusted timestamps of entries (entry hash → tokens, :mod:`tailgate.prereg.timestamp`;
    kept outside the entries, so adding one changes no hash)."""

    path: Path
    study: str
    chain: list[dict[str, Any]]
    chain_length: int
    head: dict[str, Any]
    timestamps: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def head_entry(self) -> dict[str, Any]:
        return self.chain[-1]

    @property
    def head_hash(self) -> str:
        """Canonical hash of the pre-registration at the chain head."""
        return str(self.head["canonical_hash"])

    def verify(self) -> None:
        """Raise :class:`LockIntegrityError` unless the chain is whole and every hash holds."""
        name = self.path.name
        if not self.chain:
            raise LockIntegrityError(f"{name}: the chain is empty")
        previous = None
        for i, entry in enumerate(self.chain):
            if not isinstance(entry, dict):
                raise LockIntegrityError(
                    f"{name}: entry {i} is damaged (a JSON {type(entry).__name__}, not an object)"
                )
            try:
                parse_time(str(entry.get("time")))
            except (TypeError, ValueError):
                raise LockIntegrityError(
                    f"{name}: entry {i} has an unreadable time {entry.get('time')!r}"
                ) from None
            if entry.get("seq") != i:
                raise LockIntegrityError(f"{name}: entry {i} has seq {entry.get('seq')!r}")
            if entry.get("previous_entry_hash") != previous:
                raise LockIntegrityError(
                    f"{name}: entry {i} does not link to entry {i - 1} "
                    "(previous_entry_hash differs)"
                )
            if entry_hash(entry) != entry.get("entry_hash"):
                raise LockIntegrityError(f"{name}: entry {i} was altered (its entry_hash differs)")
            if canonical_hash(entry.get("prereg")) != entry.get("canonical_hash"):
                raise LockIntegrityError(
                    f"{name}: entry {i}'s snapshot does not match its canonical_hash"
                )
            previous = entry["entry_hash"]
        if self.chain_length != len(self.chain):
            raise LockIntegrityError(
                f"{name}: the chain holds {len(self.chain)} entries but the lock records "
                f"chain_length {self.chain_length} (truncated or extended chain)"
            )
        last = self.chain[-1]
        if (
            self.head.get("seq") != last["seq"]
            or self.head.get("entry_hash") != last["entry_hash"]
            or self.head.get("canonical_hash") != last["canonical_hash"]
        ):
            raise LockIntegrityError(
                f"{name}: the recorded head (entry {self.head.get('seq')}) is not the last "
                f"entry of the chain (entry {last['seq']}): the chain was truncated or edited"
            )

    def receipt(self, seq: int | None = None) -> str:
        """The one-line receipt of entry ``seq`` (default: the head), meant to be published."""
        e = self.chain[-1 if seq is None else seq]
        head = e.get("ledger_head")
        runs = (
            f" runs={head.get('runs')}:{str(head.get('line_sha256'))[:16]}"
            if isinstance(head, dict)
            else ""
        )
        return (
            f"tailgate receipt: study={self.study} entry={e['seq']} "
            f"entry_hash={e['entry_hash']} canonical_hash={e['canonical_hash']} time={e['time']}"
            + runs
        )

    def entry_by_hash(self, entry_hash_: str) -> dict[str, Any] | None:
        return next((e for e in self.chain if e["entry_hash"] == entry_hash_), None)

    def to_json(self) -> dict[str, Any]:
        out = {
            "lock_version": LOCK_VERSION,
            "study": self.study,
            "chain_length": len(self.chain),
            "head": _head(self.chain),
            "chain": self.chain,
        }
        if self.timestamps:  # absent when none: locks without tokens keep their bytes
            out["timestamps"] = self.timestamps
        return out


def _head(chain: list[dict[str, Any]]) -> dict[str, Any]:
    last = chain[-1]
    return {
        "seq": last["seq"],
        "entry_hash": last["entry_hash"],
        "canonical_hash": last["canonical_hash"],
        "time": last["time"],
    }


def new_lock(
    path: Path,
    study: str,
    chain: list[dict[str, Any]],
    timestamps: dict[str, list[dict[str, Any]]] | None = None,
) -> Lock:
    return Lock(
        path=path,
        study=study,
        chain=chain,
        chain_length=len(chain),
        head=_head(chain),
        timestamps=dict(timestamps or {}),
    )


def write_lock(lock: Lock) -> None:
    """Write the lock atomically."""
    write_json(lock.path, lock.to_json())


def read_lock(path: str | Path) -> Lock | None:
    """The lock at ``path``, ``None`` if absent; :class:`InputError` if it is not a lock file."""
    p = Path(path)
    try:
        obj = load_json(p)
    except FileNotFoundError:
        return None
    except DamagedFileError as exc:
        raise InputError(
            f"{exc} Fix: restore the lock from version control (git checkout -- {p})."
        ) from None
    try:
        if obj.get("lock_version") != LOCK_VERSION:
            raise ValueError(f"lock_version {obj.get('lock_version')!r}")
        for i, entry in enumerate(obj["chain"]):
            if not isinstance(entry, dict):
                raise ValueError(f"chain entry {i} is a JSON {type(entry).__name__}, not an object")
        stamps = obj.get("timestamps", {})
        if not isinstance(stamps, dict) or not all(
            isinstance(v, list) and all(isinstance(t, dict) for t in v) for v in stamps.values()
        ):
            raise ValueError("timestamps is not a map of entry hashes to lists of tokens")
        return Lock(
            path=p,
            study=str(obj["study"]),
            chain=list(obj["chain"]),
            chain_length=int(obj["chain_length"]),
            head=dict(obj["head"]),
            timestamps={str(k): list(v) for k, v in stamps.items()},
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(
            f"{p}: not a readable tailgate lock file ({exc}). Fix: restore it from version "
            f"control, or delete it and run 'tailgate freeze' again if no data exists yet."
        ) from None
