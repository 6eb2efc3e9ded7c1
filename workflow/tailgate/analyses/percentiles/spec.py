"""The registration of a ``percentiles`` analysis: its parameters with their defaults
(:func:`settings`), their cross-field checks and the criterion statistics it stores (the list in
:mod:`tailgate.analyses.percentiles`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Problem, condition_problems, scorer_problems, unknown_args
from ..criteria import StatisticRef
from . import statistics as PC

__all__ = ["SETS", "check_spec", "check_statistic", "settings", "summary_names_of"]

SETS = ("concordance", "concordance_low", "concordance_high")


SUMMARY_ONLY = ("selected", "spearman", "kendall")


def settings(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter with the documented default applied for absent fields."""
    return {
        "conditions": list(spec["conditions"]),
        "scorer": str(spec["scorer"]),
        "percentiles": [float(p) for p in spec.get("percentiles", PC.DEFAULT_PERCENTILES)],
        "summary_sets": {
            k: list(v)
            for k, v in (
                spec.get("summary_sets") or {"default": list(PC.DEFAULT_SUMMARY_SET)}
            ).items()
        },
        "resamples": int(spec.get("resamples", 1000)),
        "level": float(spec.get("level", 0.95)),
        "resampling": str(spec.get("resampling", "paired")),
        "metric": None
        if spec.get("metric") is None
        else {k: float(v) for k, v in spec["metric"].items()},
        "sequence_length": None
        if spec.get("sequence_length") is None
        else int(spec["sequence_length"]),
    }


def summary_names_of(st: Mapping[str, Any]) -> tuple[str, ...]:
    return PC.summary_names(st["percentiles"])


def check_spec(spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
    """Problems of the registered parameters (``data``: the canonical study document)."""
    out = condition_problems(spec["conditions"], data)
    scorers = {s["name"]: s for s in data["scorers"]}
    sc = scorers.get(spec["scorer"])
    if spec.get("sequence_length") is not None:
        out += scorer_problems(spec, data)
    elif sc is None or sc.get("kind") != "token_nll":
        have = [n for n, s in scorers.items() if s.get("kind") == "token_nll"]
        out.append(
            Problem(
                ("scorer",),
                f"'{spec['scorer']}' is not a registered token_nll scorer",
                f"use a token_nll scorer ({', '.join(have) or 'none registered'}), or register "
                "'sequence_length' for a scorer whose rows are tokens",
            )
        )
    st = settings(spec)
    names = summary_names_of(st)
    for set_name, members in st["summary_sets"].items():
        for i, s in enumerate(members):
            if s not in names:
                out.append(
                    Problem(
                        ("summary_sets", set_name, i),
                        f"'{s}' is not a summary of this analysis",
                        f"use {', '.join(names)}",
                    )
                )
    if st["metric"] is not None and set(st["metric"]) != set(st["conditions"]):
        out.append(
            Problem(
                ("metric",),
                "the task metric must give a value for every condition of the analysis",
                "list each condition once",
            )
        )
    return out


def check_statistic(
    spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
) -> str | None:
    """Why a criterion's ``ref`` names no statistic this analysis stores (None if it does)."""
    st = settings(spec)
    names = summary_names_of(st)
    if ref.name in SETS:
        sets = list(st["summary_sets"])
        if not ref.args and len(sets) == 1:
            return None
        if len(ref.args) != 1 or ref.args[0] not in sets:
            return f"takes one registered summary set ({', '.join(sets)})"
        return None
    if ref.name == "same_selection":
        if len(ref.args) != 2 or any(a not in names for a in ref.args):
            return f"takes two summaries ({', '.join(names)})"
        return None
    if ref.name in SUMMARY_ONLY:
        if len(ref.args) != 1 or ref.args[0] not in names:
            return f"takes one summary ({', '.join(names)})"
        if ref.name != "selected" and st["metric"] is None:
            return "needs a registered task 'metric'"
        return None
    base = ref.name.removeprefix("z_")
    if base in names and not (ref.name.startswith("z_") and base == "mean"):
        if len(ref.args) != 1:
            return f"takes 1 condition, got {len(ref.args)}"
        return unknown_args(ref.args, st["conditions"])
    return "is not a statistic of the percentiles kind"
