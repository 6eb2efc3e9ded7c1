"""The statistics of a ``dominance`` analysis (Nitsure et al. (2024); methods note D): per
target the absolute and relative stochastic-dominance tests of each registered order, the
mean–risk models and the mean win rate; the aggregated ranks across scorers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tailgate.errors import InputError

from ..base import AnalysisResult, AnalysisRun
from .inputs import read_samples
from .meanrisk import (
    CONSISTENT_RISKS,
    RISKS,
    aggregate_ranks,
    mean_risk,
    mean_win_rate,
    portfolio,
    ranks_of,
)
from .spec import ORDERS, settings

if TYPE_CHECKING:
    from .statistics import DominanceTests

__all__ = ["NORMAL_TIE_SHARE", "analyse"]


def _matrix(a: np.ndarray) -> list[list[float | None]]:
    return [[None if not np.isfinite(v) else float(v) for v in row] for row in a]


def _tests_dict(t: DominanceTests) -> dict[str, Any]:
    return {
        "calibration": t.calibration,
        "eps": _matrix(t.eps),
        "sigma": _matrix(t.sigma),
        "eps_ucb": _matrix(t.eps_ucb),
        "one_vs_all": [float(v) for v in t.one_vs_all],
        "delta": _matrix(t.delta),
        "delta_sigma": _matrix(t.delta_sigma),
        "r": _matrix(t.delta_ucb),
        "wins": t.wins.astype(int).tolist(),
        "distinct_p": _matrix(t.distinct_p),
        "rank": t.ranks.tolist(),
        "absolute": [
            {"eps0": e, "wins": w.astype(int).tolist(), "rank": r.tolist()}
            for e, w, r in zip(t.eps0, t.abs_wins, t.abs_ranks, strict=True)
        ],
    }


def _target_stats(
    samples: list[np.ndarray], st: dict[str, Any], seed: Any, threads: int
) -> dict[str, Any]:
    # the tests' numba kernels load with the first dominance computation, not with the
    # registry (a job that only validates the study never compiles them)
    from .statistics import dominance_tests_orders

    if st["calibration"] == "normal":
        _refuse_normal_on_ties(samples, st["conditions"])
    paired = st["resampling"] == "paired"
    tests = dominance_tests_orders(
        samples,
        st["orders"],
        st["resamples"],
        st["alpha"],
        st["eps0"],
        seed,
        paired=paired,
        threads=threads,
        calibration=st["calibration"],
    )
    mr = [mean_risk(x, st["risk_level"]) for x in samples]
    scores = {r: [m.score(r) for m in mr] for r in RISKS}
    risk_ranks = {r: ranks_of(scores[r]).tolist() for r in RISKS}
    eq15, eq16 = mean_win_rate(samples, aligned=paired)
    out: dict[str, Any] = {
        "n": [int(x.size) for x in samples],
        "mean_risk": {
            "mean": [m.mean for m in mr],
            "risks": {r: [m.risk(r) for m in mr] for r in RISKS},
            "scores": scores,
            "ranks": risk_ranks,
            "rank": aggregate_ranks(
                [risk_ranks[r] for r in CONSISTENT_RISKS], st["aggregation"]
            ).tolist(),
        },
        "mwr": {
            "eq15": eq15.tolist(),
            "eq16": None if eq16 is None else eq16.tolist(),
            "rank": ranks_of(eq15).tolist(),
        },
    }
    for name, o in ORDERS.items():
        if o in tests:
            out[name] = _tests_dict(tests[o])
    return out


def analyse(run: AnalysisRun) -> AnalysisResult:
    """The tests, mean–risk models and mean win rates of every target (each scorer, and with
    several the portfolio and the aggregated ranks)."""
    st = settings(run.spec, run.study.data)
    samples = read_samples(st, run.inputs["severities"])
    k = len(st["conditions"])
    targets: dict[str, Any] = {}
    for s in st["scorers"]:
        targets[s] = _target_stats(samples[s], st, run.seed(s), run.threads)
    if len(st["scorers"]) > 1:
        port = portfolio(samples, st["weights"])
        targets["portfolio"] = _target_stats(port, st, run.seed("portfolio"), run.threads)
        ranked = [o for o in ("fsd", "ssd") if o in targets[st["scorers"][0]]]
        targets["aggregate"] = {
            f"rank_{o}": aggregate_ranks(
                [targets[s][o]["rank"] for s in st["scorers"]], st["aggregation"]
            ).tolist()
            for o in (*ranked, "mean_risk", "mwr")
        }
    return AnalysisResult(
        {
            "settings": st,
            "k": k,
            "alpha_pair": st["alpha"] / k**2,
            "targets": targets,
        }
    )


#: share of a sample's values that may repeat another before ``calibration: normal`` is refused
NORMAL_TIE_SHARE = 0.01


def _refuse_normal_on_ties(samples: Sequence[np.ndarray], conditions: Sequence[str]) -> None:
    """``calibration: normal`` on tied scores (a judge's grades, pass/fail): its ε̂ + z·σ̂ bound
    rejected 0.09–0.18 of the time at nominal 0.05/0.10 on lattices and on one tied sample
    (methods note D7), so the analysis refuses it (exit 2) where more than 1 % of a condition's
    values repeat another value."""
    for c, x in zip(conditions, samples, strict=True):
        repeats = int(x.size - np.unique(x).size)
        if repeats > NORMAL_TIE_SHARE * x.size:
            raise InputError(
                f"dominance analysis: condition '{c}' has tied scores ({repeats} of {x.size} "
                "values repeat another), where 'calibration: normal' does not hold its level "
                "(0.09-0.18 at nominal 0.05/0.10, methods note D7). Fix: register "
                "'calibration: logit_percentile' (the default; an amendment if frozen)."
            )
