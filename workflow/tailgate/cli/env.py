"""``tailgate env``: the environment a study's results were made in, as pinned requirements
(:mod:`tailgate.runtime.environment`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tailgate.cli.base import Verbs, verb
from tailgate.errors import EXIT_OK, InputError
from tailgate.files.atomic import write_text
from tailgate.runtime.environment import environment_notes, recorded, requirements


def add_env(sub: Verbs) -> None:
    """``tailgate env RESULTS_DIR``."""
    p = verb(
        sub,
        "env",
        "print the environment a study's results were made in, as pinned requirements",
        "Read the Python and package versions recorded with every artifact of RESULTS_DIR and "
        "print them as a pinned requirements file (pip install -r FILE recreates the run's "
        "environment; then 'tailgate audit --reproduce' compares every file byte for byte). "
        "How this environment differs from the recorded one goes to standard error. Exit 0, "
        "or 2 when the folder has no records.\n\n"
        "example: tailgate env results/mystudy -o requirements-mystudy.txt",
        _cmd_env,
    )
    p.add_argument("results_dir", metavar="RESULTS_DIR", help="results/<study>")
    p.add_argument("-o", "--output", metavar="FILE", default=None, help="write FILE instead")


def _cmd_env(args: argparse.Namespace) -> int:
    from tailgate.runtime.provenance import iter_records

    rd = Path(args.results_dir)
    try:
        env = recorded(iter_records(rd))
    except ValueError as exc:
        raise InputError(f"{exc}. Fix: restore the record from the run that wrote it.") from None
    if not env:
        raise InputError(
            f"{rd}: no provenance records name an environment. Fix: pass a results/<study> "
            "folder made by a run of the workflow."
        )
    text = requirements(env)
    if args.output:
        write_text(args.output, text)
        print(f"wrote {args.output}: pip install -r {args.output}", file=sys.stderr)
    else:
        print(text, end="")
    for note in environment_notes(env):
        print(f"# {note}", file=sys.stderr)
    return EXIT_OK
