"""The fork server of local runs (tailgate.runtime.forkserver): a job it takes runs as a fork of the
server with the job's own streams, folder, environment and exit status; a job of another
environment runs in its own process; an inherited address never reaches a job."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from tailgate.runtime import forkserver

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the server runs on Linux only")

WORKFLOW = Path(forkserver.__file__).resolve().parents[2]

#: a job script: hands itself over as every rule script does, then reports what it sees
JOB = f"""\
import os, sys, json, time
sys.path.insert(0, {str(WORKFLOW)!r})
from tailgate.runtime.forkserver import hand_over
hand_over()
print(json.dumps({{
    "pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(), "argv": sys.argv,
    "tmpdir": os.environ.get("TMPDIR"),
    "address": os.environ.get("{forkserver.ENV}"), "numpy_loaded": "numpy" in sys.modules,
    "tailgate_loaded": sorted(m for m in sys.modules if m.startswith("tailgate")),
}}))
print("a line on stderr", file=sys.stderr)
import atexit
atexit.register(print, "the job's exit function ran")
code, pause = (sys.argv[1:] + ["0", "0"])[:2]  # the exit status or message, seconds to wait
time.sleep(float(pause))
sys.exit(int(code) if code.isdigit() else code)
"""


def _workflow(**over: object) -> SimpleNamespace:
    """What :func:`forkserver.start` reads of Snakemake's workflow; ``jobs``: the ``models``
    resource of each script job the run will run, None for a job without a script (no plan to
    read without it)."""
    settings = SimpleNamespace(deployment_method=over.pop("methods", set()))
    flow = SimpleNamespace(
        local_exec=over.pop("local_exec", True),
        dryrun=over.pop("dryrun", False),
        deployment_settings=settings,
    )
    if "jobs" in over:
        jobs = [
            SimpleNamespace(
                resources=SimpleNamespace(models=m or 0),
                rule=SimpleNamespace(script=None if m is None else "workflow/scripts/stage.py"),
            )
            for m in over.pop("jobs")
        ]
        flow.dag = SimpleNamespace(needrun_jobs=lambda: iter(jobs))
    return flow


@pytest.fixture()
def server(monkeypatch, tmp_path):
    """A running server as a local run starts it, with this process's environment, in the
    jobs' folder ``tmp_path/work`` (a run's working folder)."""
    monkeypatch.delenv(forkserver.ENV, raising=False)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    proc = forkserver.start(_workflow())
    assert proc is not None
    address = os.environ[forkserver.ENV]
    yield proc, address, proc.pid
    forkserver.stop(proc)
    assert forkserver.ENV not in os.environ


def _job_env(address: str, server_pid: int | None = None, **extra: str) -> dict[str, str]:
    """A job's environment as Snakemake makes it: the run's (the server's, read from /proc:
    pytest changes PYTEST_CURRENT_TEST between a fixture and its test), thread counts of one
    and the job's own tmpdir."""
    if server_pid is None:
        env = {k: v for k, v in os.environ.items() if k != forkserver.ENV}
    else:
        raw = Path(f"/proc/{server_pid}/environ").read_bytes().split(b"\0")
        env = dict(os.fsdecode(kv).split("=", 1) for kv in raw if kv)
    env.update(dict.fromkeys(forkserver.THREAD_VARIABLES, "1"))
    env[forkserver.ENV] = address
    env.update(extra)
    return env


def _run(
    tmp_path: Path, env: dict[str, str], *args: str, folder: str = "work"
) -> subprocess.CompletedProcess:
    script = tmp_path / "job.py"
    script.write_text(JOB)
    work = tmp_path / folder
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=work, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_a_job_runs_as_a_fork_of_the_server_with_its_own_streams_folder_and_status(
    server, tmp_path
):
    proc, address, pid = server
    res = _run(tmp_path, _job_env(address, pid, TMPDIR=str(tmp_path)), "3")
    assert res.returncode == 3, res.stderr
    first, last = res.stdout.splitlines()
    seen = json.loads(first)
    assert last == "the job's exit function ran"  # as when a process ends
    assert seen["ppid"] == proc.pid  # forked by the server
    assert seen["numpy_loaded"]  # preloaded there, never imported by this script
    assert seen["cwd"] == str(tmp_path / "work")
    assert seen["argv"] == [str(tmp_path / "job.py"), "3"]
    assert seen["tmpdir"] == str(tmp_path)  # set per job by Snakemake (its tmpdir resource)
    assert seen["address"] is None  # the job itself cannot hand over again
    # the job loads tailgate from disk itself: the server holds none of it
    assert seen["tailgate_loaded"] == [
        "tailgate",
        "tailgate.runtime",
        "tailgate.runtime.forkserver",
    ]
    assert res.stderr == "a line on stderr\n"


