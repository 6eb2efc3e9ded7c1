"""The outcome's checks: everything downstream of the stored statistics re-made with the rules'
own stage code (:mod:`tailgate.audit.outcome`) and compared whole with the stored files
(:mod:`tailgate.audit.compare`), in the mode of the run that made each file
(:mod:`tailgate.audit.environment`).

- **outcome** — the gates and sensitivity files, ``verdict.json`` and the run summary of the
  ledger's last successful run;
- **report** — ``report.html``, ``report.md``, the figures and their sidecars, re-rendered from
  the re-made ``verdict.json``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from tailgate.prereg.study import Study

from .findings import Check, guarded

__all__ = ["outcome_checks"]

_DOCUMENT = "differs from the one re-made from the stored statistics"
_REPORT = "differs from the report re-rendered from the re-made verdict and the stored statistics"


def outcome_checks(
    rd: Path, study: Study | None, exact: Callable[[str], bool]
) -> tuple[list[Check], bool]:
    """The outcome's and the report's checks, and whether some file was compared in the
    tolerant mode; a damaged input is a failed check naming it."""
    if study is None:
        return [], False
    checks: list[Check] = []
    found = guarded(checks, "outcome", rd, _outcome_checks, rd, study, exact)
    if found is None:
        return checks, False
    return [*checks, *found[0]], found[1]


def _outcome_checks(
    rd: Path, study: Study, exact: Callable[[str], bool]
) -> tuple[list[Check], bool]:
    from .compare import compare_made
    from .outcome import outcome_exists, remake_outcome, rule_of, run_summary_failures
    from .runs import mode_of

    if not outcome_exists(rd):
        return [
            Check("outcome", "no verdict, report or successful run yet: nothing to re-make")
        ], False
    with tempfile.TemporaryDirectory(prefix="tailgate-audit-") as tmp:
        remade = remake_outcome(rd, study, Path(tmp), mode=mode_of(rd, rd / "verdict.json"))
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
    fails = [*remade.failures, *outcome.failures]
    if remade.verdict is not None:
        fails += run_summary_failures(rd, remade.verdict)
    n = len(other_files)
    checks = [
        Check(
            "outcome",
            f"{n} document(s) (gates, sensitivity, verdict.json) and the run summary re-made "
            f"from the stored statistics, compared whole {outcome.mode}",
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
            )
        )
    tolerant = not (outcome.exact and report.exact)
    return checks, tolerant
