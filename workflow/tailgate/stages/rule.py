"""The adapter between a Snakemake job and a stage function: one log per job, clean exits.

:func:`run` sends the stage's output (messages, tqdm progress bars) to the job's log file. A user
error — an invalid or changed pre-registration, bad input data: an instance of the one root
:class:`tailgate.errors.TailgateError`, by which the ``tailgate`` command decides too — is written
to the log and to the job's stderr as the one-paragraph message it carries, without a traceback,
and the job exits with the error's code (2 invalid input, 3 refused); a job stopped by Ctrl-C
exits 130 without a traceback (the run prints one line for it); anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

from tailgate.errors import EXIT_INTERNAL, TailgateError

__all__ = ["is_user_error", "results_of", "run"]


def is_user_error(exc: BaseException) -> TypeGuard[TailgateError]:
    """Whether ``exc`` is a user error: an instance of the one root, :class:`TailgateError`
    (the ``tailgate`` command decides by the same class)."""
    return isinstance(exc, TailgateError)


def results_of(prereg: str) -> str:
    """The study's results folder, ``results/<study>`` relative to the working directory.

    The study name equals the pre-registration's file stem (schema rule), so the folder follows
    from the registered file alone and need not travel as a hard-coded rule parameter.
    """
    return str(Path("results") / Path(prereg).stem)


def _stopped(_signum: int, _frame: Any) -> None:
    """Ctrl-C once the stage has ended (while the log closes, or while its error is reported):
    the job ends with the interrupt's status, as at start-up, without a traceback."""
    raise SystemExit(130)


def run(log: str, stage: Callable[..., Any], **kwargs: Any) -> None:
    """Call ``stage(**kwargs)`` with stdout/stderr in ``log``; exit with the error's code.

    Ctrl-C reaches the stage as a ``KeyboardInterrupt`` it cleans up after; from the moment the
    stage ends, a Ctrl-C (whenever it arrives: closing the log, reporting an error) ends the job
    with status 130 and no traceback too.
    """
    code = 0
    message = ""
    try:
        with (
            open(log, "w", encoding="utf-8") as fh,
            contextlib.redirect_stdout(fh),
            contextlib.redirect_stderr(fh),
        ):
            try:
                # the rule script's start-up handler (scripts/_tailgate.py) ends here: from now
                # on Ctrl-C is a KeyboardInterrupt the stage cleans up after
                signal.signal(signal.SIGINT, signal.default_int_handler)
                stage(**kwargs)
            except Exception as exc:
                code, message = _reported(exc, stage.__name__, log)
            finally:
                signal.signal(signal.SIGINT, _stopped)
    except KeyboardInterrupt:  # Ctrl-C stopped the stage (or its report): the run says so, once
        code, message = 130, ""
    if code:
        if message:
            print(message, file=sys.stderr)
        sys.exit(code)


def _reported(exc: Exception, name: str, log: str) -> tuple[int, str]:
    """Write ``exc`` to the log (a user error's message, else the traceback); the job's exit
    status and its line for the terminal."""
    if is_user_error(exc):
        print(str(exc))
        return exc.exit_code, str(exc)
    traceback.print_exc()
    return EXIT_INTERNAL, f"internal error in {name}; see the traceback in {log}"