def test_a_message_exit_and_an_exception_end_as_in_the_jobs_own_process(server, tmp_path):
    _, address, pid = server
    res = _run(tmp_path, _job_env(address, pid), "refused: the reason")
    assert res.returncode == 1 and res.stderr.endswith("refused: the reason\n")
    (tmp_path / "boom.py").write_text(
        f"import sys\nsys.path.insert(0, {str(WORKFLOW)!r})\n"
        "from tailgate.runtime.forkserver import hand_over\nhand_over()\n"
        "import os\nprint(os.getppid())\nraise ValueError('the bug')\n"
    )
    res = subprocess.run(
        [sys.executable, str(tmp_path / "boom.py")],
        env=_job_env(address, pid), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert res.returncode == 1
    assert int(res.stdout) == server[0].pid
    assert "Traceback" in res.stderr and "ValueError: the bug" in res.stderr


def test_a_job_of_another_environment_runs_in_its_own_process(server, tmp_path):
    _, address, pid = server
    for env, folder in (
        (_job_env(address, pid, EXTRA_SETTING="1"), "work"),  # a variable the server lacks
        (_job_env(address, pid, OMP_NUM_THREADS="2"), "work"),  # two threads: BLAS loads otherwise
        (_job_env(address, pid), "elsewhere"),  # another folder: matplotlib reads ./matplotlibrc
    ):
        res = _run(tmp_path, env, folder=folder)
        assert res.returncode == 0, res.stderr
        seen = json.loads(res.stdout.splitlines()[0])
        assert seen["ppid"] == os.getpid() and not seen["numpy_loaded"]


def test_without_a_server_the_job_runs_in_its_own_process(tmp_path):
    res = _run(tmp_path, _job_env(str(tmp_path / "no-such-socket")), "5")
    assert res.returncode == 5, res.stderr
    assert json.loads(res.stdout.splitlines()[0])["ppid"] == os.getpid()


@pytest.mark.slow
def test_a_signal_to_the_job_reaches_its_fork(server, tmp_path):
    proc, address, pid = server
    script = tmp_path / "job.py"
    script.write_text(JOB)
    job = subprocess.Popen(
        [sys.executable, str(script), "0", "300"],
        env=_job_env(address, pid), stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    seen = json.loads(job.stdout.readline())
    assert seen["ppid"] == proc.pid
    job.send_signal(signal.SIGTERM)
    assert job.wait(timeout=120) != 0
    for _ in range(200):  # the fork is gone too
        try:
            os.kill(seen["pid"], 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the job's fork outlived the job")


def test_the_workflow_decides_where_a_server_runs(monkeypatch):
    monkeypatch.setenv(forkserver.ENV, "/somewhere/else")
    assert forkserver.claim() is True and forkserver.ENV not in os.environ
    monkeypatch.setenv(forkserver.ENV, "off")
    assert forkserver.claim() is False and forkserver.ENV not in os.environ
    assert forkserver.start(_workflow(), wanted=False) is None
    for workflow in (
        _workflow(local_exec=False),  # a cluster executor: the jobs run elsewhere
        _workflow(dryrun=True),
        _workflow(methods={"CONDA"}),  # another interpreter per rule
        _workflow(methods={"APPTAINER"}),
    ):
        monkeypatch.setenv(forkserver.ENV, "/somewhere/else")
        assert forkserver.start(workflow) is None
        assert forkserver.ENV not in os.environ  # an inherited address never reaches a job


def test_stop_ends_the_server_and_removes_its_socket(monkeypatch):
    monkeypatch.delenv(forkserver.ENV, raising=False)
    proc = forkserver.start(_workflow())
    address = Path(os.environ[forkserver.ENV])
    for _ in range(600):
        if address.exists():
            break
        time.sleep(0.05)
    assert address.exists()
    forkserver.stop(proc)
    assert proc.returncode is not None
    assert not address.parent.exists()


def test_a_server_that_cannot_start_leaves_the_jobs_to_start_on_their_own(monkeypatch, capsys):
    def no_folder(**_kw: object) -> str:
        raise PermissionError(13, "Permission denied", "/tmp")

    monkeypatch.delenv(forkserver.ENV, raising=False)
    monkeypatch.setattr(forkserver.tempfile, "mkdtemp", no_folder)
    assert forkserver.start(_workflow()) is None
    assert forkserver.ENV not in os.environ
    assert "no warm start" in capsys.readouterr().err


#: a job the plan marks (or not) as loading a model, that imports the model stack (or not)
MODEL_JOB = f"""\
import json, os, sys
from types import SimpleNamespace
sys.path.insert(0, {str(WORKFLOW)!r})
snakemake = SimpleNamespace(resources=SimpleNamespace(models=int(sys.argv[1])))
from tailgate.runtime.forkserver import hand_over
hand_over()
seen = {{"ppid": os.getppid(), "torch_before": "torch" in sys.modules}}
if sys.argv[2] == "import":
    import transformers.modeling_utils
    from tailgate.runtime.environment import current
    seen["versions"] = sorted(current())
    seen["torch_ok"] = bool(sys.modules["torch"].ones(2).sum() == 2)
    table = sys.modules.get("transformers.conversion_mapping")
    built = getattr(table, "_checkpoint_conversion_mapping_cache", 0)
    seen["conversions_built"] = built is not None
else:
    import glob, statistics  # modules the model preload also loaded: fresh from disk here
    from tailgate.runtime.environment import current
    seen["versions"] = sorted(current())
seen["model_modules"] = sorted(
    m for m in ("torch", "transformers", "tokenizers", "safetensors") if m in sys.modules
)
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_the_model_server_takes_the_marked_jobs_and_shows_the_model_stack_only_on_import(
    monkeypatch, tmp_path
):
    """A run of a study with model jobs starts a second server with PyTorch and transformers
    imported; a job the plan marks is its fork. A marked job that imports no model package has
    none in ``sys.modules`` and records none (as in its own process); one that imports
    transformers gets the preloaded stack, tokenizers and safetensors included, with the table
    of checkpoint conversions that every model load needs already built."""
    if importlib.util.find_spec("torch") is None:  # not imported here: the jobs import it
        pytest.skip("PyTorch is not installed")
    monkeypatch.delenv(forkserver.ENV, raising=False)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    proc = forkserver.start(_workflow(), models=True)
    try:
        assert proc is not None and proc.models is not None
        address, models = os.environ[forkserver.ENV], os.environ[forkserver.ENV_MODELS]
        env = _job_env(address, proc.pid, **{forkserver.ENV_MODELS: models})
        script = tmp_path / "model_job.py"
        script.write_text(MODEL_JOB)
        runs = {}
        for marked, what in (("1", "none"), ("1", "import"), ("0", "none")):
            res = subprocess.run(
                [sys.executable, str(script), marked, what],
                cwd=tmp_path / "work", env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert res.returncode == 0, res.stderr
            runs[marked, what] = json.loads(res.stdout.splitlines()[-1])
        plain = runs["1", "none"]
        assert plain["ppid"] == proc.models.pid and not plain["torch_before"]
        assert plain["model_modules"] == [] and "torch" not in plain["versions"]
        loaded = runs["1", "import"]
        assert loaded["ppid"] == proc.models.pid and loaded["torch_ok"]
        assert loaded["conversions_built"]  # the server built transformers' table of conversions
        assert loaded["model_modules"] == ["safetensors", "tokenizers", "torch", "transformers"]
        assert {"torch", "transformers"} <= set(loaded["versions"])
        assert runs["0", "none"]["ppid"] == proc.pid  # unmarked: the base server
    finally:
        forkserver.stop(proc)
    assert forkserver.ENV_MODELS not in os.environ and proc.models.returncode is not None


def test_a_run_without_model_jobs_to_run_starts_no_model_server(monkeypatch, tmp_path):
    """A study with model jobs whose run has none left to run (later stages only, as the
    second part of ``audit --reproduce``) starts the base server alone."""
    monkeypatch.delenv(forkserver.ENV, raising=False)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    proc = forkserver.start(_workflow(jobs=[0, 0, 0]), models=True)
    try:
        assert proc is not None and proc.models is None
        assert forkserver.ENV in os.environ and forkserver.ENV_MODELS not in os.environ
    finally:
        forkserver.stop(proc)
    assert proc.returncode is not None


def test_a_run_of_fewer_than_two_jobs_starts_no_server(monkeypatch):
    """A server pays for its preload from its second job: a run with one script job left (the
    target rule has no script) starts none, and a model server needs two marked jobs."""
    monkeypatch.delenv(forkserver.ENV, raising=False)
    assert forkserver.start(_workflow(jobs=[0, None])) is None
    assert forkserver.start(_workflow(jobs=[None])) is None
    assert forkserver.ENV not in os.environ
    for jobs, models in (([0, 0, 1], False), ([1, 1], True)):
        proc = forkserver.start(_workflow(jobs=jobs), models=True)
        try:
            assert proc is not None and (proc.models is not None) is models
        finally:
            forkserver.stop(proc)


#: a job that reports what the server hashed for it (tailgate.runtime.interpreter reads it)
DIGEST_JOB = f"""\
import hashlib, json, os, sys
sys.path.insert(0, {str(WORKFLOW)!r})
from pathlib import Path
from tailgate.runtime.forkserver import DIGESTS, JUDGED, RECORDS, hand_over
hand_over()
from tailgate.runtime.installed import distributed, record_digest, site_records
from tailgate.runtime import bytecode, interpreter
import numpy
table = sys.modules.get(DIGESTS)
files = getattr(table, "files", {{}})
sites = getattr(table, RECORDS, {{}})
path = os.path.realpath(numpy.__file__)
with open(path, "rb") as fh:
    truth = hashlib.sha256(fh.read()).hexdigest()
site = next(d for d in interpreter._site_dirs() if path.startswith(d + os.sep))
listed = os.path.relpath(path, site)
print(json.dumps({{
    "hashed": len(files), "numpy": path in files,
    "server_digest": files[path][1].hex() if path in files else None, "truth": truth,
    "job_digest": interpreter._digest(path)[0],
    "origin": getattr(table, "origins", {{}}).get(numpy.__spec__.origin) == path
    and interpreter._real(numpy.__spec__.origin) == path,
    "sites": len(sites), "own_listing": site_records(site)[1].get(listed),
    "job_listing": interpreter._records(site).get(listed),
    "from_server": site in sites and interpreter._records(site) is sites[site][1],
    "judged": getattr(table, JUDGED, None) == bytecode.judged(
        [Path({str(WORKFLOW)!r}) / "tailgate", Path({str(WORKFLOW)!r}) / "scripts"]
    ),
}}))
served = interpreter._served() or {{}}


def own_digest(real):
    with open(real, "rb") as fh:
        return record_digest(hashlib.sha256(fh.read()).digest())


stdlib, sites_now = interpreter._stdlib(), interpreter._site_dirs()
listings = {{d: site_records(d)[1] for d in sites_now}}  # read once: the job's own reading
own = {{r: distributed(r, stdlib, sites_now, listings.__getitem__, own_digest) for r in served}}
print(json.dumps({{
    "vouched": len(served), "vouched_true": sum(v is True for v in served.values()),
    "vouched_as_own": served == own,
}}))

"""


def test_a_forked_job_finds_the_servers_digests_and_record_listings(server, tmp_path):
    _, address, pid = server
    script = tmp_path / "digests.py"
    script.write_text(DIGEST_JOB)
    res = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path / "work", env=_job_env(address, pid),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    seen, vouched = map(json.loads, res.stdout.splitlines())
    assert seen["numpy"] and seen["hashed"] > 100, seen
    assert seen["server_digest"] == seen["truth"] == seen["job_digest"] and seen["origin"]
    # the RECORD listing of numpy's site folder is the server's reading, equal to the job's own
    assert seen["sites"] >= 1 and seen["from_server"], seen
    assert seen["job_listing"] == seen["own_listing"] is not None
    # and the bytecode check's answers for the package's compiled files, as the job would give
    assert seen["judged"], seen
    # and its judgement of every file it loaded, as the job's own, most of them vouched for
    assert vouched["vouched"] == seen["hashed"] and vouched["vouched_as_own"], vouched
    assert vouched["vouched_true"] > 100, vouched
    # a job in its own process hashes every file itself: no table
    alone = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path / "work",
        env={k: v for k, v in _job_env(address, pid).items() if k != forkserver.ENV},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert alone.returncode == 0, alone.stderr
    own, own_vouched = map(json.loads, alone.stdout.splitlines())
    assert own["hashed"] == own["sites"] == own_vouched["vouched"] == 0 and not own["from_server"]
    assert own["job_listing"] == seen["own_listing"]
