"""The value of a ``severity`` analysis's criterion statistic, read from its stored statistics
only (the analysis stage, ``verdict.json`` and the audit all decide by it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..criteria import StatisticRef

__all__ = ["statistic"]


def statistic(
    spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
) -> tuple[float | None, str]:
    """The stored value of a criterion's ``ref`` and a note (None: not available, and why)."""
    h = stats["headline"]
    conds = stats["conditions"]
    n = ref.name
    if n == "disjoint_pairs":
        return float(h["disjoint_pairs"]), "matched pairs with disjoint b CIs"
    if n in ("disjoint_pairs_low", "disjoint_pairs_high"):
        v = h["ci"][0 if n.endswith("low") else 1]
        return (None if v is None else float(v)), "resampling CI of the headline count"
    if n == "disjoint_pairs_under":
        rob = stats["robustness"][ref.args[0]]
        return float(rob["disjoint_pairs"]), f"headline count under the {ref.args[0]} rule"
    if n == "matched_pairs":
        return float(h["matched_pairs"]), f"|Δε| < {stats['settings']['tolerance']:g}"
    if n == "non_exponential":
        v = sum(c["families"]["best"] != "exponential" for c in conds.values())
        return float(v), "conditions whose BIC-best family is not exponential"
    if n == "decisive":
        v = sum(bool(c["families"]["decisive"]) for c in conds.values())
        return float(v), "conditions with a decisive BIC-best family"
    c = conds[ref.args[0]]
    if c["status"] != "ok" and n in ("b", "b_low", "b_high", "delta_b", "delta_b_pvalue"):
        return None, f"no b for {ref.args[0]} ({c['status']})"
    if n == "b":
        return c["b"], f"finite-grid MLE at m_c = {c['m_c']:g}"
    if n in ("b_low", "b_high"):
        return c["b_ci"][0 if n == "b_low" else 1], "bootstrap percentile CI"
    if n == "error_rate":
        return float(c["error_rate"]), "P(S > 0)"
    if n == "tail_ratio":
        return c["tail_ratio"], "P(M ≥ 3)/P(M ≥ 1)"
    if n == "per_million":
        thr = float(ref.args[1])
        row = next(r for r in c["deployment"] if r["threshold"] == thr)
        return float(row["per_million"]), f"events with severity ≥ {thr:g} per 10⁶ queries"
    pair = _pair(stats, ref.args[0], ref.args[1])
    sign = 1.0 if pair["first"] == ref.args[0] else -1.0
    if n == "delta_b":
        return (None if pair["delta_b"] is None else sign * pair["delta_b"]), "b̂_a − b̂_b"
    if pair["test"] is None:
        return None, "the pair is not matched in accuracy: no Δb test"
    return pair["test"]["pvalue"], f"bootstrap test at shared m_c = {pair['test']['m_c']:g}"


def _pair(stats: Mapping[str, Any], a: str, b: str) -> Mapping[str, Any]:
    return next(p for p in stats["pairs"] if {p["first"], p["second"]} == {a, b})
