"""The value of a ``dominance`` analysis's criterion statistic, read from its stored statistics
only (the analysis stage, ``verdict.json`` and the audit all decide by it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..criteria import StatisticRef
from .calibration import CALIBRATION_TEXT, calibration_of
from .spec import PAIR_STATS

__all__ = ["statistic"]


def statistic(
    spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
) -> tuple[float | None, str]:
    """The stored value of a criterion's ``ref`` and a note (None: not available, and why)."""
    conds = list(stats["settings"]["conditions"])
    target = ref.target or stats["settings"]["scorers"][0]
    t = stats["targets"][target]
    idx = [conds.index(a) for a in ref.args]
    name = ref.name
    if target == "aggregate":
        return float(t[name][idx[0]]), "rank aggregated over the scorers"
    if name in ("rank_fsd", "rank_ssd"):
        return float(t[name.split("_")[1]]["rank"][idx[0]]), "Borda rank of the relative test"
    if name == "rank_mean_risk":
        return float(t["mean_risk"]["rank"][idx[0]]), "aggregated mean–risk rank"
    if name == "rank_mwr":
        return float(t["mwr"]["rank"][idx[0]]), "rank by mean win rate (Eq. 15)"
    if name == "mwr":
        return float(t["mwr"]["eq15"][idx[0]]), "mean win rate (Eq. 15)"
    if name.startswith("score_"):
        return float(t["mean_risk"]["scores"][name[6:]][idx[0]]), "mean − risk"
    order, stat = PAIR_STATS[name]
    value = t[order][stat][idx[0]][idx[1]]
    how = CALIBRATION_TEXT[calibration_of(t[order])]
    note = {
        "eps": "violation ratio",
        "eps_ucb": f"upper bound at 1 − α/k² = {1 - stats['alpha_pair']:.5g} ({how})",
        "delta": "relative statistic Δε",
        "r": f"upper bound of Δε at 1 − α/k² = {1 - stats['alpha_pair']:.5g} ({how})",
    }[stat]
    return (None if value is None else float(value)), note
