"""``tailgate bundle``: one archive for review (:mod:`tailgate.audit.bundle_write`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tailgate.cli.base import Verbs, verb
from tailgate.errors import EXIT_OK, InputError
from tailgate.prereg.study import NAME_RE


def add_bundle(sub: Verbs) -> None:
    """``tailgate bundle STUDY``."""
    p = verb(
        sub,
        "bundle",
        "write one archive a reviewer audits (history, results, receipts, RO-Crate metadata)",
        "Write STUDY's review bundle: a deterministic .tar.gz holding a git bundle of the "
        "registration's history (no configuration, hooks or replace refs), the results folder as "
        "the run left it, the lock's and the runs' receipts, any trusted timestamps, the run's "
        "environment and ro-crate-metadata.json (Workflow Run RO-Crate), to deposit as it is. "
        "A reviewer runs 'tailgate audit FILE' on it. The same study gives the same bytes. Exit "
        "0, or 2 when the study cannot be bundled (not frozen, not run, not in git, a history "
        "rewritten locally).\n\n"
        "example: tailgate bundle preregistrations/mystudy.yaml -o mystudy.tar.gz",
        _cmd_bundle,
    )
    p.add_argument(
        "study",
        metavar="STUDY",
        help="preregistrations/<study>.yaml, or the study's name (in ./preregistrations)",
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", default=None, help="default: <study>.bundle.tar.gz"
    )
    p.add_argument(
        "--max-file-mb",
        metavar="MB",
        type=float,
        default=None,
        help="leave out results files larger than MB megabytes (named in bundle.json with their "
        "SHA-256 and size; the ledger and provenance records are always kept)",
    )


def _cmd_bundle(args: argparse.Namespace) -> int:
    from tailgate.audit.bundle_write import write_bundle

    prereg = Path(args.study)
    if not prereg.exists() and NAME_RE.match(args.study):
        prereg = Path("preregistrations") / f"{args.study}.yaml"
    if not prereg.is_file():
        raise InputError(
            f"{args.study}: no such pre-registration. Fix: name preregistrations/<study>.yaml "
            "or run from the project folder."
        )
    if args.max_file_mb is not None and args.max_file_mb <= 0:
        raise InputError(f"--max-file-mb {args.max_file_mb}: give a positive size in megabytes")
    written = write_bundle(prereg, args.output, max_file_mb=args.max_file_mb)
    for item in written.left_out:
        print(
            f"left out {item['path']} ({item['size']} bytes, sha256:{item['sha256']})",
            file=sys.stderr,
        )
    print(f"wrote {written.path} ({written.size} bytes)")
    print(f"bundle sha256:{written.sha256}")
    print(f"a reviewer runs: tailgate audit {written.path.name}")
    return EXIT_OK
