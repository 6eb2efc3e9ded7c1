"""The registration of a ``severity`` analysis: its parameters with their defaults
(:func:`settings`), their cross-field checks and the criterion statistics it stores (the list in
:mod:`tailgate.analyses.severity`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..base import Problem, condition_problems, scorer_problems, unknown_args
from ..criteria import StatisticRef
from . import statistics as S

__all__ = ["AGGREGATIONS", "check_spec", "check_statistic", "grid_of", "settings"]

_ONE = ("b", "b_low", "b_high", "error_rate", "tail_ratio")


_TWO = ("delta_b", "delta_b_pvalue")


_NONE = (
    "disjoint_pairs",
    "disjoint_pairs_low",
    "disjoint_pairs_high",
    "matched_pairs",
    "non_exponential",
    "decisive",
)


def settings(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter with the documented default applied for absent fields."""
    grid = spec.get("grid") or {}
    decisive = spec.get("decisive") or {}
    mc = spec.get("mc", "reselect")
    return {
        "conditions": list(spec["conditions"]),
        "scorer": str(spec["scorer"]),
        "scale": str(spec.get("scale", "identity")),
        "grid": {"step": float(grid.get("step", 0.5)), "top": float(grid.get("top", 4.0))},
        "mc": mc if mc == "reselect" else float(mc),
        "min_events": int(spec.get("min_events", 30)),
        "resamples": int(spec.get("resamples", 2000)),
        "level": float(spec.get("level", 0.95)),
        "tolerance": float(spec.get("tolerance", 0.05)),
        "delta_b_floor": float(spec.get("delta_b_floor", 0.0)),
        "x_min": None if spec.get("x_min") is None else float(spec["x_min"]),
        "decisive": {
            "pvalue": float(decisive.get("pvalue", 0.05)),
            "delta_bic": float(decisive.get("delta_bic", 6.0)),
            "rule": str(decisive.get("rule", "test")),
        },
        "thresholds": [float(t) for t in spec.get("thresholds", (1.5, 2.0, 2.5, 3.0, 3.5, 4.0))],
        "secondary": spec.get("secondary"),
        "aggregation": str(spec.get("aggregation", "primary")),
    }


#: how two judges' grades of a row combine (ERRORQUAKE (2026), Section 4.1, "Judge-aggregation
#: robustness")
AGGREGATIONS = ("primary", "secondary", "max", "min", "mean")


def grid_of(st: Mapping[str, Any]) -> np.ndarray:
    return S.make_grid(st["grid"]["top"], st["grid"]["step"])


def _on_grid(value: float, grid: np.ndarray) -> bool:
    i = round(value / (grid[1] - grid[0]))
    return 1 <= i < grid.size and abs(grid[i] - value) < 1e-9


def check_spec(spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
    """Problems of the registered parameters (``data``: the canonical study document)."""
    out = condition_problems(spec["conditions"], data) + scorer_problems(spec, data)
    st = settings(spec)
    try:
        grid = grid_of(st)
    except ValueError as exc:
        return [*out, Problem(("grid",), str(exc), "make 'top' a multiple of 'step'")]
    if grid.size < 4:
        out.append(
            Problem(
                ("grid",),
                "the grid has fewer than 3 positive levels",
                "register a finer step or a higher top",
            )
        )
    if st["mc"] != "reselect" and not _on_grid(st["mc"], grid):
        out.append(
            Problem(
                ("mc",),
                f"m_c = {st['mc']:g} is not a positive grid level",
                "use 'reselect' or a positive level of the grid",
            )
        )
    if st["x_min"] is not None and not _on_grid(st["x_min"], grid):
        out.append(
            Problem(
                ("x_min",),
                f"x_min = {st['x_min']:g} is not a positive grid level",
                "use a positive level of the grid",
            )
        )
    if st["secondary"] is None and st["aggregation"] != "primary":
        out.append(
            Problem(
                ("aggregation",),
                f"aggregation '{st['aggregation']}' needs a 'secondary' judge",
                "register 'secondary' or use 'primary'",
            )
        )
    if st["secondary"] is not None:
        out += [
            Problem(("secondary",), p.message, p.fix)
            for p in scorer_problems({**spec, "scorer": st["secondary"]}, data)
        ]
    for i, t in enumerate(st["thresholds"]):
        if not _on_grid(t, grid):
            out.append(
                Problem(
                    ("thresholds", i),
                    f"threshold {t:g} is not a grid level",
                    "use positive levels of the grid",
                )
            )
    return out


def check_statistic(
    spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
) -> str | None:
    """Why a criterion's ``ref`` names no statistic this analysis stores (None if it does)."""
    need = 0 if ref.name in _NONE else 1 if ref.name in _ONE else 2 if ref.name in _TWO else None
    if ref.name == "disjoint_pairs_under":
        if spec.get("secondary") is None:
            return "needs a registered 'secondary' judge"
        if len(ref.args) != 1 or ref.args[0] not in AGGREGATIONS:
            return f"takes one aggregation ({', '.join(AGGREGATIONS)})"
        return None
    if ref.name == "per_million":
        if len(ref.args) != 2:
            return "takes a condition and a threshold, e.g. per_million(a, 3.0)"
        try:
            thr = float(ref.args[1])
        except ValueError:
            return f"threshold '{ref.args[1]}' is not a number"
        if thr not in settings(spec)["thresholds"]:
            return f"threshold {thr:g} is not among the registered 'thresholds'"
        return unknown_args(ref.args[:1], spec["conditions"])
    if need is None:
        return "is not a statistic of the severity kind"
    if len(ref.args) != need:
        return f"takes {need} condition(s), got {len(ref.args)}"
    if need == 2 and ref.args[0] == ref.args[1]:
        return "compares a condition with itself"
    return unknown_args(ref.args, spec["conditions"])
