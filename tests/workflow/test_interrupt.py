"""A run stopped by Ctrl-C, its output piped to ``tee``: one line on the terminal, the last, no
traceback, the interrupt's exit status, the ledger says ``interrupted`` with the jobs that
finished and those stopped, and the same command resumes, keeping the finished jobs; run once
more with nothing to do, it still prints the answer."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import snakemake
from git_repo import commit_registration
from tailgate.runs.interrupts import _LOSES_INTERRUPT
from tailgate.runs.summary import STOPPED
from wf_project import REPO_ROOT, finished_counts, make_project

#: the line of a job's script that holds Snakemake's preamble (one line between its start and
#: end markers; the rule script follows); Python reports a signal that lands before the first
#: line as line 0
PREAMBLE_LINE = 2
#: attempts at an interrupt that lands while a job runs (see the test's docstring)
ATTEMPTS = 5


#: how Python joins the tracebacks of chained exceptions
_CHAINED = re.compile(
    r"(During handling of the above exception, another exception occurred:|"
    r"The above exception was the direct cause of the following exception:)\s*$"
)


def _outside_a_job_start_up(text: str) -> list[str]:
    """The tracebacks in ``text`` that are not Python's own for a job interrupted in its
    interpreter's start-up or in Snakemake's script preamble, before the first line of the rule
    script ran (the interpreter prints it; nothing of tailgate has started in that process to
    stop it: :func:`_a_start_up`): a frame of tailgate's code, the rule scripts' included (empty:
    every one is such, and there is one at least). The tracebacks of chained exceptions (an
    interrupt that lands while ``site`` imports ``os`` shows an ``AttributeError`` first) are one
    traceback, and so is a header with no frame before the next one (two jobs stopped at once
    interleave their lines)."""
    tracebacks: list[str] = []
    for part in text.split("Traceback")[1:]:
        if tracebacks and (_CHAINED.search(tracebacks[-1]) or 'File "' not in tracebacks[-1]):
            tracebacks[-1] += "Traceback" + part
        else:
            tracebacks.append(part)
    return [t for t in tracebacks if not _a_start_up(t)] or ([] if tracebacks else ["no traceback"])


def _a_start_up(traceback: str) -> bool:
    """Whether ``traceback`` is a job's interpreter start-up or its script's preamble stopped by
    the interrupt: a ``KeyboardInterrupt``, or a traceback cut short in the preamble (Snakemake
    ends a stopped job while it prints), with no frame of tailgate's code nor of the rule script
    past the preamble."""
    frames = traceback.split("KeyboardInterrupt", 1)[0]
    lines = [int(n) for n in re.findall(r'stage\.py", line (\d+)', frames)]
    return (
        ("KeyboardInterrupt" in traceback or bool(lines))
        and "workflow/tailgate/" not in frames
        and all(n <= PREAMBLE_LINE for n in lines)
    )


def _a_generation_finished(root) -> bool:
    """Whether Snakemake has recorded a finished generation job in its log: a job's own files
    exist a moment before, and outputs of a job Snakemake has not yet seen finish are discarded
    as incomplete when the run stops."""
    return any(
        "(Rule: generate)" in line and "Finished" in line
        for log in (root / ".snakemake" / "log").glob("*.snakemake.log")
        for line in log.read_text(errors="replace").splitlines()
    )


def _interrupted_run(root):
    """Start the study's run as ``snakemake … | tee run.log``, send Ctrl-C to the pipeline's
    process group once the first job has finished, and return (the project, what ``tee``
    logged, stderr, the ledger's runs or None)."""
    proj = make_project(root)
    commit_registration(proj.root)
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(REPO_ROOT / "Snakefile"),
        "-d", str(proj.root), "--cores", "2",
    ]  # fmt: skip
    # Ctrl-C in a terminal signals its foreground process group: snakemake, its jobs and tee,
    # which then closes the pipe that snakemake's standard output is
    with (root / "stderr.txt").open("w") as err_file:
        run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, process_group=0)
        tee = subprocess.Popen(
            ["tee", str(root / "run.log")], stdin=run.stdout, stdout=subprocess.DEVNULL,
            process_group=run.pid,
        )  # fmt: skip
        run.stdout.close()
        while run.poll() is None and not _a_generation_finished(proj.root):
            time.sleep(0.05)  # until a job has finished (no deadline: a busy machine waits)
        assert run.poll() is None, "the run ended before it could be interrupted"
        os.killpg(run.pid, signal.SIGINT)
        run.wait()
        tee.wait()
    out = (root / "run.log").read_text()
    err = (root / "stderr.txt").read_text()
    assert tee.returncode == -signal.SIGINT, tee.returncode  # the pipe was closed
    assert run.returncode == 130, (run.returncode, out[-3000:], err[-3000:])
    ledger = proj.results / "runs.jsonl"
    runs = [json.loads(x) for x in ledger.read_text().splitlines()] if ledger.is_file() else None
    return proj, out, err, runs


