"""The contract, what actually ran: an unchecked-hash ``.pyc`` beside an untouched ``.py`` and a
``sitecustomize`` import hook change what runs without changing a hashed file. Compiled files
left in the project (the package and the rule scripts) that are not their source are named in
every record's runtime fingerprint, and the audit fails on them and on import hooks."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

AUDIT_FAILED = 4


def _planted_package(tmp_path: Path) -> Path:
    """A copy of the tailgate package whose ``seeds.py`` is untouched but whose unchecked-hash
    ``.pyc`` was compiled from other code (it sets ``PLANTED = True``)."""
    import tailgate

    root = tmp_path / "site"
    shutil.copytree(
        Path(tailgate.__file__).parent,
        root / "tailgate",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    source = root / "tailgate" / "seeds.py"
    other = tmp_path / "other.py"
    other.write_text(source.read_text() + "\nPLANTED = True\n")
    pyc = Path(importlib.util.cache_from_source(str(source)))
    py_compile.compile(
        str(other), cfile=str(pyc), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    return root


def _runs_planted(root: Path, cache_prefix: Path | None) -> bool:
    """Whether importing the planted package runs the planted code."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    if cache_prefix is not None:
        env["PYTHONPYCACHEPREFIX"] = str(cache_prefix)
    res = subprocess.run(
        [sys.executable, "-c", "import tailgate.seeds as s; print(hasattr(s, 'PLANTED'))"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return res.stdout.strip() == "True"


def test_planted_bytecode_runs_in_place_of_its_untouched_source(tmp_path):
    """The attack: the .py is untouched and other code runs (so the records must name it)."""
    root = _planted_package(tmp_path)
    assert _runs_planted(root, None)
    assert not _runs_planted(root, tmp_path / "other-cache")  # the .pyc is what runs


def test_planted_bytecode_of_the_rule_scripts_is_named(tmp_path, monkeypatch):
    from tailgate.runtime import fingerprint as runtime

    scripts = tmp_path / "workflow" / "scripts"
    package = tmp_path / "workflow" / "tailgate"
    package.mkdir(parents=True)
    scripts.mkdir()
    source = scripts / "_tailgate.py"
    source.write_text("import sys\n")
    other = tmp_path / "other.py"
    other.write_text("import sys\nPLANTED = True\n")
    pyc = Path(importlib.util.cache_from_source(str(source)))
    py_compile.compile(
        str(other), cfile=str(pyc), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    monkeypatch.setattr(runtime, "_package", lambda: package)
    found = runtime._stale_scripts()
    assert len(found) == 1 and found[0].startswith("scripts/") and "_tailgate" in found[0]


def test_planted_bytecode_is_named_and_honest_bytecode_is_not(tmp_path):
    from tailgate.runtime.fingerprint import stale_bytecode

    root = _planted_package(tmp_path)
    py_compile.compile(str(root / "tailgate" / "files" / "atomic.py"))  # an honest compiled file
    found = stale_bytecode(root / "tailgate")
    assert len(found) == 1 and "seeds" in found[0] and "not compiled from it" in found[0]


def test_the_servers_bytecode_answers_hold_only_while_both_files_are_as_judged(
    tmp_path, monkeypatch
):
    """A job forked from the run's warm server takes the server's answer of the bytecode check
    for a compiled file (tailgate.runtime.forkserver) while the compiled file and its source have
    the status they had when judged; a file planted after that is judged again, by the job."""
    import time
    import types

    from tailgate.runtime import bytecode, forkserver
    from tailgate.runtime import fingerprint as runtime

    package = tmp_path / "pkg"
    package.mkdir()
    source = package / "plain.py"
    source.write_text("VALUE = 1\n")
    py_compile.compile(str(source))  # honest
    served = bytecode.judged([package])
    assert list(served.values()) == [False]  # not stale
    monkeypatch.setattr(runtime, "_JUDGED", {})
    table = types.ModuleType(forkserver.DIGESTS)
    monkeypatch.setitem(sys.modules, forkserver.DIGESTS, table)
    # an answer the server gave for these very files is taken as it is (here: a planted "stale")
    setattr(table, forkserver.JUDGED, {key: True for key in served})
    assert len(runtime.stale_bytecode(package)) == 1
    # planted after the server judged it (another size and time): the job compares it itself
    other = tmp_path / "other.py"
    other.write_text("VALUE = 2222\n")
    pyc = Path(importlib.util.cache_from_source(str(source)))
    time.sleep(0.01)
    py_compile.compile(
        str(other), cfile=str(pyc), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    found = runtime.stale_bytecode(package)
    assert len(found) == 1 and "not compiled from it" in found[0]
    # compiled honestly again: the job's own answer, not the server's "stale" of the first file
    py_compile.compile(str(source))
    assert runtime.stale_bytecode(package) == ()


def test_a_compiled_file_that_is_a_fifo_is_never_read(tmp_path):
    from tailgate.runtime.bytecode import judged
    from tailgate.runtime.fingerprint import stale_bytecode

    package = tmp_path / "pkg"
    (package / "__pycache__").mkdir(parents=True)
    (package / "plain.py").write_text("VALUE = 1\n")
    os.mkfifo(Path(importlib.util.cache_from_source(str(package / "plain.py"))))
    assert stale_bytecode(package) == () and judged([package]) == {}


def test_honest_bytecode_is_compared_without_the_checkers_own_future_flags(tmp_path):
    """A module without ``from __future__ import annotations`` compiles to other code under that
    flag: the comparison must not inherit it from the module that makes it."""
    from tailgate.runtime.fingerprint import stale_bytecode

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "plain.py").write_text("def f(x: int) -> int:\n    return x\n")
    py_compile.compile(str(package / "plain.py"))
    assert stale_bytecode(package) == ()


def test_records_carry_the_runtime_and_the_honest_run_passes(honest_run, honest_audit):
    import json

    record = next((honest_run.results / "provenance").glob("*.json"))
    runtime = json.loads(record.read_text())["runtime"]
    assert runtime["modules"] and runtime["bytecode"] == []
    assert all(h["known"] for h in runtime["hooks"])
    code, out = honest_audit
    assert code == 0 and "[ok] runtime" in out, out


def test_a_sitecustomize_hook_fails_the_audit(proj, tmp_path):
    """A ``sitecustomize`` on the jobs' path runs before every job; the stages it re-ran record
    it and the audit fails naming it."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text("import os\nos.environ.setdefault('HOOKED', '1')\n")
    path = os.pathsep.join([str(hooks), os.environ.get("PYTHONPATH", "")])
    res = proj.snakemake("--forcerun", "verdict", env={"PYTHONPATH": path})
    assert res.returncode == 0, res.stderr[-2000:]
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert "made with an import hook (sitecustomize" in out and "verdict.json" in out
