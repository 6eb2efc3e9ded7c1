"""The report's check: ``report.html``, ``report.md``, the figures and what they plot re-rendered
from the stored statistics with the report rule's own code and compared by content
(:mod:`tailgate.audit.compare`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tailgate.prereg.study import Study

from .findings import Check, guarded


def report_checks(rd: Path, study: Study | None) -> list[Check]:
    """The report's check, or the failed check naming a damaged input it read."""
    if study is None:
        return []
    checks: list[Check] = []
    check = guarded(checks, "report", rd / "report.html", check_report, rd, study)
    return [*checks, *([check] if check is not None else [])]


def check_report(rd: Path, study: Study) -> Check:
    from tailgate.audit.compare import compare_made, compared_exactly
    from tailgate.stages.report import rerender, rerendered

    if not (rd / "report.html").is_file():
        return Check("report", "no report.html to check")
    # pixels are compared only byte for byte: rasterise when some output is compared so
    pixels = any(compared_exactly(rd, rel) for rel in rerendered(study).values())
    with tempfile.TemporaryDirectory(prefix="tailgate-audit-") as tmp:
        try:
            made = rerender(rd, study, Path(tmp), pixels=pixels)
        except Exception as exc:  # the stored statistics cannot make a report: say so
            return Check("report", "re-rendered", [f"{rd}: cannot re-render the report ({exc})"])
        found = compare_made(
            rd, made, "differs from the report re-rendered from the stored verdict and statistics"
        )
    return Check(
        "report", f"re-rendered from stored statistics, compared {found.mode}", found.failures
    )
