"""Hostile results folders: a JSON file nested 100,000 levels deep (``verdict.json``, a
provenance record, the lock, a ledger line) and a named pipe (FIFO) at a recorded path under
``fits/`` or ``provenance/``. The audit fails (exit 4) naming the file; ``status`` and
``verify`` exit cleanly (no internal error, no traceback), ``export`` is refused (exit 4, nothing
logged); nothing waits for a writer.

Readers bound work and memory, not only bytes: a sparse 1 TiB file at a recorded table path (its
size is compared before it is hashed), a 200 MB ledger of ``[`` (one scan at C speed), a
registration nested 1,000 levels deep (refused by the YAML reader, exit 2, or a failed check),
``1e999`` in a fit (a number tailgate never writes), a Parquet compression bomb (its footer read
first) and an ASCII terminal. Each command that could take memory runs in its own process, whose
peak memory is asserted; none of these assertions is about time.

Every command runs in a thread joined with a generous bound, so a hang fails the test instead of
stopping the suite; a reader left blocked on a pipe is released by opening the pipe for writing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from attack_project import Project
from cli_call import tailgate
from git_repo import GIT_ENV
from tailgate.errors import DamagedFileError, PreregError
from tailgate.files.parquet import read_parquet
from tailgate.files.safe_read import (
    MAX_DEPTH,
    json_depth,
    load_json,
    loads_json,
    read_text,
    same_bytes,
    sha256_file,
)
from tailgate.prereg.pins import NOT_HASHED, pin
from tailgate.prereg.strict_yaml import MAX_BYTES as REGISTRATION_BYTES
from tailgate.prereg.strict_yaml import MAX_NESTING
from tailgate.prereg.study import load

DEEP = 100_000
#: seconds a command may take before the test calls it hung: far above any honest run's time
BOUND = 900
#: the most memory a command may take on a hostile file (the audit of the demo takes 0.25 GB)
GB = 1 << 30
#: a terabyte that costs no disk (a sparse file)
TIB = 1 << 40
#: the hostile ledger's size (written in blocks: the test process never holds it)
LEDGER_BYTES = 200 * 1000 * 1000


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
    with pytest.raises(DamagedFileError, match=f"nested more than {MAX_DEPTH} levels"):
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


#: runs ``python -c CODE ARGS`` and reports its peak memory (KiB) as the last line of stderr
PEAK = """\
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print(f"peak_kib={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}", file=sys.stderr)
sys.exit(code)
"""


def measured(
    *argv: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, str, int]:
    """``ARGV`` in a process of its own under a fresh parent: exit code, output and peak memory
    (bytes). A hang past :data:`BOUND` seconds fails the test (the process is killed)."""
    try:
        res = subprocess.run(
            [sys.executable, "-c", PEAK, *map(str, argv)],
            cwd=cwd, env={**os.environ, **GIT_ENV, **(env or {})}, capture_output=True,
            text=True, timeout=BOUND, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {BOUND} s: {argv}")
    out = res.stdout + res.stderr
    return res.returncode, out, int(re.findall(r"peak_kib=(\d+)", out)[-1]) * 1024


def measured_cli(proj: Project, *args: str | Path, env: dict[str, str] | None = None):
    """``tailgate ARGS`` in the project, in its own process (:func:`measured`)."""
    return measured(sys.executable, "-m", "tailgate.cli", *args, cwd=proj.root, env=env)


def test_reader_scans_a_long_text_once_in_bounded_memory(tmp_path):
    # an unterminated string of escaped quotes made the string scan quadratic; a 200 MB run
    # of "[" made it one Python step a byte
    quotes = tmp_path / "quotes.json"
    quotes.write_bytes(b"[" * (MAX_DEPTH + 1) + b'"' + b'\\"' * 10_000_000)
    brackets = tmp_path / "brackets.json"
    with brackets.open("wb") as fh:
        for _ in range(LEDGER_BYTES // (1 << 20)):
            fh.write(b"[" * (1 << 20))
    for path in (quotes, brackets):
        read = f"from tailgate.files.safe_read import load_json\nload_json({str(path)!r})"
        code, out, peak = measured(sys.executable, "-c", read, cwd=tmp_path)
        assert code == 1 and "DamagedFileError" in out, out[-2000:]
        assert f"nested more than {MAX_DEPTH} levels" in out, out[-2000:]
        assert peak < 3 * path.stat().st_size + 200 * (1 << 20), (path.name, peak)


def test_depth_is_exact_across_the_scan_blocks() -> None:
    deep = 5_000_000  # more than one block of the running sum
    assert json_depth(b"[" * deep + b"]" * deep) == deep
    assert json_depth(b"[" * deep, stop=MAX_DEPTH) > MAX_DEPTH  # stops at the first block
    assert json_depth(b'["\\\\", "\\"[[[", {"a": "\\\\\\"]"}]') == 2


@pytest.mark.parametrize(
    "number", ["1e999", "-1E+999", "NaN", "Infinity", "-Infinity", "1" * 400, "1" * 400 + ".5"]
)
def test_reader_refuses_numbers_tailgate_never_writes(number: str) -> None:
    with pytest.raises(DamagedFileError, match=r"fit\.json: not JSON"):
        loads_json(f'{{"n": {number}}}', "fit.json")


def test_reader_keeps_every_finite_number() -> None:
    doc = '{"a": 1e308, "b": -1e-999, "c": 12345678901234567890, "d": "1e999 e000"}'
    assert loads_json(doc, "x") == {
        "a": 1e308,
        "b": -0.0,
        "c": 12345678901234567890,
        "d": "1e999 e000",
    }


def test_sizes_are_compared_before_a_file_is_hashed(tmp_path):
    big, small = tmp_path / "table.parquet", tmp_path / "recorded.parquet"
    small.write_bytes(b"PAR1")
    with big.open("wb") as fh:
        fh.truncate(TIB)  # no disk: hashing it would read a terabyte of zeros
    assert not bounded(lambda: same_bytes(big, small))
    # a pinned input (an imported data file) against its registered size
    assert bounded(lambda: pin(big, size=4))["sha256"] == NOT_HASHED
    assert pin(small, size=4)["sha256"] == sha256_file(small)


def test_a_parquet_bomb_is_refused_from_its_footer(tmp_path):
    path = tmp_path / "scores.parquet"
    column = pa.array(["x" * 100]).take(pa.array([0] * 1_000_000))  # 100 MB of text
    pq.write_table(pa.table({"text": column}), path, compression="zstd", use_dictionary=False)
    assert path.stat().st_size < 100_000
    with pytest.raises(pa.ArrowInvalid, match=r"scores\.parquet: its footer declares"):
        read_parquet(path)


def deep_registration(proj: Project, levels: int = 1000) -> None:
    """A field of the registration holding lists nested ``levels`` deep (2 kB of ``[`` and ``]``
    for 1,000), on line 3; with the document's mapping the nesting is one more."""
    proj.replace("title:", f"notes: {'[' * levels}{']' * levels}\ntitle:")


