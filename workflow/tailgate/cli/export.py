"""``tailgate export mlflow``: every run of a study's ledger, audited first, logged to an
experiment tracker (:mod:`tailgate.export_mlflow`).
"""

from __future__ import annotations

import argparse

from tailgate.cli.base import Verbs, verb
from tailgate.errors import EXIT_OK


def add_export(sub: Verbs) -> None:
    """``tailgate export mlflow RESULTS``."""
    p = verb(
        sub,
        "export",
        "log every run of a study's ledger to an experiment tracker (MLflow)",
        "Audit RESULTS first (the plain audit; exit 4 and nothing logged when it fails), then "
        "log each run of RESULTS/runs.jsonl as an MLflow run: the lock entry, its hashes and the "
        "registered decision fields as params; verdicts, gate and criterion values as metrics "
        "and tags; amendments and deviations as tags; verdict.json and report.html as artifacts. "
        "Each run carries the audit's outcome and the digest of the results it describes; a run "
        "that described results changed since is tagged superseded. A run already exported "
        "(same ledger line hash and results) is not logged again. Needs the mlflow "
        "extra.\n\nexample: tailgate export mlflow results/mystudy --tracking-uri "
        "http://127.0.0.1:5000",
        _cmd_export,
    )
    p.add_argument("tracker", choices=["mlflow"], help="the tracker (mlflow)")
    p.add_argument("results", metavar="RESULTS", help="results/<study>")
    p.add_argument(
        "--tracking-uri",
        metavar="URI",
        default=None,
        help="an MLflow tracking URI (default: a file store results/mlruns beside the study)",
    )
    p.add_argument(
        "--experiment", metavar="NAME", default=None, help="experiment name (default: study)"
    )
    p.add_argument(
        "--no-git",
        action="store_true",
        help="run the audit that comes first without git, as 'tailgate audit --no-git'",
    )


def _cmd_export(args: argparse.Namespace) -> int:
    from tailgate.export_mlflow import export_mlflow

    res = export_mlflow(
        args.results,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        no_git=args.no_git,
    )
    print(f"audit of {args.results}: passed (results digest {res.results_digest[:12]}…)")
    for number, run_id in sorted({**res.created, **res.existing}.items()):
        print(f"run {number}: {'logged' if number in res.created else 'already there'} {run_id}")
    for run_id in res.superseded:
        print(f"superseded: {run_id} (it described results that changed since)")
    print(
        f"{len(res.created)} run(s) logged to experiment {res.experiment!r} at {res.tracking_uri}"
    )
    return EXIT_OK
