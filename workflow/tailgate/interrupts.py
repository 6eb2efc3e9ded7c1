"""A run stopped by SIGINT (Ctrl-C) or SIGTERM: the stop always stops the run, the ledger calls
it ``interrupted``, and the same command resumes.

:func:`watch_interrupts` (the Snakefile's ``onstart``) notes the signal and passes it on to the
handler Snakemake installed, which raises ``KeyboardInterrupt`` in whatever Snakemake's main
thread is doing. Two places of Snakemake would turn that into something else: its terminal log
handler swallows the exception (a Ctrl-C that lands while a log line is written is lost, and the
run goes on to ``success``), and the evaluation of a rule's resources re-raises it as an input
function error (the run ends without its hooks). A signal that lands there is delivered to the
main thread again a moment later, until it lands where Snakemake stops the run.

:func:`failed_outcome` (``onerror``) says whether a signal stopped the run, and
:func:`discard_incomplete` removes the outputs of the jobs stopped mid-way, so that the same
command resumes (the finished jobs are kept).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import Any

__all__ = ["discard_incomplete", "failed_outcome", "watch_interrupts"]

#: the signals that stopped this run (set by :func:`watch_interrupts`' handlers)
_STOPPED: list[int] = []

#: seconds before a signal that landed where it would be lost is delivered again
RETRY_S = 0.05

#: functions of Snakemake (its file, the function's name) that catch ``KeyboardInterrupt`` and
#: go on (its terminal log handler), or raise another error in its place (a rule's resources)
_LOSES_INTERRUPT = (("logging.py", "emit"), ("rules.py", "evaluate"))


def watch_interrupts() -> None:
    """Note SIGINT and SIGTERM when they arrive, then pass each on to the handler that was
    there (Snakemake's: it cancels the running jobs and ends the run through ``onerror``), or
    deliver it again shortly where that handler's exception would be lost (module docstring).
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous = signal.getsignal(sig)
        except ValueError:  # not the main thread: nothing to watch
            return

        def noted(signum: int, frame: FrameType | None, previous: Any = previous) -> None:
            _STOPPED.append(signum)
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


def failed_outcome() -> str:
    """The ledger outcome of a run that did not succeed: ``interrupted`` when SIGINT or SIGTERM
    stopped it, else ``error``."""
    return "interrupted" if _STOPPED else "error"


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
