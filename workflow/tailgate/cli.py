"""The ``tailgate`` command: small verbs with exit codes that scripts can trust.

Exit codes: 0 ok, 1 internal error, 2 invalid input or usage, 3 the pre-registration differs
from its lock (refusal), 4 audit failed.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from tailgate import __version__
from tailgate.errors import (
    EXIT_AUDIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    TailgateError,
)

EXIT_CODES = """exit codes:
  0  ok
  1  internal error (a bug: please report it with the command line)
  2  invalid input or usage (the message names the file, line, field and fix)
  3  refused: the pre-registration differs from its lock (or has none)
  4  audit failed"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, one paragraph, no traceback
        self.print_usage(sys.stderr)
        print(
            f"{self.prog}: error: {message}. Run '{self.prog} --help' for usage.", file=sys.stderr
        )
        raise SystemExit(EXIT_INVALID)


def _cmd_design(args: argparse.Namespace) -> int:
    from tailgate.prereg.design import derived_design, describe, simulated_power
    from tailgate.prereg.study import load

    study = load(args.prereg)
    design = derived_design(study)
    design, sim_line = simulated_power(study, design)
    print(f"study {study.name}: valid (schema version {study.data['schema_version']})")
    print(f"canonical hash {study.canonical_hash}")
    for line in describe(design):
        print(line)
    print(sim_line)
    return EXIT_OK


def _cmd_freeze(args: argparse.Namespace) -> int:
    from tailgate.prereg.freeze import freeze

    res = freeze(args.prereg, results_dir=args.results)
    head = res.lock.head
    if res.action == "unchanged":
        print(
            f"{res.study.path}: already frozen, matches {res.lock.path.name} (entry {head['seq']})"
        )
    else:
        verb = "re-frozen (no data existed)" if res.action == "refrozen" else "frozen"
        print(f"{res.study.path}: {verb} → {res.lock.path}")
    print(f"canonical hash {res.study.canonical_hash}")
    print(
        f"n_exc* = {res.design.n_exc_required}, prompts required {res.design.prompts_required}, "
        f"planned {res.design.min_prompts}"
        + ("" if res.design.cap_meets_bound else f" (accepted power {res.design.accepted_power:g})")
    )
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace) -> int:
    from tailgate.prereg.guard import require_frozen

    study = require_frozen(args.prereg, results_dir=args.results)
    print(f"{study.path}: matches the chain head of {study.lock_path.name}")
    print(f"canonical hash {study.canonical_hash}")
    return EXIT_OK


def _cmd_amend(args: argparse.Namespace) -> int:
    from tailgate.prereg.diff import format_changes
    from tailgate.prereg.freeze import amend

    res = amend(args.prereg, args.reason, results_dir=args.results)
    print(
        f"{res.study.path}: amendment {res.entry['seq']} appended to {res.lock.path.name}"
        + (" (data already existed)" if res.data_existed else " (no data existed yet)")
    )
    print(format_changes(res.changes))
    print(f"new chain head: canonical hash {res.study.canonical_hash}")
    return EXIT_OK


def _cmd_audit(args: argparse.Namespace) -> int:
    from tailgate.prereg.audit import audit

    report = audit(args.results_dir, prereg=args.prereg, expected_hash=args.expected_hash)
    for line in report.lines():
        print(line)
    return EXIT_OK if report.ok else EXIT_AUDIT_FAILED


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tailgate",
        description="Pre-registered, auditable tail-shape claims for LLM evaluation.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tailgate {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback for internal errors")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    sub.required = True

    def verb(name: str, help_: str, description: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help_,
            description=description,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(func=globals()[f"_cmd_{name}"])
        return p

    def results_opt(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--results",
            metavar="DIR",
            default=None,
            help="the study's results directory (default: results/<study>)",
        )

    p = verb(
        "design",
        "validate a pre-registration and print its derived design",
        "Validate PREREG and print the design it implies: n_exc* from Eq. 2 of seed 000 for the "
        "registered Δfloor, α, power and ξ̄; the prompts needed at the headline threshold; "
        "whether the registered sample cap meets it; and the simulated P1∧P2 power when the "
        "statistics engine provides it. Writes nothing.",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")

    p = verb(
        "freeze",
        "validate and write <stem>.lock.json beside the pre-registration",
        "Validate PREREG, refuse a sample cap below the Eq. 2 bound unless accepted_power records "
        "the lower power explicitly, and write <stem>.lock.json beside it (canonical and raw "
        "hashes, derived design, versions, UTC time, git commit). Once data exists for the study, "
        "a changed file cannot be re-frozen: use 'tailgate amend'.",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    results_opt(p)

    p = verb(
        "verify",
        "check that a pre-registration matches its lock (exit 3 with a diff if not)",
        "Exit 0 if PREREG matches the chain head of its lock; otherwise exit 3 and print every "
        "changed field (registered → now), each classed as loosening, tightening or neutral, and "
        "the two ways forward (restore the file, or amend).",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    results_opt(p)

    p = verb(
        "amend",
        "record a change to a frozen pre-registration as a hash-chained amendment",
        "Append an amendment to PREREG's lock: sequence number, previous entry hash, new canonical "
        "hash, the field diff with classes, REASON, UTC time, and whether data already existed "
        "(read from the study's provenance records). The report lists every amendment.",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument("--reason", required=True, metavar="TEXT", help="why the plan changes")
    results_opt(p)

    p = verb(
        "audit",
        "re-verify a results directory (exit 4 if anything fails)",
        "Check every artifact in RESULTS_DIR against its provenance record, the lock's amendment "
        "chain, that each artifact was produced under the chain head of its time, that the lock "
        "predates the first data artifact (git history when available), optionally that the "
        "registered hash equals one published elsewhere, and re-derive recorded verdicts. "
        "Exit 0 if all checks pass, 4 otherwise.",
    )
    p.add_argument("results_dir", metavar="RESULTS_DIR", help="results/<study>")
    p.add_argument(
        "--expected-hash",
        metavar="H",
        default=None,
        help="registered canonical hash published elsewhere",
    )
    p.add_argument(
        "--prereg",
        metavar="PREREG",
        default=None,
        help="the pre-registration (default: preregistrations/<study>.yaml beside results/)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
