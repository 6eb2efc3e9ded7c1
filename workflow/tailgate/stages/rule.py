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


def run(log: str, stage: Callable[..., Any], **kwargs: Any) -> None:
    """Call ``stage(**kwargs)`` with stdout/stderr in ``log``; exit with the error's code."""
    with open(log, "w", encoding="utf-8") as fh:
        code = 0
        message = ""
        with contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
            try:
                # the rule script's start-up handler (scripts/_tailgate.py) ends here: from now
                # on Ctrl-C is a KeyboardInterrupt the stage cleans up after
                signal.signal(signal.SIGINT, signal.default_int_handler)
                stage(**kwargs)
            except KeyboardInterrupt:  # Ctrl-C stops the run: the run says so, once
                code = 130
                message = ""
            except Exception as exc:
                if is_user_error(exc):
                    code = exc.exit_code
                    message = str(exc)
                    print(message)
                else:
                    traceback.print_exc()
                    code = EXIT_INTERNAL
                    message = f"internal error in {stage.__name__}; see the traceback in {log}"
    if code:
        if message:
            print(message, file=sys.stderr)
        sys.exit(code)
