"""The verdicts' checks, a plain list (:data:`VERDICT_CHECKS`), each re-deriving recorded
outcomes from stored statistics and returning failure strings that name the file:

- ``analyses`` — every registered analysis's criteria (:mod:`tailgate.audit.criteria`);
- ``protocol`` — the protocol's gates G1–G5, P1, P2 and the H1 verdict
  (:func:`tailgate.audit.gates.verdict_check`);
- ``registered plan`` — the outcome under entry 0 of the lock after an amendment
  (:func:`tailgate.audit.gates.registered_plan_check`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tailgate.errors import TailgateError
from tailgate.plans.branch import registered_branch
from tailgate.plans.layout import Layout
from tailgate.prereg.study import Study

from .criteria import analyses_check
from .findings import Check
from .gates import registered_plan_check, verdict_check

__all__ = ["VERDICT_CHECKS", "VerdictCheck", "check_verdicts"]

#: ``fn(results_dir, study) -> failures``
VerdictCheck = Callable[[Path, Study], list[str]]

#: every verdict re-derivation the audit runs, in the order it reports them
VERDICT_CHECKS: list[tuple[str, VerdictCheck]] = [
    ("analyses", analyses_check),
    ("protocol", verdict_check),
    ("registered plan", registered_plan_check),
]


def check_verdicts(rd: Path, study: Study | None, prereg_path: Path) -> list[Check]:
    """One check per entry of :data:`VERDICT_CHECKS`; a crashing one is a failed check."""
    if study is None:
        return [Check("verdicts", "not re-derived", [f"{prereg_path}: cannot load the study"])]
    checks = []
    for name, fn in VERDICT_CHECKS:
        try:
            fails = list(fn(rd, study))
        except Exception as exc:  # a crashing check is a failed check, not a crashed audit
            fails = [f"{name}: re-derivation raised {type(exc).__name__}: {exc}"]
        detail = "re-derived from stored statistics"
        if name == "protocol" and not (
            Layout(rd).file("verdict").exists() or Layout(rd).folder("gates").exists()
        ):
            detail = "verdict re-derivation is not available: no recorded verdicts in this folder"
        elif name == "protocol" and not study.has_protocol:
            detail = "no protocol registered: checked that no H1 verdict or gates are recorded"
        elif name == "registered plan":
            detail = registered_plan_detail(study)
        checks.append(Check(f"verdicts: {name}", detail, fails))
    return checks


def registered_plan_detail(study: Study) -> str:
    try:
        branch = registered_branch(study, "")
    except TailgateError as exc:  # a damaged lock: the check itself names the file
        return f"not re-derived: {exc}"
    if branch is None:
        return "no amendment: the chain head is the registered plan"
    own = len(branch.gates_targets()) + len(branch.analysis_targets())
    return "the outcome under entry 0 re-derived beside the amended one" + (
        f", {own} document(s) of its branch re-derived under entry 0" if own else ""
    )
