"""The ``tailgate`` command: small verbs with exit codes that scripts can trust.

One module per verb or group of verbs, each adding its own arguments on the shared base
(:mod:`tailgate.cli.base`: the parser, ``--json`` documents, error → exit code):

* :mod:`~tailgate.cli.init` ``init`` and :mod:`~tailgate.cli.design` ``design``: authoring a
  study before it is frozen;
* :mod:`~tailgate.cli.lock` ``freeze``, ``amend``, ``verify``: the lock;
* :mod:`~tailgate.cli.status` ``status``, :mod:`~tailgate.cli.audit` ``audit``,
  :mod:`~tailgate.cli.env` ``env``, :mod:`~tailgate.cli.export` ``export``,
  :mod:`~tailgate.cli.bundle` ``bundle``: a study's results;
* :mod:`~tailgate.cli.analyses` ``multiverse`` and ``composite``: alternative analyses and
  designs.

Exit codes: 0 ok, 1 internal error, 2 invalid input or usage, 3 the pre-registration differs
from its lock (refusal), 4 audit failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tailgate import __version__
from tailgate.cli import analyses, audit, bundle, design, env, export, init, lock, status
from tailgate.cli.base import EXIT_CODES, Parser, PipeSafeStdout, call, printable
from tailgate.user_cache import use_kernel_cache

__all__ = ["build_parser", "main"]

#: the verbs in the order ``tailgate --help`` lists them
VERBS = (
    design.add_design,
    init.add_init,
    export.add_export,
    analyses.add_composite,
    analyses.add_multiverse,
    lock.add_freeze,
    lock.add_verify,
    status.add_status,
    lock.add_amend,
    audit.add_audit,
    bundle.add_bundle,
    env.add_env,
)


def build_parser() -> argparse.ArgumentParser:
    """The command's parser: the global options and every verb's."""
    parser = Parser(
        prog="tailgate",
        description="Pre-registered, auditable tail-shape claims for LLM evaluation.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tailgate {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback for internal errors")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=Parser)
    sub.required = True
    for add in VERBS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit code."""
    if argv is None and not isinstance(sys.stdout, PipeSafeStdout):  # the command line
        sys.stdout = PipeSafeStdout(printable(sys.stdout))  # type: ignore[assignment]
        sys.stderr = printable(sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0)
    use_kernel_cache()  # the verbs that simulate compile or load numba's kernels there
    return call(args)