def _counted_honestly(proj, err: str, run: dict) -> None:
    """The interrupted run's ledger line counts the jobs that finished, as Snakemake reports
    them and as the records of the generation and scoring jobs show (one each; a stopped job's
    record is discarded with its output), and names the jobs it stopped as stopped, not
    failed."""
    assert run["jobs"] == finished_counts(err) and run["jobs"].get("generate", 0) >= 1
    assert run["jobs_total"] == sum(n for rule, n in run["jobs"].items() if rule != "all")
    records = [p.name for p in (proj.results / "provenance").glob("*.json")]
    for rule, prefix in (("generate", "generations__"), ("score", "scores__")):
        assert run["jobs"].get(rule, 0) == sum(r.startswith(prefix) for r in records), records
    assert run["failed"] == [], run
    # every job Snakemake showed started and did not see finish, and no finished one (a job it
    # started as the interrupt came may not be shown; none is stopped when the interrupt fell
    # between jobs: a loaded machine makes both likely)
    stopped = {(j["rule"], j["log"]) for j in run["stopped"]}
    running, finished = _jobs_at_the_stop(err)
    assert running <= stopped and not stopped & finished, (stopped, running, finished)
    assert all(rule and log for rule, log in stopped), stopped


#: a job's start as Snakemake prints it: its rule, then its output, log and id lines
_STARTED = re.compile(
    r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    log: ([^,\n]+).*\n    jobid: (\d+)$", re.M
)


