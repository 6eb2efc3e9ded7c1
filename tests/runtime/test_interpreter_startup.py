"""The contract, what ran: code run by the interpreter's start-up state, not by a file of the
project or a start-up hook. The study is run with ``PYTHONPATH=dir PYTHONWARNINGS=
ignore::mod.Category``: Python imports ``mod`` at start-up to find the warning category, and
``mod`` patches the simulate backend in memory (the heavy condition's tail made lighter). No
file of the project, no ``.pth`` and no ``sitecustomize`` changed; the plain audit still fails,
naming the module, the variable and the warning option."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from attack_project import Project
from tailgate.runtime import forkserver, installed, interpreter
from tailgate.runtime.interpreter import check_startup, startup_state

AUDIT_FAILED = 4

PATCH = """\
import sys


class Category(Warning):
    pass


class _Patch:
    # at this point of start-up the installed packages are not on the path yet: the patch
    # waits for the simulate backend to be imported and changes it as it loads
    def find_spec(self, name, path=None, target=None):
        if name != "tailgate.generate.simulate":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            honest = module.simulate_condition

            def lighter(seed, condition, truth, n):
                x = honest(seed, condition, truth, n)
                if condition == "heavy":
                    import numpy as np

                    x = np.minimum(x, np.quantile(x, 0.9))
                return x

            module.simulate_condition = lighter

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Patch())
"""


@contextlib.contextmanager
def _imported_for_this_test(name: str) -> Iterator[None]:
    """Import ``name`` for the test and drop it after: a module left in ``sys.modules`` would be
    part of the start-up state every later record made in this process reports."""
    sys.modules.pop(name, None)
    importlib.import_module(name)
    try:
        yield
    finally:
        sys.modules.pop(name, None)


def test_an_honest_process_has_a_clean_start_up_state():
    """A process that loads what a job loads (the numerical stack, the stages, the report):
    no warning import, no foreign hook or module."""
    code = (
        "import json, matplotlib.pyplot, pandas, pyarrow.parquet, scipy.stats;"
        "import tailgate.stages.fit, tailgate.report.render;"
        "from tailgate.runtime.interpreter import startup_state;"
        "print(json.dumps(startup_state()))"
    )
    env = {k: v for k, v in os.environ.items() if k not in interpreter.FLAGGED}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env
    )
    assert res.returncode == 0, res.stderr[-3000:]
    state = json.loads(res.stdout)
    assert state["warning_imports"] == [] and state["hooks"] == [], state
    assert state["foreign_modules"] == [], state["foreign_modules"][:5]


def test_a_module_outside_every_distribution_is_foreign(tmp_path, monkeypatch):
    (tmp_path / "planted.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with _imported_for_this_test("planted"):
        foreign = {m["module"]: m for m in startup_state()["foreign_modules"]}
    assert foreign["planted"]["path"] == str(tmp_path / "planted.py")


def test_a_distribution_file_edited_after_install_is_foreign(tmp_path, monkeypatch):
    """A file a ``RECORD`` lists, but with other bytes than the hash listed there."""
    site = tmp_path / "site"
    (site / "pkgx").mkdir(parents=True)
    (site / "pkgx" / "__init__.py").write_text("VALUE = 2\n")
    info = site / "pkgx-1.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("pkgx/__init__.py,sha256=AAAA,10\npkgx-1.0.dist-info/RECORD,,\n")
    monkeypatch.syspath_prepend(str(site))
    interpreter.forget()
    try:
        with _imported_for_this_test("pkgx"):
            foreign = {m["module"] for m in startup_state()["foreign_modules"]}
            assert "pkgx" in foreign
            # listed with its true hash, it is an installed file like any other
            interpreter.forget()
            true_hash = interpreter._digest(str(site / "pkgx" / "__init__.py"))[1]
            (info / "RECORD").write_text(f"pkgx/__init__.py,sha256={true_hash},10\n")
            assert "pkgx" not in {m["module"] for m in startup_state()["foreign_modules"]}
    finally:
        interpreter.forget()


def test_a_warning_category_names_the_module_python_imports(monkeypatch):
    monkeypatch.setattr(sys, "warnoptions", ["ignore::mod.Category", "default::DeprecationWarning"])
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    state = startup_state()
    assert state["warning_imports"] == ["mod"]
    assert state["variables"]["PYTHONPATH"] == "/somewhere"


@pytest.mark.slow
def test_a_start_up_patch_through_the_environment_fails_the_plain_audit(
    proj: Project, tmp_path
) -> None:
    hook = tmp_path / "dir"
    hook.mkdir()
    (hook / "mod.py").write_text(PATCH)
    env = {"PYTHONPATH": str(hook), "PYTHONWARNINGS": "ignore::mod.Category"}
    # the generation jobs again, under the patch (its record is the one the audit must fail)
    res = proj.snakemake("--forcerun", "generate", "--until", "generate", env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    record = json.loads(next((proj.results / "provenance").glob("generations__*.json")).read_text())
    state = record["runtime"]["startup"]
    assert state["warning_imports"] == ["mod"]
    assert any(m["module"] == "mod" for m in state["foreign_modules"])
    assert any(h["name"] == "mod._Patch" for h in state["hooks"])
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out[-3000:]
    assert f"module mod loaded from {hook / 'mod.py'}" in out, out[-3000:]
    assert "names a category of module mod" in out and f"PYTHONPATH={hook}" in out, out[-3000:]
    assert "sys.meta_path: mod._Patch" in out, out[-3000:]
    fails, _ = check_startup([type("R", (), {"content": record, "path": "generations"})()])
    assert fails


def test_the_honest_run_records_a_clean_start_up_state(honest_run: Project) -> None:
    for path in sorted((honest_run.results / "provenance").glob("*.json")):
        state = json.loads(path.read_text())["runtime"]["startup"]
        assert not state["foreign_modules"] and not state["hooks"], (path.name, state)
        assert not set(state["variables"]) & set(interpreter.FLAGGED), (path.name, state)


def test_a_console_script_is_vouched_for_by_its_record(tmp_path):
    """``snakemake --cores all`` runs the environment's console script as ``__main__``: a file
    outside the site folder that the distribution's ``RECORD`` lists (``../../../bin/...``)
    with its hash. Edited after the install, it is foreign like any other file."""
    script = Path(sys.prefix) / "bin" / "snakemake"
    assert script.is_file(), f"no console script at {script}"
    assert interpreter._vouched(str(script), frozenset())

    copy = tmp_path / "bin" / "snakemake"
    copy.parent.mkdir()
    copy.write_bytes(script.read_bytes() + b"# edited\n")
    site = tmp_path / "lib" / "python3" / "site-packages"
    (site / "snakemake-9.dist-info").mkdir(parents=True)
    honest = interpreter._digest(str(script))[1]
    (site / "snakemake-9.dist-info" / "RECORD").write_text(
        f"../../../bin/snakemake,sha256={honest},{script.stat().st_size}\n"
    )
    interpreter.forget()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(interpreter, "_site_dirs", lambda: (str(site),))
            assert not interpreter._vouched(str(copy), frozenset())
            copy.write_bytes(script.read_bytes())
            interpreter.forget()
            assert interpreter._vouched(str(copy), frozenset())
    finally:
        interpreter.forget()


def test_a_preloaded_digest_is_used_only_while_the_file_is_as_the_server_hashed_it(
    tmp_path, monkeypatch
):
    """A job forked from the run's warm server takes the server's SHA-256 of a file the server
    loaded (tailgate.runtime.forkserver); once the file's status differs from the one hashed (edited
    after the server loaded it), the job hashes the file itself."""
    import hashlib
    import types

    target = tmp_path / "module.py"
    target.write_text("VALUE = 1\n")
    real = os.path.realpath(target)
    st = os.stat(real)
    planted = hashlib.sha256(b"what the server read").digest()
    table = types.ModuleType(forkserver.DIGESTS)
    table.files = {real: ((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), planted)}
    monkeypatch.setitem(sys.modules, forkserver.DIGESTS, table)
    interpreter.forget()
    try:
        assert interpreter._digest(real)[0] == planted.hex()
        target.write_text("VALUE = 22\n")  # another size and time: hashed again
        interpreter.forget()
        assert interpreter._digest(real)[0] == hashlib.sha256(b"VALUE = 22\n").hexdigest()
        table.files[real] = ("not a status", planted)  # a damaged entry is never used
        interpreter.forget()
        assert interpreter._digest(real)[0] == hashlib.sha256(b"VALUE = 22\n").hexdigest()
        # the real path the server found for a module's file (here: reached through a link)
        link = tmp_path / "link.py"
        link.symlink_to(target)
        st = os.stat(real)
        table.files = {
            "/the/servers/real": ((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), planted)
        }
        table.origins = {str(link): "/the/servers/real"}
        assert interpreter._real(str(link)) == "/the/servers/real"
        target.write_text("VALUE = 333\n")  # no longer the file the server hashed
        assert interpreter._real(str(link)) == real
    finally:
        interpreter.forget()


def test_a_servers_record_listing_is_used_only_while_every_record_is_as_it_was_read(tmp_path):
    """A job forked from the run's warm server takes the server's reading of a site folder's
    ``RECORD`` files (tailgate.runtime.forkserver) while each has the status the server read it
    with; once one has changed (a package installed or edited during the run), the job reads them
    itself. A ``RECORD`` that is a FIFO is never opened for reading, so it never blocks."""
    import types

    site = tmp_path / "site"
    info = site / "pkgx-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "RECORD").write_text("pkgx/__init__.py,sha256=TRUE,10\n")
    statuses, listing = installed.site_records(str(site))
    assert listing == {"pkgx/__init__.py": "TRUE"}
    assert statuses == installed.record_statuses(str(site))
    table = types.ModuleType(forkserver.DIGESTS)
    setattr(table, forkserver.RECORDS, {str(site): (statuses, {"pkgx/__init__.py": "SERVER"})})
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, forkserver.DIGESTS, table)
        interpreter.forget()
        try:
            assert interpreter._records(str(site)) == {"pkgx/__init__.py": "SERVER"}
            (info / "RECORD").write_text("pkgx/__init__.py,sha256=EDITED,100\n")
            interpreter.forget()
            assert interpreter._records(str(site)) == {"pkgx/__init__.py": "EDITED"}
            (info / "RECORD").unlink()
            os.mkfifo(info / "RECORD")
            interpreter.forget()
            assert interpreter._records(str(site)) == {}
            assert installed.record_statuses(str(site)) == (("pkgx-1.0.dist-info", None),)
        finally:
            interpreter.forget()


def test_a_servers_judgement_of_a_file_holds_only_while_the_file_is_as_it_judged(
    tmp_path, monkeypatch
):
    """A job forked from the run's warm server takes the server's judgement of a file it loaded
    (tailgate.runtime.forkserver's ``vouched``) while the file has the status the server hashed and
    the job's folders and ``RECORD`` listings are the ones it judged with; otherwise the job
    judges the file itself. Here the server's planted "vouched for" of a file outside every
    distribution holds until the file changes."""
    import hashlib
    import types

    (tmp_path / "planted.py").write_text("VALUE = 1\n")
    real = os.path.realpath(tmp_path / "planted.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    interpreter.forget()
    stdlib, sites = interpreter._stdlib(), interpreter._site_dirs()
    table = types.ModuleType(forkserver.DIGESTS)
    st = os.stat(real)
    table.files = {real: (installed.status_of(st), hashlib.sha256(b"VALUE = 1\n").digest())}
    table.origins = {str(tmp_path / "planted.py"): real}
    setattr(table, forkserver.RECORDS, {d: installed.site_records(d) for d in sites})
    setattr(table, forkserver.VOUCHED, (stdlib, sites, {real: True}))
    monkeypatch.setitem(sys.modules, forkserver.DIGESTS, table)
    interpreter.forget()
    try:
        with _imported_for_this_test("planted"):
            assert "planted" not in {m["module"] for m in startup_state()["foreign_modules"]}
            # judged with other folders than the job's: not taken
            setattr(table, forkserver.VOUCHED, (stdlib, (*sites, "/elsewhere"), {real: True}))
            interpreter.forget()
            assert "planted" in {m["module"] for m in startup_state()["foreign_modules"]}
            setattr(table, forkserver.VOUCHED, (stdlib, sites, {real: True}))
            interpreter.forget()
            assert "planted" not in {m["module"] for m in startup_state()["foreign_modules"]}
            (tmp_path / "planted.py").write_text("VALUE = 22\n")  # no longer what it judged
            interpreter.forget()
            assert "planted" in {m["module"] for m in startup_state()["foreign_modules"]}
    finally:
        interpreter.forget()
