"""Findings of an audit: one :class:`Check` per thing examined, the :class:`AuditReport` of them
all, what no audit can prove, and :func:`guarded`, which turns a damaged input into a failed
check naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailgate.errors import DamagedFileError
from tailgate.files.safe_read import load_json

CANNOT_PROVE = (
    "What an audit cannot prove: that the data came from the registered models and prompts; "
    "and, with local files alone, that a researcher who rewrote git history (or never committed "
    "the lock before collecting data) did not register after seeing results. A receipt "
    "published before the data (tailgate freeze prints it; --tag makes a tag to push) closes "
    "that: pass its hash as --expected-hash; so does a trusted timestamp (freeze --timestamp "
    "URL), verified with --tsa-cert."
)


#: what the plain audit takes as stored, said once in its output (``--reproduce`` goes further)
TAKEN_AS_STORED = (
    "What the plain audit takes as stored: the fits, bulk replicates and analysis statistics "
    "(everything downstream of them is re-made with the rules' own code and compared whole); "
    "re-fitting, re-scoring and re-generating them from the data is 'tailgate audit "
    "--reproduce''s job."
)


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
        if not any(c.name == "reproduce" for c in self.checks):
            out.append(TAKEN_AS_STORED)
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


#: what a damaged or hostile file can raise while a check reads it: besides the wrong types and
#: shapes, a nesting deeper than a walker recurses (RecursionError), a number no conversion holds
#: (``int(inf)``: OverflowError; NaN: ValueError) and a size no memory holds (MemoryError)
DAMAGE = (
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
    OSError,
    ArithmeticError,
    RecursionError,
    MemoryError,
    DamagedFileError,
)


def guarded(checks: list[Check], name: str, where: Path, fn: Any, *args: Any) -> Any:
    """``fn(*args)``; a damaged input it reads (a JSON list where an object belongs, text where
    a number belongs, …) becomes a failed check naming the file, never a crashed audit."""
    try:
        return fn(*args)
    except DAMAGE as exc:
        if isinstance(exc, DamagedFileError):  # its message names the file and the fix
            failure = f"{where}: damaged or unreadable input: {str(exc)[:500]}"
        else:
            failure = (
                f"{where}: damaged or unreadable input ({type(exc).__name__}: {str(exc)[:300]}); "
                "restore it from the run that wrote it, or re-run that stage"
            )
        checks.append(Check(name, str(where), [failure]))
        return None


def read_or_fail(path: Path, fails: list[str]) -> Any:
    """The JSON document at ``path``, read as a possibly hostile file
    (:func:`tailgate.files.safe_read.load_json`); ``None``, with a failure naming the file added to
    ``fails``, where it cannot be read."""
    try:
        return load_json(path)
    except DAMAGE as exc:
        fails.append(f"{path}: cannot be read ({exc})")
        return None