def _jobs_at_the_stop(err: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (rule, first log) of each job the run's output shows started, as (not finished,
    finished)."""
    done = set(re.findall(r"^Finished jobid: (\d+)", err, re.M))
    started = _STARTED.findall(err)
    return (
        {(rule, log) for rule, log, jobid in started if jobid not in done},
        {(rule, log) for rule, log, jobid in started if jobid in done},
    )


@pytest.mark.slow
def test_ctrl_c_stops_the_run_in_one_line_and_the_same_command_resumes(tmp_path):
    """Every attempt ends with status 130, the stop's line last on the terminal (stderr: the
    same Ctrl-C closed the pipe to ``tee``) and in the ledger as ``interrupted`` with the jobs
    that finished and those stopped. A job that gets the signal while Snakemake's script
    preamble imports prints Python's own traceback, and a loaded machine makes that likely, so
    the interrupt is then tried again on a fresh project, up to :data:`ATTEMPTS` times; one of
    them must show no traceback, and no traceback may come from tailgate's code."""
    seen = []
    for attempt in range(ATTEMPTS):
        proj, out, err, runs = _interrupted_run(tmp_path / f"small{attempt}")
        assert err.splitlines()[-1] == f"tailgate · study small · {STOPPED}", err[-3000:]
        assert STOPPED not in out and "fix the cause" not in out + err
        assert "WorkflowError" not in err and "BrokenPipe" not in err, err[-3000:]
        assert [r["outcome"] for r in runs or []] == ["interrupted"], err[-3000:]
        _counted_honestly(proj, err, runs[0])
        if "Traceback" not in out + err:
            break
        outside = _outside_a_job_start_up(out + err)
        assert not outside, "Traceback" + "\n---\nTraceback".join(outside)[-4000:]
        seen.append(out[-1500:] + err[-1500:])
    else:
        raise AssertionError(
            "no attempt was interrupted without a traceback:\n" + "\n---\n".join(seen)
        )
    kept = {p: p.stat().st_mtime_ns for p in (proj.results / "generations").rglob("*.parquet")}
    assert kept  # the job that finished before Ctrl-C
    # the same command resumes: the finished jobs are kept, the run ends with the answer
    again = proj.snakemake()
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "tailgate · study small · run 2 · success" in again.stdout
    runs = [json.loads(x) for x in (proj.results / "runs.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in runs] == ["interrupted", "success"]
    assert {p: p.stat().st_mtime_ns for p in kept} == kept  # resumed, not restarted
    # and once more: nothing to do, and the answer is printed all the same (no ledger line)
    idle = proj.snakemake()
    assert idle.returncode == 0, idle.stdout[-3000:] + idle.stderr[-3000:]
    verdict = json.loads((proj.results / "verdict.json").read_text())
    assert "tailgate · study small · up to date (0 job(s) run)" in idle.stdout
    assert f"answer: {verdict['answer']['outcome']}" in idle.stdout
    assert len((proj.results / "runs.jsonl").read_text().splitlines()) == 2


def test_a_job_stopped_while_it_starts_ends_with_the_interrupt_status_and_no_traceback(tmp_path):
    """Ctrl-C after a rule script's first line (its imports, its rule's parameters) and before
    its stage begins: the job exits 130 without a traceback; without the rule scripts' start-up
    handler the interpreter prints one and dies of the signal (the control below)."""
    job = tmp_path / "job.py"
    job.write_text(
        "import _tailgate  # noqa: F401\n"
        "import time\n"
        "print('started', flush=True)\n"
        "while True:\n"
        "    time.sleep(0.01)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAILGATE_")}
    env["PYTHONPATH"] = str(REPO_ROOT / "workflow" / "scripts")
    for control in (False, True):
        if control:
            job.write_text(job.read_text().replace("import _tailgate  # noqa: F401\n", ""))
        proc = subprocess.Popen(
            [sys.executable, str(job)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip
        assert proc.stdout.readline() == "started\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate()
        if control:
            assert proc.returncode == -signal.SIGINT and "KeyboardInterrupt" in err, err
        else:
            assert proc.returncode == 130 and err == "", err


#: a terminal that gets Ctrl-C while Snakemake's log handler writes a line to it; the script
#: prints what became of the interrupt
_LOG_LINE_INTERRUPTED = """
import logging, signal, sys, time
from snakemake.logging import ColorizingTextHandler
from tailgate.runs.interrupts import run_outcome, watch_interrupts

class Terminal:
    sent = False
    def write(self, text):
        if not Terminal.sent:
            Terminal.sent = True
            signal.raise_signal(signal.SIGINT)
    def flush(self):
        pass

if sys.argv[1] == "watched":
    watch_interrupts()
line = logging.LogRecord("snakemake", logging.INFO, "", 1, "Finished jobid: 3", None, None)
try:
    ColorizingTextHandler(nocolor=True, stream=Terminal()).emit(line)
    print("after the log line", flush=True)
    if sys.argv[1] == "watched":  # delivered again a moment later: waits at most 2 minutes
        end = time.monotonic() + 120
        while time.monotonic() < end:
            time.sleep(0.01)
    print("lost")
except KeyboardInterrupt:
    print("stopped:", run_outcome(succeeded=False))
"""


def test_a_ctrl_c_that_lands_while_snakemake_writes_a_log_line_still_stops_the_run(tmp_path):
    """Snakemake's terminal log handler swallows ``KeyboardInterrupt`` (the control: the
    interrupt is lost and the run would go on to ``success``); with the run's watch, the
    signal is delivered again once the line is written, and stops the run as ``interrupted``."""
    script = tmp_path / "log_line.py"
    script.write_text(_LOG_LINE_INTERRUPTED)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "workflow")}
    said = {}
    for how in ("plain", "watched"):
        res = subprocess.run(
            [sys.executable, str(script), how], capture_output=True, text=True, env=env
        )
        assert res.returncode == 0, res.stderr[-3000:]
        said[how] = res.stdout.splitlines()
    assert said["plain"] == ["after the log line", "lost"]
    assert said["watched"] == ["after the log line", "stopped: interrupted"]


def test_the_places_of_snakemake_where_an_interrupt_waits_exist():
    """Each function of Snakemake named where an interrupt is delivered again (a lost
    interrupt, or a job half-way through its bookkeeping) is defined in the installed Snakemake:
    a rename would silently bring back the run that goes on after Ctrl-C or the job counted
    nowhere."""
    root = Path(snakemake.__file__).parent
    for file, name in _LOSES_INTERRUPT:
        tree = ast.parse((root / file).read_text())
        defined = {
            n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        assert name in defined, (file, name)


#: a run's end hooks: the first Ctrl-C stopped the run, a second lands while its end is written
_SECOND_CTRL_C = """
import signal, sys
from tailgate.runs.interrupts import exit_if_interrupted, run_outcome, watch_interrupts

watch_interrupts()
try:
    signal.raise_signal(signal.SIGINT)
except KeyboardInterrupt:
    outcome = run_outcome(succeeded=False)
    signal.raise_signal(signal.SIGINT)  # only noted: the end is written whole
    print(outcome, "and its line written", flush=True)
    exit_if_interrupted()
print("not stopped")
"""


def test_a_second_ctrl_c_waits_for_the_end_of_the_run_which_exits_with_the_interrupt_status(
    tmp_path,
):
    script = tmp_path / "second.py"
    script.write_text(_SECOND_CTRL_C)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "workflow")}
    # started as from a terminal, with Ctrl-C's default action (a test before may have left the
    # worker ignoring SIGINT, which a child inherits: then Ctrl-C stops nothing)
    res = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert res.returncode == 130 and res.stderr == "", res.stderr[-3000:]
    assert res.stdout == "interrupted and its line written\n"


