"""Hostile results folders: a JSON file nested 100,000 levels deep (``verdict.json``, a
provenance record, the lock, a ledger line) and a named pipe (FIFO) at a recorded path under
``fits/`` or ``provenance/``. The audit fails (exit 4) naming the file; ``status`` and
``verify`` exit cleanly (no internal error, no traceback), ``export`` is refused (exit 4, nothing
logged); nothing waits for a writer.

Every command runs in a thread joined with a generous bound, so a hang fails the test instead of
stopping the suite; a reader left blocked on a pipe is released by opening the pipe for writing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attack_project import Project
from tailgate.errors import DamagedFileError
from tailgate.safe_read import json_depth, load_json, read_text, sha256_file

DEEP = 100_000
#: seconds a command may take before the test calls it hung: far above any honest run's time
BOUND = 900


def bounded(fn: Callable[[], Any], fifos: list[Path] = ()) -> Any:
    """``fn()`` in a daemon thread; a failure, not a hang, when it has not returned after
    :data:`BOUND` seconds (a reader blocked on one of ``fifos`` is then released)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND)
    if thread.is_alive():
        for fifo in fifos:  # a writer that opens and closes: the blocked reader sees end of file
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        pytest.fail(f"still running after {BOUND} s: a reader waits on a pipe or loops")
    if "error" in box:
        raise box["error"]
    return box["value"]


def deep_json() -> str:
    return "[" * DEEP + "]" * DEEP


# --- the reader ---------------------------------------------------------------------------


def test_reader_refuses_a_fifo_without_waiting(tmp_path):
    fifo = tmp_path / "fit.json"
    os.mkfifo(fifo)
    for read in (load_json, read_text, sha256_file):
        with pytest.raises(DamagedFileError, match="named pipe"):
            bounded(lambda read=read: read(fifo), [fifo])


def test_reader_refuses_deep_json_and_counts_depth_outside_strings(tmp_path):
    path = tmp_path / "verdict.json"
    path.write_text(deep_json())
    with pytest.raises(DamagedFileError, match=f"nested {DEEP} levels"):
        load_json(path)
    # brackets inside strings, escaped quotes included, are text, not nesting
    assert json_depth('{"a": ["[[[\\"[[", {"b": "]]]{"}]}') == 3
    assert json_depth("[]") == 1 and json_depth('"x"') == 0
    ok = tmp_path / "ok.json"
    ok.write_text('{"a": [1, {"b": "[["}]}')
    assert load_json(ok) == {"a": [1, {"b": "[["}]}


def test_reader_refuses_a_file_over_the_limit(tmp_path):
    path = tmp_path / "record.json"
    path.write_text("[" + "1," * 100 + "1]")
    with pytest.raises(DamagedFileError, match="more than the 16"):
        load_json(path, limit=16)


# --- the commands on a hostile results folder ---------------------------------------------


def _deep_verdict(proj: Project) -> str:
    (proj.results / "verdict.json").write_text(deep_json())
    return "verdict.json"


def _deep_record(proj: Project) -> str:
    record = sorted((proj.results / "provenance").glob("*.json"))[0]
    record.write_text(deep_json())
    return record.name


def _deep_lock(proj: Project) -> str:
    proj.lock.write_text(deep_json())
    return proj.lock.name


def _deep_ledger_line(proj: Project) -> str:
    ledger = proj.results / "runs.jsonl"
    lines = ledger.read_text().splitlines()
    ledger.write_text("\n".join([deep_json(), *lines[1:]]) + "\n")
    return "runs.jsonl"


def _fifo_at(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


def _fifo_fit(proj: Project) -> str:
    fit = sorted((proj.results / "fits").rglob("*.json"))[0]
    return _fifo_at(fit).name


def _fifo_record(proj: Project) -> str:
    record = sorted((proj.results / "provenance").glob("fits__*.json"))[0]
    return _fifo_at(record).name


HOSTILE = {
    "verdict.json nested deep": _deep_verdict,
    "record nested deep": _deep_record,
    "lock nested deep": _deep_lock,
    "ledger line nested deep": _deep_ledger_line,
    "FIFO under fits/": _fifo_fit,
    "FIFO under provenance/": _fifo_record,
}


def _clean(code: int, out: str) -> None:
    assert code not in (0, 1), out[-3000:]
    assert "internal error" not in out and "Traceback" not in out, out[-3000:]


@pytest.mark.parametrize("hostile", list(HOSTILE))
def test_hostile_files_fail_the_audit_and_never_hang(proj: Project, hostile: str) -> None:
    name = HOSTILE[hostile](proj)
    fifos = [p for p in proj.results.rglob("*") if p.is_fifo()]
    code, out = bounded(lambda: proj.audit("--no-git"), fifos)
    assert code == 4, out[-3000:]
    assert "internal error" not in out and "Traceback" not in out, out[-3000:]
    assert name in out, out[-3000:]
    code, out = bounded(lambda: proj.cli("status", proj.name), fifos)
    assert code != 1 and "internal error" not in out and "Traceback" not in out, out[-3000:]
    if name == proj.lock.name:
        code, out = bounded(lambda: proj.cli("verify", proj.prereg), fifos)
        _clean(code, out)
        assert name in out, out[-3000:]
    else:  # the export audits first: refused, nothing logged
        store = proj.root / "store"
        export = ("export", "mlflow", proj.results, "--no-git", "--tracking-uri", store.as_uri())
        code, out = bounded(lambda: proj.cli(*export), fifos)
        # refused by the audit, or earlier by the ledger reader: either way exit 4, named
        assert code == 4 and name in out, out[-3000:]
        assert "Traceback" not in out and not store.exists(), out[-3000:]
