"""The audit's re-derivations of verdicts, by name: each takes ``(results_dir, study)`` and
returns failure strings that name the file. The protocol's gates and H1
(:func:`tailgate.stages.audit.verdict_check`), the outcome under the registered plan after an
amendment (:func:`tailgate.stages.audit.registered_plan_check`) and the registered analyses
(:mod:`tailgate.analyses.audit`) register here; :func:`tailgate.prereg.audit.audit` runs them
all. The registry is its own module so that the analyses can register without importing the
audit that runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["VerdictCheck", "load_builtin_checks", "register_verdict_check", "verdict_checks"]

VerdictCheck = Callable[[Path, Any], list[str]]
_VERDICT_CHECKS: dict[str, VerdictCheck] = {}


def register_verdict_check(name: str, fn: VerdictCheck) -> None:
    """Register ``fn(results_dir, study) -> list of failure strings`` under ``name``."""
    _VERDICT_CHECKS[name] = fn


def load_builtin_checks() -> None:
    """Register the protocol workflow's re-derivation of every gate and H1 verdict unless a
    check of that name exists, and the analyses' (registered when their module is imported)."""
    if "protocol" not in _VERDICT_CHECKS:
        from tailgate.stages.audit import verdict_check

        register_verdict_check("protocol", verdict_check)
    if "registered plan" not in _VERDICT_CHECKS:
        from tailgate.stages.audit import registered_plan_check

        register_verdict_check("registered plan", registered_plan_check)
    import tailgate.analyses.audit  # noqa: F401  (registers the "analyses" check on import)


def verdict_checks() -> dict[str, VerdictCheck]:
    """The registered verdict re-derivations (a copy)."""
    return dict(_VERDICT_CHECKS)
