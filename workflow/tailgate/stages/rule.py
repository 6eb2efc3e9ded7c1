"""The adapter between a Snakemake job and a stage function: one log per job, clean exits.

:func:`run` sends the stage's output (messages, tqdm progress bars) to the job's log file. A user
error — an invalid or changed pre-registration, bad input data — is written to the log and to the
job's stderr as the one-paragraph message it carries, without a traceback, and the job exits with
the error's code (2 invalid input, 3 refused); anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tailgate.errors import EXIT_INTERNAL, EXIT_INVALID, TailgateError

__all__ = ["USER_ERRORS", "results_of", "run"]


def _user_errors() -> tuple[type[BaseException], ...]:
    from tailgate.generate import DataInputError
    from tailgate.report.model import ReportInputError
    from tailgate.score.common import ScoringError
    from tailgate.transform import TransformError

    return (TailgateError, DataInputError, ScoringError, TransformError, ReportInputError)


USER_ERRORS = _user_errors()


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
                stage(**kwargs)
            except USER_ERRORS as exc:
                code = getattr(exc, "exit_code", EXIT_INVALID)
                message = str(exc)
                print(message)
            except Exception:
                traceback.print_exc()
                code = EXIT_INTERNAL
                message = f"internal error in {stage.__name__}; see the traceback in {log}"
    if code:
        print(message, file=sys.stderr)
        sys.exit(code)
