"""The samples of one condition of harness output before it is named, and what every harness
reader shares (:mod:`tailgate.generate.harness`): which metrics become columns (a finite number
for every sample), the columns' names, and the conditions' names (model, then the epoch and the
run where several share a model)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Group",
    "column",
    "condition_names",
    "finite",
    "metrics_of",
    "number_text",
    "numeric_metrics",
]

#: the rows' own columns: a metric of one of these names gets another column
_ROW_COLUMNS = ("condition", "doc_id", "id", "prompt", "response")
_NAME_MAX = 64


@dataclass
class Group:
    """The samples of one condition before it is named."""

    model: str
    task: str
    run: tuple[str, str]  # (date, path): orders the runs of one model
    source: str
    split: str = ""  # the epoch (Inspect), when there are several
    filter: str = ""  # the filter of the answers (lm-eval)
    samples: list[dict[str, Any]] = field(default_factory=list)
    #: metric -> (higher is better, where that is recorded), as far as the harness records it
    better: dict[str, tuple[bool, str]] = field(default_factory=dict)
    #: how its metrics were read (:attr:`tailgate.generate.harness.HarnessTable.notes`)
    notes: list[str] = field(default_factory=list)


def number_text(value: Any) -> float | None:
    """A finite number, also written as text (``"-41.38"``); else ``None``."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    return finite(value)


def finite(value: Any) -> float | None:
    """A finite number (a boolean as 0 or 1) as a float; else ``None``."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def metrics_of(groups: list[Group]) -> list[str]:
    """Every metric the samples of ``groups`` report, in first-seen order."""
    return list(dict.fromkeys(n for g in groups for s in g.samples for n in s["metrics"]))


def numeric_metrics(groups: list[Group]) -> tuple[list[str], list[str]]:
    """Metrics that every sample reports as a finite number (first-seen order), converting them
    in place; the others, each with the reason it was left out."""
    kept: list[str] = []
    skipped: list[str] = []
    total = sum(len(g.samples) for g in groups)
    for name in metrics_of(groups):
        missing = non_numeric = 0
        example: tuple[str, Any] | None = None
        for g in groups:
            for s in g.samples:
                if name not in s["metrics"]:
                    missing += 1
                elif finite(s["metrics"][name]) is None:
                    non_numeric += 1
                    example = example or (s["where"], s["metrics"][name])
        if non_numeric:
            where, value = example  # type: ignore[misc]
            shown = json.dumps(value, default=str)[:60]
            skipped.append(
                f"metric {name!r} skipped: not a finite number in {non_numeric} of {total} "
                f"samples (e.g. {shown} at {where})"
            )
        elif missing:
            skipped.append(
                f"metric {name!r} skipped: missing from {missing} of {total} samples (a column "
                f"scorer needs a score for every sample of every condition)"
            )
        else:
            kept.append(name)
    for g in groups:
        for s in g.samples:
            for name in kept:
                s["metrics"][name] = finite(s["metrics"][name])
    return kept, skipped


def column(metric: str) -> str:
    """The row column of a metric (never one of the rows' own columns)."""
    return f"score_{metric}" if metric in _ROW_COLUMNS else metric


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-_")


def condition_names(groups: list[Group]) -> list[str]:
    """Unique condition names (:mod:`tailgate.generate.harness`, "Conditions"): model, then
    split and run as needed."""
    keyed: dict[tuple[str, str, str], list[Group]] = {}
    for g in groups:
        keyed.setdefault((g.model, g.task, g.split), []).append(g)
    runs: dict[int, int] = {}
    for same in keyed.values():
        if len(same) > 1:
            dates = sorted({g.run for g in same})
            for g in same:
                runs[id(g)] = dates.index(g.run) + 1
    names: list[str] = []
    for g in groups:
        model = _slug(g.model.rsplit("__", 1)[-1].rsplit("/", 1)[-1]) or "model"
        parts = [model[-32:].strip("-_") or "model"]
        if g.split:
            parts.append(_slug(g.split)[:24])
        if id(g) in runs:
            parts.append(f"run{runs[id(g)]}")
        name = "-".join(p for p in parts if p)[:_NAME_MAX].strip("-_")
        if not name[:1].isalnum():
            name = f"m{name}"[:_NAME_MAX]
        names.append(name)
    counts: dict[str, int] = {}
    unique: list[str] = []
    for name in names:  # distinct models whose names slug alike
        counts[name] = counts.get(name, 0) + 1
        unique.append(name if names.count(name) == 1 else f"{name[:58]}-{counts[name]}")
    return unique
