"""Errors that carry their own exit code and a one-paragraph message for the user.

:class:`TailgateError` is the one root: an instance is a problem the user can see and fix, and the
``tailgate`` command and every rule job (:func:`tailgate.stages.rule.run`) print its message
without a traceback and exit with its code. The stable exit codes: 2 invalid input or usage
(:class:`InputError` and its kinds: :class:`PreregError`, :class:`DataInputError`,
:class:`ShardInputError`, and the transform's, the report's and the importer's errors), 3 refusal
because a pre-registration differs from its lock or the lock is broken (:class:`RefusalError`,
:class:`tailgate.prereg.lock.LockIntegrityError`), 4 a damaged record (:class:`DamagedFileError`).
Any other exception is an internal error (exit 1, with a traceback: a bug).
"""

from __future__ import annotations

__all__ = [
    "CPU_TORCH",
    "EXIT_AUDIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_REFUSED",
    "DamagedFileError",
    "DataInputError",
    "InputError",
    "PreregError",
    "RefusalError",
    "ShardInputError",
    "TailgateError",
    "install_fix",
]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
EXIT_REFUSED = 3
EXIT_AUDIT_FAILED = 4

#: PyTorch's CPU build (the version envs/requirements.lock pins): a plain ``pip install`` of an
#: extra that needs torch takes the CUDA build, several GB, on a machine without a GPU
CPU_TORCH = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
#: the extras whose packages need torch
_TORCH_EXTRAS = frozenset({"llm", "harness"})


def install_fix(extra: str) -> str:
    """The install line of the project's optional ``extra``, run in the project's folder, as a
    fix to print: the locked versions, PyTorch's CPU build first where the extra needs torch."""
    line = f"pip install -c envs/requirements.lock -e '.[{extra}]' (in the project's folder)"
    if extra in _TORCH_EXTRAS:
        return f"{CPU_TORCH}, then {line} (with a GPU: pip install torch==2.13.0 first instead)"
    return line


class TailgateError(Exception):
    """Base class: ``str(err)`` is the complete message shown to the user."""

    exit_code: int = EXIT_INTERNAL


class InputError(TailgateError):
    """Invalid input or usage that is not a pre-registration field (exit 2)."""

    exit_code = EXIT_INVALID


class DataInputError(InputError, ValueError):
    """Bad user input for a data backend (a registration field or an imported file).

    The message is one paragraph that names the file, the field or row, what is wrong and how
    to fix it (exit 2). A :class:`ValueError` too, as it was before it had this root.
    """


class ShardInputError(DataInputError):
    """Bad input to a generation or scoring shard, or to the registered model it loads (exit 2)."""


class DamagedFileError(TailgateError):
    """A recorded file (ledger, record, statistics) is damaged: not what tailgate wrote (exit 4,
    the audit's code: the evidence does not hold)."""

    exit_code = EXIT_AUDIT_FAILED


class PreregError(InputError):
    """An invalid pre-registration: names the file, the line, the field and the fix (exit 2)."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.fix = fix
        self.problem = message
        where = file or "<pre-registration>"
        if line is not None:
            where = f"{where}, line {line}"
        text = f"{where}: "
        if field:
            text += f"field '{field}': "
        text += message.rstrip(".") + "."
        if fix:
            text += f" Fix: {fix.rstrip('.')}" + ("" if fix.endswith("?") else ".")
        super().__init__(text)


class RefusalError(TailgateError):
    """The pre-registration differs from its lock, or the lock is missing or broken (exit 3).

    ``changes`` holds the field-level diff (a list of :class:`tailgate.prereg.diff.Change`) when
    one could be computed.
    """

    exit_code = EXIT_REFUSED

    def __init__(self, message: str, changes: list | None = None) -> None:
        self.changes = list(changes or [])
        super().__init__(message)
