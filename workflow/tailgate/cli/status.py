"""``tailgate status``: a study's timeline (registration, amendments, runs) and its state now
(:mod:`tailgate.status`).
"""

from __future__ import annotations

import argparse

from tailgate.cli.base import Verbs, print_json, verb
from tailgate.errors import EXIT_OK


def add_status(sub: Verbs) -> None:
    """``tailgate status STUDY``."""
    p = verb(
        sub,
        "status",
        "a study's timeline: registration, amendments, runs, and its state now",
        "Print the timeline of STUDY (a name, or the path of its pre-registration): the "
        "registration and every amendment from the lock (time, commit that holds it, fields, "
        "whether data existed, deviation), every workflow run from results/<study>/runs.jsonl "
        "(time, outcome, jobs, git commit, code digest, lock entry, verdict), and whether the "
        "pre-registration matches its lock now. --audit also runs the full audit. Writes "
        "nothing. Exit 0 (also when the pre-registration is refused: the status says so), 2 on "
        "invalid input.\n\nexample: tailgate status mystudy --json",
        _cmd_status,
    )
    p.add_argument("study", metavar="STUDY", help="study name or preregistrations/<study>.yaml")
    p.add_argument("--json", action="store_true", help="print the status as JSON (README)")
    p.add_argument("--audit", action="store_true", help="also run 'tailgate audit' (seconds)")


def _cmd_status(args: argparse.Namespace) -> int:
    from tailgate.status import format_status, prereg_of, study_status

    doc = study_status(prereg_of(args.study), run_audit=args.audit)
    if args.json:
        print_json("status", {k: v for k, v in doc.items() if k != "format"})
    else:
        print(format_status(doc))
    return EXIT_OK
