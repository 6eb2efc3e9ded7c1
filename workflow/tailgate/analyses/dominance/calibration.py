"""Names and descriptions of the dominance tests' calibrations (methods note D7), importable
without the numba kernels of :mod:`tailgate.analyses.dominance` (the registry and the report
need them; the kernels load with the first computation)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CALIBRATIONS", "CALIBRATION_TEXT", "DEFAULT_CALIBRATION", "calibration_of"]

#: calibrations of the absolute (Eqs. 11–12) and relative (Eq. 13) tests of Nitsure et al. (2024)
CALIBRATIONS = ("logit_percentile", "normal")
DEFAULT_CALIBRATION = "logit_percentile"

#: how each calibration forms the upper bound, for notes and reports
CALIBRATION_TEXT = {
    "logit_percentile": "calibration logit_percentile: bootstrap-percentile bound with a "
    "normal tail on the logit scale, expit(m + z·s), s = u₈₄ − m (absolute test: the wider "
    "of u₈₄ − m and (u₉₅ − m)/z₀.₉₅), never below the Φ(z) percentile of the replicates, "
    "methods notes D7, D9",
    "normal": "calibration normal: ε̂ + z·σ̂, Eqs. 11–13 of Nitsure et al. (2024)",
}


def calibration_of(tests: Mapping[str, Any]) -> str:
    """The calibration stored with one order's tests; statistics stored before the option
    existed carry none and were computed with the normal bound."""
    return str(tests.get("calibration", "normal"))
