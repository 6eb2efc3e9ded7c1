"""The outcome's checks: everything downstream of the stored statistics re-made with the rules'
own stage code (:mod:`tailgate.audit.outcome`) and compared whole with the stored files
(:mod:`tailgate.audit.compare`), in the mode of the run that made each file
(:mod:`tailgate.audit.environment`).

- **outcome** — the gates and sensitivity files, ``verdict.json`` and the run summary of the
  ledger's last successful run;
- **report** — ``report.html``, ``report.md``, the figures and their sidecars, re-rendered from
  the re-made ``verdict.json``.

With ``report_to`` the re-made report (``report.html``, ``report.md``, ``figures/``) is written
there, on the reviewer's machine: what the reviewer reads is what the audit made from the audited
statistics, whatever the stored copy shows; the report check's note names the file to read.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from tailgate.files.atomic import write_bytes
from tailgate.files.safe_read import read_bytes
from tailgate.plans.layout import Layout
from tailgate.prereg.study import Study

from .compare import compare_made
from .findings import Check, guarded
from .outcome import outcome_exists, remake_outcome, rule_of, run_summary_failures
from .runs import mode_of

__all__ = ["outcome_checks", "read_this"]

_DOCUMENT = "differs from the one re-made from the stored statistics"
_REPORT = "differs from the report re-rendered from the re-made verdict and the stored statistics"


def read_this(report_to: Path) -> str:
    """The report check's note naming the re-made report to read (module docstring)."""
    return (
        f"read {Layout(report_to).file('report')} (or report.md beside it): the report this "
        "audit re-made from the audited statistics"
    )


def outcome_checks(
    rd: Path, study: Study | None, exact: Callable[[str], bool], report_to: Path | None = None
) -> tuple[list[Check], bool]:
    """The outcome's and the report's checks, and whether some file was compared in the
    tolerant mode; a damaged input is a failed check naming it. ``report_to``: where the
    re-made report is written (module docstring)."""
    if study is None:
        return [], False
    checks: list[Check] = []
    found = guarded(checks, "outcome", rd, _outcome_checks, rd, study, exact, report_to)
    return found if found is not None else (checks, False)


def _outcome_checks(
    rd: Path, study: Study, exact: Callable[[str], bool], report_to: Path | None
) -> tuple[list[Check], bool]:
    if not outcome_exists(rd):
        return [
            Check("outcome", "no verdict, report or successful run yet: nothing to re-make")
        ], False
    with tempfile.TemporaryDirectory(prefix="tailgate-audit-") as tmp:
        remade = remake_outcome(rd, study, Path(tmp), mode=mode_of(rd, Layout(rd).file("verdict")))
        report_files = [(r, p) for r, p in remade.made if rule_of(r) == "report"]
        other_files = [(r, p) for r, p in remade.made if rule_of(r) != "report"]

        def missing(rel: str) -> str:
            return f"rule '{rule_of(rel)}' makes it"

        outcome = compare_made(
            rd,
            other_files,
            _DOCUMENT,
            exact=exact,
            missing=missing,
        )
        report = compare_made(rd, report_files, _REPORT, exact=exact, missing=missing)
        if report_to is not None and remade.verdict is not None:
            for rel, path in report_files:
                write_bytes(report_to / rel, read_bytes(path))
    fails = [*remade.failures, *outcome.failures]
    if remade.verdict is not None:
        fails += run_summary_failures(rd, remade.verdict)
    n = len(other_files)
    checks = [
        Check(
            "outcome",
            f"{n} document(s) (gates, sensitivity, analyses, verdict.json) and the run summary "
            f"re-made from the stored statistics, compared whole {outcome.mode}",
            fails,
        )
    ]
    if remade.verdict is not None:
        checks.append(
            Check(
                "report",
                f"re-rendered from the re-made verdict and stored statistics, compared "
                f"{report.mode}",
                report.failures,
                [read_this(report_to)] if report_to is not None else [],
            )
        )
    tolerant = not (outcome.exact and report.exact)
    return checks, tolerant
