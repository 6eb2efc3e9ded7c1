"""The value of a ``percentiles`` analysis's criterion statistic, read from its stored
statistics only (the analysis stage, ``verdict.json`` and the audit all decide by it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..criteria import StatisticRef
from .spec import SETS

__all__ = ["statistic"]


def statistic(
    spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
) -> tuple[float | None, str]:
    """The stored value of a criterion's ``ref`` and a note (None: not available, and why)."""
    st = stats["settings"]
    if ref.name in SETS:
        key = ref.args[0] if ref.args else next(iter(st["summary_sets"]))
        c = stats["concordance"][key]
        if ref.name == "concordance":
            return float(c["statistic"]), f"π({', '.join(c['summaries'])}), ties count against"
        v = c["ci"][0 if ref.name.endswith("low") else 1]
        return v, "sequence-bootstrap CI of π"
    selected = stats["selection"]["selected"]
    if ref.name == "same_selection":
        a, b = ref.args
        return float(
            selected[a] == selected[b]
        ), f"{a} selects {selected[a]}, {b} selects {selected[b]}"
    if ref.name == "selected":
        return float(st["conditions"].index(selected[ref.args[0]]) + 1), "argmin position"
    if ref.name in ("spearman", "kendall"):
        return stats["selection"]["correlations"][ref.args[0]][ref.name], "with the task metric"
    s = stats["summaries"][ref.args[0]]
    if ref.name.startswith("z_"):
        if s["status"] != "ok":
            return None, f"standardized percentiles undefined ({s['status']})"
        return float(s["standardized"][ref.name[2:]]), "(P_k − P50)/(P75 − P25)"
    return float(s["values"][ref.name]), "per-token CE summary"
