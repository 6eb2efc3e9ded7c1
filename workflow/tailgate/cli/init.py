"""``tailgate init``: a new pre-registration from the template, optionally filled from an import
file (:mod:`tailgate.authoring.scaffold`).
"""

from __future__ import annotations

import argparse

from tailgate.cli.base import Verbs, verb
from tailgate.errors import EXIT_OK


def add_init(sub: Verbs) -> None:
    """``tailgate init STUDY``."""
    p = verb(
        sub,
        "init",
        "write a new pre-registration from the template (optionally from an import file)",
        "Write preregistrations/STUDY.yaml from the template, every decision field commented. "
        "With --from-import FILE (JSONL, CSV, Parquet, lm-evaluation-harness samples or an "
        "Inspect log) the data block, the conditions and a column scorer per numeric score "
        "column (or harness metric) are filled from the file's header and rows "
        "(row counts per condition, a sample cap, and the Eq. 2 check of Zhou (2026)). Refuses to "
        "overwrite an existing file. Writes nothing else.\n\nexamples: tailgate init mystudy "
        "--from-import data/scores.csv\n  tailgate init mystudy --from-import harness/lm-eval "
        "--task mytask [--filter strict-match]",
        _cmd_init,
    )
    p.add_argument("study", metavar="STUDY", help="the study name (lowercase, digits, - and _)")
    p.add_argument(
        "--from-import",
        metavar="FILE",
        default=None,
        help="a JSONL, CSV or Parquet file of completions and/or scores, or harness output "
        "(lm-evaluation-harness samples, Inspect logs), to register",
    )
    p.add_argument(
        "--task",
        metavar="NAME",
        default=None,
        help="with harness output of several tasks (lm-evaluation-harness samples files, "
        "Inspect logs): the task to register (one condition per model; each metric of that task)",
    )
    p.add_argument(
        "--filter",
        metavar="NAME",
        default=None,
        help="with an lm-evaluation-harness task scored through several filters (its "
        "filter_list): the filter whose reading of the answers is registered",
    )
    p.add_argument(
        "--directory",
        metavar="DIR",
        default="preregistrations",
        help="where to write STUDY.yaml (default: preregistrations)",
    )


def _cmd_init(args: argparse.Namespace) -> int:
    from tailgate.authoring.scaffold import scaffold

    written = scaffold(
        args.study,
        from_import=args.from_import,
        directory=args.directory,
        task=args.task,
        filter=args.filter,
    )
    path = written.path
    for line in written.notes:
        print(line)
    print(f"wrote {path}")
    print(f"next: edit it, then 'tailgate design {path}' and 'tailgate freeze {path} --tag'")
    return EXIT_OK
