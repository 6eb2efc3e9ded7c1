"""The value of a ``dominance`` analysis's criterion statistic, read from its stored statistics
only (the analysis stage, ``verdict.json`` and the audit all decide by it).

A criterion means what the test means (Nitsure et al. (2024), Algorithm 1; methods notes D8, D9):
the upper bounds ``r_*`` and ``eps_*_ucb`` assert dominance, and a win needs the distinctness
guard's rejection of F_a = F_b at α/k² as well as the bound, so where the guard does not reject
the criterion reads the statistic's upper end 1 ("no dominance claim"; the note gives the
bound and the guard's p): ``r_ssd(a, b) <= 0`` passes exactly where the report's ε table marks
the pair ✓. ``eps_*`` and ``delta_*`` are point estimates (no bound, no guard), and every note
says whether a rank rests on the wins or on point estimates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..criteria import StatisticRef
from .calibration import CALIBRATION_TEXT, calibration_of
from .spec import PAIR_STATS

__all__ = ["NO_CLAIM", "statistic", "tie_broken"]

#: the value a bound criterion reads where the distinctness guard does not reject: the upper
#: end of ε and of Δε, so that "<= t" fails and "> t" passes for every t < 1
NO_CLAIM = 1.0


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
        return float(t[name][idx[0]]), (
            "rank aggregated over the scorers' ranks (each rests on the wins of its tests, "
            "ties broken by point estimates)"
            if name in ("rank_fsd", "rank_ssd")
            else "rank aggregated over the scorers (point estimates, no test)"
        )
    if name in ("rank_fsd", "rank_ssd"):
        tests = t[name.split("_")[1]]
        return float(tests["rank"][idx[0]]), _rank_note(tests["wins"], conds, idx[0])
    if name == "rank_mean_risk":
        return float(t["mean_risk"]["rank"][idx[0]]), "aggregated mean–risk rank (point estimates)"
    if name == "rank_mwr":
        return float(t["mwr"]["rank"][idx[0]]), "rank by mean win rate (Eq. 15; point estimates)"
    if name == "mwr":
        return float(t["mwr"]["eq15"][idx[0]]), "mean win rate (Eq. 15; a point estimate)"
    if name.startswith("score_"):
        return float(t["mean_risk"]["scores"][name[6:]][idx[0]]), "mean − risk (a point estimate)"
    order, stat = PAIR_STATS[name]
    tests = t[order]
    i, j = idx
    value = tests[stat][i][j]
    if stat in ("eps", "delta"):
        what = "violation ratio" if stat == "eps" else "relative statistic Δε"
        return (None if value is None else float(value)), (
            f"{what}: a point estimate, not a test (no confidence bound, no distinctness guard)"
        )
    level = f"at 1 − α/k² = {1 - stats['alpha_pair']:.5g}"
    how = CALIBRATION_TEXT[calibration_of(tests)]
    bound = f"upper bound {'of Δε ' if stat == 'r' else ''}{level} ({how})"
    p = tests["distinct_p"][i][j]
    if value is None or (p is not None and p <= stats["alpha_pair"]):
        return (None if value is None else float(value)), (
            f"{bound}; the distinctness guard rejects F_{conds[i]} = F_{conds[j]} "
            f"(p = {p:.3g} ≤ α/k²)"
        )
    return NO_CLAIM, (
        f"no dominance claim: the distinctness guard does not reject F_{conds[i]} = "
        f"F_{conds[j]} (p = {'n/a' if p is None else f'{p:.3g}'} > α/k² = "
        f"{stats['alpha_pair']:.3g}), so the test makes none and the criterion reads "
        f"{NO_CLAIM:g}, the statistic's upper end; the {bound} is {float(value):.4g}"
    )


def tie_broken(wins: Sequence[Sequence[int]]) -> list[bool]:
    """Per condition, whether its Borda rank rests on point estimates: another condition has
    as many wins, and the one-versus-all ratio ε_i, a point estimate, orders the tie
    (Algorithm 1 of Nitsure et al. (2024), last lines)."""
    score = [sum(int(w) for w in row) for row in wins]
    return [score.count(s) > 1 for s in score]


def _rank_note(wins: Sequence[Sequence[int]], conds: Sequence[str], c: int) -> str:
    score = [sum(int(w) for w in row) for row in wins]
    tied = [x for m, x in enumerate(conds) if m != c and score[m] == score[c]]
    if not tied:
        return (
            f"Borda rank of the relative test's wins; rests on the wins ({score[c]} win(s), "
            "no other condition has as many)"
        )
    return (
        f"Borda rank of the relative test's wins; rests on point estimates: {conds[c]} has "
        f"{score[c]} win(s), as {', '.join(tied)} do, and the one-versus-all ε_i (a point "
        "estimate, no test) orders the tie"
    )