def test_the_registration_reader_bounds_nesting_size_and_kind(tmp_path):
    from attack_project import ATTACK_STUDY

    proj = Project(tmp_path, "attack")
    proj.prereg.parent.mkdir()
    proj.prereg.write_text(ATTACK_STUDY)
    deep_registration(proj, MAX_NESTING - 1)
    with pytest.raises(PreregError, match="notes") as as_deep_as_allowed:
        load(proj.prereg)
    assert "nested" not in str(as_deep_as_allowed.value)  # the schema's refusal, not the reader's
    proj.prereg.write_text(ATTACK_STUDY)
    deep_registration(proj, MAX_NESTING)
    with pytest.raises(
        PreregError, match=f"attack.yaml, line 3: field 'notes': .* more than {MAX_NESTING} levels"
    ):
        load(proj.prereg)
    proj.prereg.write_text(ATTACK_STUDY + "#" * REGISTRATION_BYTES)
    with pytest.raises(PreregError, match=f"more than the {REGISTRATION_BYTES}"):
        load(proj.prereg)
    proj.prereg.unlink()
    os.mkfifo(proj.prereg)
    with pytest.raises(PreregError, match=r"attack\.yaml: a named pipe"):
        bounded(lambda: load(proj.prereg), [proj.prereg])


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


