"""Damaged files never crash the audit or ``status``: a lock entry that is not an object, an
unparseable entry time, a record or ``verdict.json`` that is a JSON list, a ledger line that is a
number, a fit whose ``n`` is text or ``NaN`` (which no conversion to an integer takes). Each
makes the audit fail (exit 4) naming the file, never an internal error (exit 1)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from attack_project import Project


def _edit_json(path: Path, change: Callable[[object], object]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def _lock_entry_string(proj: Project) -> str:
    def change(doc):
        doc["chain"][0] = "entry"
        return doc

    _edit_json(proj.lock, change)
    return proj.lock.name


def _lock_time(proj: Project) -> str:
    def change(doc):
        doc["chain"][0]["time"] = "yesterday at noon"
        return doc

    _edit_json(proj.lock, change)
    return proj.lock.name


def _record_list(proj: Project) -> str:
    record = sorted((proj.results / "provenance").rglob("*.json"))[0]
    record.write_text("[]")
    return record.name


def _verdict_list(proj: Project) -> str:
    (proj.results / "verdict.json").write_text("[1, 2]")
    return "verdict.json"


def _ledger_number(proj: Project) -> str:
    ledger = proj.results / "runs.jsonl"
    lines = ledger.read_text().splitlines()
    ledger.write_text("\n".join(["42", *lines[1:]]) + "\n")
    return "runs.jsonl"


def _fit_n_text(proj: Project) -> str:
    fit = sorted((proj.results / "fits").rglob("*.json"))[0]

    def change(doc):
        def walk(v):
            if isinstance(v, dict):
                return {k: ("many" if k == "n" else walk(x)) for k, x in v.items()}
            if isinstance(v, list):
                return [walk(x) for x in v]
            return v

        return walk(doc)

    _edit_json(fit, change)
    return fit.name


def _fit_n_nan(proj: Project) -> str:
    fit = sorted((proj.results / "fits").rglob("*.json"))[0]
    text, found = re.subn(r'"n": \d+', '"n": NaN', fit.read_text(), count=1)
    assert found, fit.read_text()[:500]
    fit.write_text(text)
    return fit.name


DAMAGE = {
    "lock entry is a string": _lock_entry_string,
    "lock entry time unparseable": _lock_time,
    "record is a list": _record_list,
    "verdict.json is a list": _verdict_list,
    "ledger line is a number": _ledger_number,
    "fit n is text": _fit_n_text,
    "fit n is NaN": _fit_n_nan,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_files_fail_the_audit_naming_the_file(proj: Project, damage: str) -> None:
    name = DAMAGE[damage](proj)
    code, out = proj.audit("--no-git")
    assert code == 4, out[-3000:]
    assert "internal error" not in out and "Traceback" not in out, out[-3000:]
    assert name in out, out[-3000:]
    code, out = proj.cli("status", proj.name)
    assert code != 1 and "internal error" not in out and "Traceback" not in out, out[-3000:]
