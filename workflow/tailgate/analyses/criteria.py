"""Pre-registered criteria and their outcomes (PASS, FAIL, BORDERLINE, NOT_TESTED).

A criterion is a decision rule frozen in the pre-registration (``analyses.<name>.criteria``)::

    - name: qwen-safer-than-nemo
      statistic: "r_ssd(qwen, nemo)"   # a statistic the analysis kind stores
      comparison: "<="                 # <, <=, >, >=, ==
      threshold: 0.0
      borderline: 0.01                 # optional: |value - threshold| <= 0.01 is BORDERLINE

Its outcome is re-derived from stored statistics only (:func:`evaluate`), so the analysis stage,
``verdict.json`` and the audit all call the same function. It fails closed: a statistic that is
missing, null or not finite is NOT_TESTED, and a value inside the borderline band is BORDERLINE —
neither is ever a PASS (the "borderline fail" of ERRORQUAKE (2026), Table 1).

A statistic is written ``[target:]name(arg, arg…)``: ``target`` picks a part of the analysis
(for dominance: a scorer, ``portfolio`` or ``aggregate``), ``name`` the statistic and the
arguments its conditions; :func:`parse_statistic` splits it, the analysis kind resolves it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "COMPARISONS",
    "OUTCOMES",
    "Criterion",
    "CriterionOutcome",
    "StatisticRef",
    "evaluate",
    "parse_statistic",
]

OUTCOMES = ("PASS", "FAIL", "BORDERLINE", "NOT_TESTED")

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda v, t: v < t,
    "<=": lambda v, t: v <= t,
    ">": lambda v, t: v > t,
    ">=": lambda v, t: v >= t,
    "==": lambda v, t: v == t,
}

_STATISTIC_RE = re.compile(
    r"^\s*(?:(?P<target>[a-z0-9][a-z0-9_-]*)\s*:\s*)?(?P<name>[a-z][a-z0-9_]*)"
    r"\s*(?:\((?P<args>[^()]*)\))?\s*$"
)


@dataclass(frozen=True)
class StatisticRef:
    """A parsed ``[target:]name(arg, …)``."""

    target: str | None
    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        head = f"{self.target}:" if self.target else ""
        return f"{head}{self.name}({', '.join(self.args)})" if self.args else f"{head}{self.name}"


def parse_statistic(text: str) -> StatisticRef | None:
    """Split a criterion's statistic; ``None`` if it does not follow the grammar."""
    m = _STATISTIC_RE.match(text)
    if m is None:
        return None
    raw = m.group("args")
    args = tuple(a.strip() for a in raw.split(",")) if raw is not None and raw.strip() else ()
    if any(not a for a in args):
        return None
    return StatisticRef(m.group("target"), m.group("name"), args)


@dataclass(frozen=True)
class Criterion:
    """One registered criterion (see the module docstring)."""

    name: str
    statistic: str
    comparison: str
    threshold: float
    borderline: float | None = None

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Criterion:
        band = spec.get("borderline")
        return cls(
            name=str(spec["name"]),
            statistic=str(spec["statistic"]),
            comparison=str(spec["comparison"]),
            threshold=float(spec["threshold"]),
            borderline=None if band is None else float(band),
        )

    @property
    def rule(self) -> str:
        """``statistic comparison threshold`` with the band, for tables."""
        band = f" (borderline ±{self.borderline:g})" if self.borderline else ""
        return f"{self.statistic} {self.comparison} {self.threshold:g}{band}"


@dataclass(frozen=True)
class CriterionOutcome:
    """The outcome of one criterion: the value it was decided on and why."""

    name: str
    statistic: str
    comparison: str
    threshold: float
    borderline: float | None
    value: float | None
    outcome: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluate(criterion: Criterion, value: float | None, note: str = "") -> CriterionOutcome:
    """The outcome of ``criterion`` for the stored ``value`` (None: the statistic is missing).

    NOT_TESTED when the value is missing or not finite; BORDERLINE when it lies within
    ``borderline`` of the threshold (either side); otherwise PASS or FAIL by the comparison.
    """
    op = COMPARISONS.get(criterion.comparison)
    v = None if value is None else float(value)
    if op is None:
        outcome, why = "NOT_TESTED", f"unknown comparison {criterion.comparison!r}"
    elif v is None or not math.isfinite(v):
        outcome, why = "NOT_TESTED", note or "the statistic is not available"
        v = None
    elif criterion.borderline is not None and abs(v - criterion.threshold) <= criterion.borderline:
        outcome, why = "BORDERLINE", note or "within the registered borderline band"
    else:
        outcome, why = ("PASS" if op(v, criterion.threshold) else "FAIL"), note
    return CriterionOutcome(
        name=criterion.name,
        statistic=criterion.statistic,
        comparison=criterion.comparison,
        threshold=criterion.threshold,
        borderline=criterion.borderline,
        value=v,
        outcome=outcome,
        note=why,
    )
