"""The shared base of the ``tailgate`` command: its parser, its ``--json`` documents, and how an
error becomes an exit code.

Exit codes: 0 ok, 1 internal error, 2 invalid input or usage, 3 the pre-registration differs
from its lock (refusal), 4 audit failed. A user's mistake is an instance of the one root
:class:`tailgate.errors.TailgateError`: its message is printed without a traceback and its code
returned (the rule jobs decide by the same class, :func:`tailgate.stages.rule.run`); anything else
is a bug (exit 1).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from tailgate.errors import EXIT_INTERNAL, EXIT_INVALID, TailgateError

__all__ = [
    "EXIT_CODES",
    "JSON_VERSION",
    "Parser",
    "PipeSafeStdout",
    "Verbs",
    "call",
    "print_json",
    "printable",
    "verb",
]

EXIT_CODES = """exit codes:
  0  ok
  1  internal error (a bug: please report it with the command line)
  2  invalid input or usage (the message names the file, line, field and fix)
  3  refused: the pre-registration differs from its lock (or has none)
  4  audit failed"""

#: the version of every ``--json`` shape (``format``: ``tailgate.<verb>/<version>``)
JSON_VERSION = 1

#: the command's verbs, as argparse collects them
Verbs = Any  # argparse._SubParsersAction[Parser]; argparse has no public name for it


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, one paragraph, no traceback
        self.print_usage(sys.stderr)
        print(
            f"{self.prog}: error: {message}. Run '{self.prog} --help' for usage.", file=sys.stderr
        )
        raise SystemExit(EXIT_INVALID)


def verb(
    sub: Verbs,
    name: str,
    help_: str,
    description: str,
    func: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """Add the verb ``name`` (its one-line help, its description and the exit codes below it),
    run by ``func``."""
    p = sub.add_parser(
        name,
        help=help_,
        description=description,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=func)
    return p


def print_json(verb: str, doc: dict[str, Any]) -> None:
    """A ``--json`` document: ``format`` names the verb and the shape's version (README)."""
    print(
        json.dumps(
            {"format": f"tailgate.{verb}/{JSON_VERSION}", **doc},
            indent=1,
            ensure_ascii=False,
            default=str,
        )
    )


def call(args: argparse.Namespace) -> int:
    """Run the parsed verb; its exit code, or the error's (user's mistake: the message, no
    traceback; a bug: exit 1, the traceback with ``--debug``)."""
    try:
        return int(args.func(args))
    except TailgateError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("tailgate: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(
            f"tailgate: internal error: {type(exc).__name__}: {exc}. This is a bug; rerun with "
            "--debug for a traceback and report it.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def printable(stream: Any) -> Any:
    """``stream`` writing what its encoding cannot hold as backslash escapes (``\\u2192``)
    instead of failing: on a terminal that is not UTF-8 (``PYTHONIOENCODING=ascii``, a Latin-1
    locale) a registered title or a file name in another script must not end the command."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="backslashreplace")
    return stream


class PipeSafeStdout:
    """Standard output that survives its reader going away (``tailgate amend … | head -1``):
    the command finishes its work and returns its own exit code, and the rest of its output is
    dropped. A closed pipe is the reader's choice, not an internal error."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._closed = False

    def write(self, text: str) -> int:
        if not self._closed:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self._closed = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())  # the interpreter's last flush goes nowhere
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