#: a rule job whose stage has ended (here with a user error) gets Ctrl-C while the interpreter
#: runs its clean-up at exit
_CTRL_C_AT_EXIT = """
import atexit, os, runpy, signal, sys, time, types

def clean_up():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)

atexit.register(clean_up)
sys.path.insert(0, sys.argv[1])
sm = types.SimpleNamespace(
    rule="sensitivity", log=["job.log"], threads=1, wildcards=None,
    input=types.SimpleNamespace(gates=["gates.json"]),
    output=types.SimpleNamespace(sensitivity="sensitivity.json"),
    params=types.SimpleNamespace(prereg="preregistrations/missing.yaml"),
)
runpy.run_path(sys.argv[2], init_globals={"snakemake": sm}, run_name="__main__")
"""


def test_a_ctrl_c_after_a_job_s_stage_ended_leaves_its_exit_as_it_was(tmp_path):
    """The job ends with its own status (2: the registration is missing) and the message its
    stage wrote, without the traceback of an interrupted clean-up at exit."""
    script = tmp_path / "job.py"
    script.write_text(_CTRL_C_AT_EXIT)
    scripts = REPO_ROOT / "workflow" / "scripts"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAILGATE_")}
    res = subprocess.run(
        [sys.executable, str(script), str(scripts), str(scripts / "stage.py")],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr[-3000:]
    assert "missing.yaml" in res.stderr and "Traceback" not in res.stderr, res.stderr[-3000:]


def test_a_signal_the_run_started_ignoring_stays_ignored_and_stops_nothing() -> None:
    """A run started with SIGINT ignored (a shell's background job) keeps ignoring it: a SIGINT
    then is neither a stop nor an ``interrupted`` run."""
    from tailgate.runs import interrupts

    stopped, ending = list(interrupts._STOPPED), list(interrupts._ENDING)
    interrupts._STOPPED.clear()
    interrupts._ENDING.clear()
    saved = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        interrupts.watch_interrupts()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.raise_signal(signal.SIGINT)
        assert not interrupts._STOPPED and interrupts.run_outcome(succeeded=False) == "error"
    finally:
        interrupts._STOPPED[:], interrupts._ENDING[:] = stopped, ending
        signal.signal(signal.SIGINT, saved)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
