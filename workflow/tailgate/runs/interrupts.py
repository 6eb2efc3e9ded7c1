"""A run stopped by SIGINT (Ctrl-C) or SIGTERM: the stop always stops the run, the ledger calls
it ``interrupted``, the run ends with the stop's line last and status 130 (143 for SIGTERM), and
the same command resumes.

:func:`watch_interrupts` (the Snakefile's ``onstart``) notes the signal and passes it on to the
handler Snakemake installed, which raises ``KeyboardInterrupt`` in whatever Snakemake's main
thread is doing. Two places of Snakemake would turn that into something else: its terminal log
handler swallows the exception (a Ctrl-C that lands while a log line is written is lost, and the
run goes on to ``success``), and the evaluation of a rule's resources re-raises it as an input
function error (the run ends without its hooks). Three more would leave a job half-way through
its bookkeeping: the start of jobs (a job already running, its outputs not yet marked incomplete,
so never discarded), the finishing of jobs (outputs checked and logged as finished, the job not
yet marked finished in the DAG) and the handling of a failed one (no longer running, not yet
failed). A signal that lands in any of these is delivered to the main thread again a moment
later, until it lands where Snakemake stops the run, so that every job is finished, failed or
running, its outputs marked incomplete, when it does.

:func:`run_outcome` (first thing in ``onsuccess`` and ``onerror``) says whether a signal stopped
the run; from then on a further signal is only noted, so that a second Ctrl-C does not cut the
ledger line short. :func:`unfinished_jobs` tells the jobs that failed from those the signal
stopped (Ctrl-C signals the terminal's whole process group, every running job with Snakemake),
:func:`discard_incomplete` removes the outputs of the jobs stopped mid-way, so that the same
command resumes (the finished jobs are kept), and :func:`exit_if_interrupted` (last in
``onerror``) ends the process with the signal's status before Snakemake adds its own error
report below the run's line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

__all__ = [
    "discard_incomplete",
    "exit_if_interrupted",
    "run_outcome",
    "unfinished_jobs",
    "watch_interrupts",
]

#: the signals that stopped this run (set by :func:`watch_interrupts`' handlers)
_STOPPED: list[int] = []
#: the jobs that had failed when the first signal came (Snakemake's scheduler's ``failed``)
_FAILED_BEFORE: list[Any] = []
#: set by :func:`run_outcome`: the run is ending, a further signal is only noted
_ENDING: list[bool] = []

#: seconds before a signal that landed where it would be lost is delivered again
RETRY_S = 0.05

#: functions of Snakemake (its file, the function's name) that catch ``KeyboardInterrupt`` and
#: go on (its terminal log handler), raise another error in its place (a rule's resources), or
#: would leave a job half-way between running and finished or failed (module docstring)
_LOSES_INTERRUPT = (
    ("logging.py", "emit"),
    ("rules.py", "evaluate"),
    ("scheduling/job_scheduler.py", "run"),
    ("scheduling/job_scheduler.py", "_finish_jobs"),
    ("scheduling/job_scheduler.py", "_handle_error"),
)


def watch_interrupts(workflow: Any = None) -> None:
    """Note SIGINT and SIGTERM when they arrive (and, at the first, the jobs of ``workflow``
    that had already failed), then pass each on to the handler that was there (Snakemake's: it
    cancels the running jobs and ends the run through ``onerror``), or deliver it again shortly
    where that handler's exception would be lost (module docstring).
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous = signal.getsignal(sig)
        except ValueError:  # not the main thread: nothing to watch
            return
        if previous == signal.SIG_IGN:  # started ignoring it (a shell's background job): it
            continue  # stops nothing, so it is not a stop of the run either

        def noted(signum: int, frame: FrameType | None, previous: Any = previous) -> None:
            if not _STOPPED:
                _FAILED_BEFORE.extend(_failed(workflow))
            _STOPPED.append(signum)
            if _ENDING:  # the run's end hooks: its ledger line and its last line are written whole
                return
            if _would_be_lost(frame):
                _deliver_again(signum)
            elif callable(previous):
                previous(signum, frame)
            elif previous == signal.SIG_DFL and signum == signal.SIGINT:
                raise KeyboardInterrupt
            elif previous == signal.SIG_DFL:
                raise SystemExit(128 + signum)

        try:
            signal.signal(sig, noted)
        except ValueError:
            return


