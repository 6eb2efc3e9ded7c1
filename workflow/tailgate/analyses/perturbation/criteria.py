"""The value of a ``perturbation`` analysis's criterion statistic, read from its stored
statistics only — the design is re-derived from the stored pilot counts, never trusted (the
analysis stage, ``verdict.json`` and the audit all decide by it)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..criteria import StatisticRef
from . import statistics as P
from .spec import DESIGN, ENERGY

__all__ = ["statistic"]


def statistic(
    spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
) -> tuple[float | None, str]:
    """The stored value of a criterion's ``ref`` and a note (None: not available, and why)."""
    d = stats["design"]
    if ref.name in ENERGY:
        return _energy_statistic(stats, ref)
    if ref.name == "width":
        iv = stats["pilot"]["interval"]
        return float(iv["high"] - iv["low"]), f"b̂ − â ({iv['method']})"
    if d["status"] != "ok" and ref.name != "naive_pvalue":
        return None, d["status"]
    if ref.name != "naive_pvalue":
        why = _design_mismatch(spec, stats)
        if why is not None:
            return None, why
    if ref.name in DESIGN:
        return float(d[ref.name]), "Algorithm C design (methods note A7)"
    t = stats["tests"][ref.args[0]]
    if ref.name == "naive_pvalue":
        return float(t["naive"]["pvalue"]), "two-proportion test against the base query"
    if not d["met"]:
        return None, "the derived design is not met by the sampled responses"
    if ref.name == "reject":
        return float(t["reject"]), "1 = the composite null is rejected"
    return float(t[ref.name]), "composite test (methods note A5)"


def _energy_statistic(stats: Mapping[str, Any], ref: StatisticRef) -> tuple[float | None, str]:
    energy = stats.get("energy")
    if energy is None:
        return None, "no energy test in the statistics"
    if energy["status"] != "ok":
        return None, energy["status"]
    t = energy["tests"][ref.args[0]]
    res = t["pooled"] if len(ref.args) == 1 else t["pairwise"][ref.args[1]]
    key = "pvalue" if ref.name == "energy_pvalue" else "statistic"
    against = "the pooled null queries" if len(ref.args) == 1 else f"null query {ref.args[1]}"
    return float(res[key]), f"energy test (methods note A8) against {against}"


@functools.lru_cache(maxsize=32)
def _rederived(
    counts: tuple[int, ...],
    n0: int,
    method: str,
    budget: int,
    alpha: float,
    null_model: str,
    min_m: int,
) -> tuple[int, int, int] | None:
    interval = P.estimate_interval(np.array(counts) / n0, n0, method)  # type: ignore[arg-type]
    if not 0 < interval.high - interval.low < 1:
        return None
    d = P.design(interval.low, interval.high, budget, alpha, null_model=null_model, min_m=min_m)
    return d.m, d.n, d.J


def _design_mismatch(spec: Mapping[str, Any], stats: Mapping[str, Any]) -> str | None:
    """Why the stored design does not follow from the stored pilot counts under the registered
    rule (None when it does): the design is re-derived, never trusted."""
    d, pilot = stats["design"], stats["pilot"]
    alpha = float(spec.get("alpha", stats["settings"]["alpha"]))
    try:
        again = _rederived(
            tuple(int(c) for c in pilot["counts"]),
            int(pilot["responses"]),
            str(spec.get("interval", "order_statistics")),
            int(spec["budget"]),
            alpha,
            str(spec.get("null_model", "uniform")),
            int(spec.get("min_null_queries", P.MIN_NULL_QUERIES)),
        )
    except (ValueError, TypeError, KeyError) as exc:
        return f"the stored pilot cannot be re-derived ({exc})"
    if again != (d["m"], d["n"], d["J"]):
        return (
            f"the stored design (m, n, J) = ({d['m']}, {d['n']}, {d['J']}) does not follow from "
            f"the stored pilot counts, which give {again}"
        )
    return None