# --- readers bound work and memory: the commands --------------------------------------------


def test_a_sparse_terabyte_at_a_table_path_fails_the_audit_unhashed(proj: Project) -> None:
    table = sorted((proj.results / "scores").rglob("*.parquet"))[0]
    table.unlink()
    with table.open("wb") as fh:
        fh.truncate(TIB)
    code, out, peak = measured_cli(proj, "audit", f"results/{proj.name}", "--no-git")
    assert code == 4, out[-3000:]
    assert f"{table.name}: {TIB} bytes, where its provenance record says" in out, out[-3000:]
    assert "Traceback" not in out and peak < GB, (peak, out[-3000:])
    code, out = proj.cli("status", proj.name)
    assert code != 1 and "Traceback" not in out, out[-3000:]


def test_a_ledger_of_brackets_fails_the_audit_in_bounded_memory(proj: Project) -> None:
    with (proj.results / "runs.jsonl").open("wb") as fh:
        for _ in range(LEDGER_BYTES // (1 << 20)):
            fh.write(b"[" * (1 << 20))
    code, out, peak = measured_cli(proj, "audit", f"results/{proj.name}", "--no-git")
    assert code == 4 and "runs.jsonl" in out, out[-3000:]
    assert "Traceback" not in out and peak < GB, (peak, out[-3000:])
    code, out, peak = measured_cli(proj, "status", proj.name)
    _clean(code, out)
    assert "runs.jsonl" in out and peak < GB, (peak, out[-3000:])


@pytest.mark.parametrize("verb", ["status", "verify", "design", "freeze", "amend"])
def test_a_registration_nested_1000_deep_is_refused_naming_the_limit(
    proj: Project, verb: str
) -> None:
    deep_registration(proj)
    args = (proj.name,) if verb == "status" else (proj.prereg,)
    args += ("--reason", "deeper notes") if verb == "amend" else ()
    code, out = proj.cli(verb, *args)
    assert code == 2, out[-3000:]
    assert f"{proj.name}.yaml, line 3: field 'notes'" in out, out[-3000:]
    assert f"more than {MAX_NESTING} levels" in out and "Traceback" not in out, out[-3000:]


def test_a_registration_nested_1000_deep_fails_the_audit(proj: Project) -> None:
    deep_registration(proj)
    code, out = proj.audit("--no-git")
    assert code == 4, out[-3000:]
    assert f"more than {MAX_NESTING} levels" in out and "internal error" not in out, out[-3000:]


def test_an_infinite_count_in_a_fit_fails_the_audit(proj: Project) -> None:
    fit = sorted((proj.results / "fits").rglob("*.json"))[0]
    text, found = re.subn(r'"n": \d+', '"n": 1e999', fit.read_text(), count=1)
    assert found, fit.read_text()[:500]
    fit.write_text(text)
    code, out = proj.audit("--no-git")
    assert code == 4 and "internal error" not in out, out[-3000:]
    assert f"{fit.name}: not JSON (the number 1e999 overflows to infinity)" in out, out[-3000:]
    code, out = proj.cli("status", proj.name)
    assert code != 1 and "internal error" not in out, out[-3000:]


@pytest.mark.parametrize("verb", ["status", "design"])
def test_an_ascii_terminal_gets_escapes_not_a_crash(proj: Project, verb: str) -> None:
    # both print beyond ASCII ("…" of a shortened hash, "Δ" of a difference)
    args = (proj.name,) if verb == "status" else (proj.prereg,)
    res = tailgate(verb, *args, cwd=proj.root, env={"PYTHONIOENCODING": "ascii"})
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "\\u" in res.stdout and "UnicodeEncodeError" not in out, out[-3000:]