def _would_be_lost(frame: FrameType | None) -> bool:
    """Whether an exception raised in ``frame`` passes through a function of
    :data:`_LOSES_INTERRUPT`."""
    while frame is not None:
        code = frame.f_code
        if any(
            code.co_name == name and code.co_filename.endswith(os.path.join("snakemake", file))
            for file, name in _LOSES_INTERRUPT
        ):
            return True
        frame = frame.f_back
    return False


def _deliver_again(signum: int) -> None:
    """Send ``signum`` to the main thread after :data:`RETRY_S` seconds: a thread waiting there
    wakes to handle it."""
    main = threading.main_thread().ident

    def send() -> None:
        try:
            signal.pthread_kill(main, signum)
        except (OSError, TypeError):  # the process is ending
            pass

    timer = threading.Timer(RETRY_S, send)
    timer.daemon = True
    timer.start()


def _failed(workflow: Any) -> list[Any]:
    """The jobs of ``workflow`` that failed so far (none without a workflow or a scheduler)."""
    return list(getattr(getattr(workflow, "scheduler", None), "failed", None) or [])


def run_outcome(succeeded: bool) -> str:
    """The ledger outcome of a run that ends (``succeeded``: Snakemake's ``onsuccess``):
    ``success``, else ``interrupted`` when SIGINT or SIGTERM stopped it, else ``error``. From
    this call on, a further signal is only noted (module docstring)."""
    _ENDING.append(True)
    if succeeded:
        return "success"
    return "interrupted" if _STOPPED else "error"


def unfinished_jobs(workflow: Any) -> tuple[list[Any], list[Any]]:
    """The jobs of the run that started and did not finish, as (failed, stopped). Without a
    signal, the jobs that failed. After one, the jobs that had failed before it stay failed;
    those that failed after it, and those still running when Snakemake stopped waiting for them
    (it cancels them without looking at their end), were stopped by it."""
    failed = _failed(workflow)
    if not _STOPPED:
        return failed, []
    before = {id(j) for j in _FAILED_BEFORE}
    finished = set(map(id, workflow.dag.finished_jobs))
    stopped = [j for j in failed if id(j) not in before]
    stopped += [j for j in workflow.scheduler.running if id(j) not in finished]
    return [j for j in failed if id(j) in before], stopped


def exit_if_interrupted() -> None:
    """End the process with the status of a process stopped by the signal (130 for SIGINT, 143
    for SIGTERM) when one stopped the run: Snakemake would otherwise print its log's path and a
    ``WorkflowError`` below the run's last line, and exit 1. Its lock is released on the way out
    (the exception passes through its ``finally`` blocks). Standard output is flushed first; where
    it was a pipe that the same Ctrl-C closed (``| tee``), it is pointed at ``/dev/null``, so that
    Python's own flush at exit neither fails nor prints below the run's line."""
    if not _STOPPED:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, sys.stdout.fileno())
            os.close(fd)
        except (OSError, ValueError):
            pass
    raise SystemExit(128 + _STOPPED[0])


def discard_incomplete(workflow: Any) -> list[str]:
    """After an interrupt: delete the outputs of the jobs that were stopped mid-way (Snakemake
    marks them incomplete), with their metadata, so that the same command resumes and re-runs
    exactly those jobs (what ``--rerun-incomplete`` would do); finished jobs are kept. Returns
    the paths deleted; never raises (the run's outcome stands)."""
    gone: list[str] = []
    try:
        persistence = workflow.persistence
        for job in list(workflow.dag.jobs):
            for f in workflow.async_run(persistence.incomplete(job)) or []:
                path = str(f)
                if os.path.lexists(path) and not os.path.isdir(path):
                    os.remove(path)
                persistence.cleanup_metadata(f)
                gone.append(path)
    except Exception as exc:  # Snakemake's internals: a hook must not crash the run's end
        print(f"tailgate: incomplete outputs were not cleaned up ({exc}); run the same "
              "command with --rerun-incomplete", file=sys.stderr)  # fmt: skip
    return gone
