"""The verbs of the lock: ``freeze`` writes it, ``amend`` appends to its chain, ``verify`` checks a
pre-registration against it (:mod:`tailgate.authoring.freeze`, :mod:`tailgate.prereg.guard`).
"""

from __future__ import annotations

import argparse
from typing import Any

from tailgate.cli.base import Verbs, print_json, verb
from tailgate.errors import EXIT_OK, InputError, RefusalError


def add_freeze(sub: Verbs) -> None:
    """``tailgate freeze PREREG``."""
    p = verb(
        sub,
        "freeze",
        "validate and write <stem>.lock.json beside the pre-registration",
        "Validate PREREG, refuse a sample cap below the Eq. 2 bound unless accepted_power records "
        "the lower power explicitly, and write <stem>.lock.json beside it (canonical and raw "
        "hashes, derived design, pins of the files it names, versions, code digest, UTC time, git "
        "commit) and print a receipt to publish. A lock that was ever committed is never "
        "replaced, and no study is frozen (or re-frozen) once data exists for it — read from the "
        "results folder, the lock and git history, never from an option: use 'tailgate amend'.\n\n"
        "example: tailgate freeze preregistrations/mystudy.yaml --tag",
        _cmd_freeze,
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    lock_options(p)


def add_verify(sub: Verbs) -> None:
    """``tailgate verify PREREG``."""
    p = verb(
        sub,
        "verify",
        "check that a pre-registration matches its lock (exit 3 with a diff if not)",
        "Exit 0 if PREREG matches the chain head of its lock; otherwise exit 3 and print every "
        "changed field (registered → now), each classed as loosening, tightening or neutral, and "
        "the two ways forward (restore the file, or amend). Input files the registration names "
        "(import data, local prompts, models, checkpoints) are checked against their pins.\n\n"
        "example: tailgate verify preregistrations/mystudy.yaml --json",
        _cmd_verify,
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument(
        "--json", action="store_true", help="print the outcome and the changed fields as JSON"
    )


def add_amend(sub: Verbs) -> None:
    """``tailgate amend PREREG --reason TEXT``."""
    p = verb(
        sub,
        "amend",
        "record a change to a frozen pre-registration as a hash-chained amendment",
        "Append an amendment to PREREG's lock: sequence number, previous entry hash, new canonical "
        "hash, the field diff with classes (every field but title and hypotheses is a decision "
        "rule), changed input-file pins, REASON, UTC time, and whether data already existed (read "
        "from the results folder, the lock and git history). The report lists every amendment and "
        "shows a decision change after data as a deviation.\n\n"
        'example: tailgate amend preregistrations/mystudy.yaml --reason "checkpoint moved"',
        _cmd_amend,
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument("--reason", required=True, metavar="TEXT", help="why the plan changes")
    lock_options(p)


def lock_options(p: argparse.ArgumentParser) -> None:
    """``--tag``, ``--data-limit-mb`` and ``--timestamp`` of freeze and amend."""
    p.add_argument(
        "--tag",
        action="store_true",
        help="commit the pre-registration, its lock and its pinned input files and create "
        "the annotated git tag prereg/<study>/<seq> holding the receipt (push it to publish "
        "it); a pinned file above --data-limit-mb is named in <stem>.data.json instead",
    )
    p.add_argument(
        "--data-limit-mb",
        type=float,
        default=50.0,
        metavar="MB",
        help="with --tag: the largest pinned input file the tagged commit holds, in "
        "megabytes (default 50; 0: none)",
    )
    p.add_argument(
        "--timestamp",
        metavar="URL",
        default=None,
        help="ask the RFC 3161 time-stamping authority at URL (e.g. https://freetsa.org/tsr) "
        "to sign the entry's hash, and store its token in the lock; 'audit --tsa-cert' then "
        "proves when the entry existed. With an unchanged frozen file, freeze adds a token "
        "to every entry that has none",
    )


def _cmd_freeze(args: argparse.Namespace) -> int:
    from tailgate.authoring.freeze import freeze

    res = freeze(args.prereg, tag=args.tag, timestamp=args.timestamp, data_limit=_data_limit(args))
    head = res.lock.head
    if res.action == "unchanged":
        print(
            f"{res.study.path}: already frozen, matches {res.lock.path.name} (entry {head['seq']})"
        )
    else:
        what = "re-frozen (never committed, no data)" if res.action == "refrozen" else "frozen"
        print(f"{res.study.path}: {what} → {res.lock.path}")
    print(f"canonical hash {res.study.canonical_hash}")
    _print_receipt(res.lock, res.tagged)
    if res.design is None:
        print("protocol: not registered; no Eq. 2 bound to check")
        return EXIT_OK
    print(
        f"n_exc* = {res.design.n_exc_required}, prompts required {res.design.prompts_required}, "
        f"planned {res.design.min_prompts}"
        + ("" if res.design.cap_meets_bound else f" (accepted power {res.design.accepted_power:g})")
    )
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace) -> int:
    from tailgate.plans.registration import require_frozen

    try:
        study = require_frozen(args.prereg)
    except RefusalError as exc:
        if not args.json:
            raise
        print_json(
            "verify",
            {
                "prereg": str(args.prereg),
                "matches": False,
                "message": str(exc),
                "changes": [c.to_json() for c in exc.changes],
            },
        )
        return exc.exit_code
    if args.json:
        print_json(
            "verify",
            {
                "prereg": str(study.path),
                "matches": True,
                "study": study.name,
                "canonical_hash": study.canonical_hash,
                "changes": [],
            },
        )
        return EXIT_OK
    print(f"{study.path}: matches the chain head of {study.lock_path.name}")
    print(f"canonical hash {study.canonical_hash}")
    return EXIT_OK


def _cmd_amend(args: argparse.Namespace) -> int:
    from tailgate.authoring.freeze import amend
    from tailgate.prereg.diff import format_changes

    res = amend(
        args.prereg,
        args.reason,
        tag=args.tag,
        timestamp=args.timestamp,
        data_limit=_data_limit(args),
    )
    print(
        f"{res.study.path}: amendment {res.entry['seq']} appended to {res.lock.path.name}"
        + (" (data already existed)" if res.data_existed else " (no data existed yet)")
    )
    print(format_changes(res.changes))
    print(f"new chain head: canonical hash {res.study.canonical_hash}")
    _print_receipt(res.lock, res.tagged, after_data=res.data_existed)
    return EXIT_OK


def _data_limit(args: argparse.Namespace) -> int:
    if not args.data_limit_mb >= 0:
        raise InputError(
            f"--data-limit-mb {args.data_limit_mb:g}: must be 0 or more (megabytes; 0 commits "
            "no data file and lists every pinned file in the data manifest)"
        )
    return int(args.data_limit_mb * 1000 * 1000)


def _print_receipt(lock: Any, tagged: Any, *, after_data: bool = False) -> None:
    """The receipt line to publish, what the tag holds, and what to do with it."""
    print(lock.receipt())
    for t in lock.timestamps.get(lock.head["entry_hash"], []):
        print(f"time-stamped by {t['tsa']} at {t['time']} (token stored in {lock.path.name})")
    name = f"prereg/{lock.study}/{lock.head['seq']}"
    audit_hint = (
        f"a reviewer checks it with 'tailgate audit results/{lock.study} --expected-hash "
        f"{lock.head['entry_hash']}'"
    )
    if tagged is not None:
        for path in tagged.included:
            print(f"the tag holds the pinned input file {path}")
        if tagged.manifest is not None:
            print(
                f"not in the tag (see {tagged.manifest}): {', '.join(tagged.left_out)}; "
                "publish them beside the tag (a data archive) so a reviewer can obtain them"
            )
        print(f"committed and tagged {tagged.name}; publish it: git push origin {tagged.name}")
    elif after_data:
        print(
            "publish this receipt with the results: data already existed, so it dates the "
            f"amendment, not a plan made before the data (commit and 'git tag -a {name}' + "
            f"push, or a preprint note); {audit_hint}"
        )
    else:
        print(
            "publish this receipt before collecting data (preprint, OSF, or commit and "
            f"'git tag -a {name}' + push); {audit_hint}"
        )
    if tagged is None:
        print(
            f"next: commit the registration — 'git add preregistrations/{lock.study}.yaml "
            f"preregistrations/{lock.path.name}' and 'git commit' — the "
            "workflow runs only a committed registration (or --config exploratory=true)"
        )
