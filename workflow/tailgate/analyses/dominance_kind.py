"""Analysis kind ``dominance``: stochastic dominance, mean–risk and the metrics portfolio (Nitsure
et al. (2024)).

Parameters (``$defs/analysis_dominance`` of the schema; an absent field means the default in
brackets): ``conditions`` (≥ 2) and ``scorers`` (≥ 1) to compare; ``scale`` [the protocol's
headline scale where the scorer has it, else identity]; ``orientation`` per scorer [from the
scorer's one declaration ``worse``; a registered entry must agree with it: ``higher_is_worse`` is
``worse: higher``]: the severities are the scores oriented so that larger is worse
(:func:`tailgate.prereg.study.worse_of`), and they are negated so that "dominates" means
"safer" (methods note D);
``orders`` [1, 2]; ``alpha`` [``protocol.alpha``], tested at α/k²; ``resamples`` B [1000];
``resampling`` [``protocol.bootstrap.resampling``]: ``paired`` resamples prompts jointly and needs
every condition on the same prompts; ``eps0`` [none] absolute ε₀-tests; ``risk_level`` p of
−TVaR and the quantile MAD [1 − ``protocol.tvar_level``]; ``weights`` λ of the portfolio [equal];
``aggregation`` of ranks across metrics and risks [borda]; ``calibration`` of the absolute and
relative tests' upper bounds [``logit_percentile``; ``normal`` is ε̂ + z·σ̂ of Eqs. 11–13, methods
note D7]. ``calibration`` has no schema default, so registrations frozen before it existed keep
their hash; absent means ``logit_percentile``, and the stored statistics and the report say which
calibration each bound used.

Targets: each scorer on its own (test @ M), and with two or more scorers the ``portfolio``
(Eq. 9; test @ P) and the ``aggregate`` of the per-metric ranks (RA(test @ M)).

Criteria statistics (``[target:]name(args)``; the target may be left out with one scorer):

============================  =====================================================
``eps_fsd(a, b)``             ε_W2 of "a dominates b" (Eq. 4); ``eps_ssd`` ε_IQ (Eq. 5)
``eps_fsd_ucb(a, b)``         upper bound of ε at 1 − α/k² (``calibration``): the
                              absolute test passes at ε₀ if ≤ ε₀
``delta_fsd(a, b)``           Δε_ab = ε_a − ε_b (Eq. 8)
``r_fsd(a, b)``               upper bound of Δε_ab at 1 − α/k²: "a R-FSD-dominates b"
                              if ≤ 0
``rank_fsd(a)``               Borda rank of the relative test (1 = best)
``rank_mean_risk(a)``         mean–risk rank aggregated over the SSD-consistent risks
``score_gini_tail(a)``, …     μ − r for r in sd, semi_deviation, neg_tvar, mad_quantile,
                              gini_tail
``mwr(a)``, ``rank_mwr(a)``   mean win rate (Eq. 15) and its rank
============================  =====================================================

(and the same with ``ssd``). The ``aggregate`` target has the ``rank_*`` statistics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tailgate.errors import InputError
from tailgate.prereg.answer import protocol_settings
from tailgate.prereg.study import Study, worse_of
from tailgate.seeds import seed_sequence

from .base import AnalysisKind, AnalysisResult, Problem
from .criteria import StatisticRef
from .dominance_calibration import CALIBRATION_TEXT, DEFAULT_CALIBRATION, calibration_of
from .meanrisk import (
    CONSISTENT_RISKS,
    RISKS,
    aggregate_ranks,
    mean_risk,
    mean_win_rate,
    portfolio,
    ranks_of,
)

if TYPE_CHECKING:
    from .dominance import DominanceTests

__all__ = ["DOMINANCE", "DominanceAnalysis", "settings"]

_ORDER = {"fsd": 1, "ssd": 2}
#: pair statistic name → (order, key in the stored tests)
_PAIR_STATS = {
    **{f"{stat}_{o}": (o, stat) for stat in ("eps", "delta", "r") for o in _ORDER},
    **{f"eps_{o}_ucb": (o, "eps_ucb") for o in _ORDER},
}
_RANK_STATS = ("rank_fsd", "rank_ssd", "rank_mean_risk", "rank_mwr")
_ONE_STATS = (*_RANK_STATS, "mwr", *(f"score_{r}" for r in RISKS))


def _scorer_scales(data: Mapping[str, Any], scorer: Mapping[str, Any]) -> list[str]:
    if scorer.get("bounded", True):
        return [str(s) for s in data["transform"]["scales"]]
    return ["identity"]


def settings(spec: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter with the documented default applied for absent fields."""
    p = protocol_settings(data)
    scorers = {s["name"]: s for s in data["scorers"]}
    scale = {}
    for name in spec["scorers"]:
        have = _scorer_scales(data, scorers[name]) if name in scorers else []
        want = spec.get("scale", p["headline_scale"])
        scale[name] = want if ("scale" in spec or want in have) else "identity"
    weights = spec.get("weights") or {s: 1.0 for s in spec["scorers"]}
    return {
        "conditions": list(spec["conditions"]),
        "scorers": list(spec["scorers"]),
        "scale": scale,
        # the severities are oriented by each scorer's `worse` (larger is worse) before any
        # analysis reads them, so every scorer is higher_is_worse here
        "orientation": {s: "higher_is_worse" for s in spec["scorers"]},
        "orders": sorted(int(o) for o in spec.get("orders", [1, 2])),
        "alpha": float(spec.get("alpha", p["alpha"])),
        "resamples": int(spec.get("resamples", 1000)),
        "resampling": str(spec.get("resampling", p["bootstrap"]["resampling"])),
        "eps0": [float(e) for e in spec.get("eps0", [])],
        "risk_level": float(spec.get("risk_level", 1.0 - float(p["tvar_level"]))),
        "weights": {s: float(weights.get(s, 0.0)) for s in spec["scorers"]},
        "aggregation": str(spec.get("aggregation", "borda")),
        "calibration": str(spec.get("calibration", DEFAULT_CALIBRATION)),
    }


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


class DominanceAnalysis(AnalysisKind):
    """Nitsure et al. (2024) as an analysis kind (module docstring)."""

    kind = "dominance"
    protocol_defaults = ("alpha", "headline_scale", "bootstrap", "tvar_level")

    # --- registration ------------------------------------------------------------------
    def check_spec(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
        out = []
        names = [c["name"] for c in data["conditions"]]
        for i, c in enumerate(spec["conditions"]):
            if c not in names:
                out.append(
                    Problem(
                        ("conditions", i),
                        f"'{c}' is not a registered condition",
                        f"use names from 'conditions' ({', '.join(names)})",
                    )
                )
        scorers = {s["name"]: s for s in data["scorers"]}
        for i, s in enumerate(spec["scorers"]):
            if s not in scorers:
                out.append(
                    Problem(
                        ("scorers", i),
                        f"'{s}' is not a registered scorer",
                        f"use names from 'scorers' ({', '.join(scorers)})",
                    )
                )
            elif "scale" in spec and spec["scale"] not in _scorer_scales(data, scorers[s]):
                out.append(
                    Problem(
                        ("scale",),
                        f"scorer '{s}' is not analysed on the {spec['scale']} scale",
                        f"use one of {', '.join(_scorer_scales(data, scorers[s]))}",
                    )
                )
        for key in ("orientation", "weights"):
            for s in spec.get(key) or {}:
                if s not in spec["scorers"]:
                    out.append(
                        Problem(
                            (key, s),
                            f"'{s}' is not among this analysis's scorers",
                            "name only scorers listed in 'scorers'",
                        )
                    )
        for s, o in (spec.get("orientation") or {}).items():
            if s not in scorers or s not in spec["scorers"]:
                continue
            worse = worse_of(scorers[s])
            said = "higher" if o == "higher_is_worse" else "lower"
            if worse is not None and said != worse:
                out.append(
                    Problem(
                        ("orientation", s),
                        f"orientation {o} of scorer '{s}' contradicts the scorer's `worse: "
                        f"{worse}` (the direction of a scorer is declared once, on the scorer)",
                        f"remove the orientation entry and write `worse: {said}` on scorer '{s}'",
                    )
                )
        if spec.get("weights") is not None:
            w = spec["weights"]
            if set(w) != set(spec["scorers"]) or not sum(w.values()) > 0:
                out.append(
                    Problem(
                        ("weights",),
                        "portfolio weights must name every scorer and not all be 0",
                        "give a weight λ >= 0 for each scorer of the analysis",
                    )
                )
        if spec.get("aggregation") == "kemeny" and len(spec["conditions"]) > 16:
            out.append(
                Problem(
                    ("aggregation",),
                    "exact Kemeny aggregation supports at most 16 conditions",
                    "use borda or footrule",
                )
            )
        return out

    def _targets(self, spec: Mapping[str, Any]) -> list[str]:
        scorers = list(spec["scorers"])
        return scorers + (["portfolio", "aggregate"] if len(scorers) > 1 else [])

    def check_statistic(
        self, spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
    ) -> str | None:
        targets = self._targets(spec)
        target = ref.target or (spec["scorers"][0] if len(spec["scorers"]) == 1 else None)
        if target is None:
            return "needs a target: one of " + ", ".join(targets)
        if target not in targets:
            return f"names target '{target}', not one of {', '.join(targets)}"
        orders = [int(o) for o in spec.get("orders", [1, 2])]
        order = _PAIR_STATS.get(ref.name, (None,))[0] or {
            "rank_fsd": "fsd",
            "rank_ssd": "ssd",
        }.get(ref.name)
        if order is not None and _ORDER[order] not in orders:
            return f"needs order {_ORDER[order]}, which 'orders' does not register"
        allowed_one = _RANK_STATS if target == "aggregate" else _ONE_STATS
        if ref.name in _PAIR_STATS and target != "aggregate":
            need = 2
        elif ref.name in allowed_one:
            need = 1
        else:
            return "is not a statistic of this target"
        if len(ref.args) != need:
            return f"takes {need} condition(s), got {len(ref.args)}"
        for a in ref.args:
            if a not in spec["conditions"]:
                return f"names '{a}', which is not among the analysis's conditions"
        if need == 2 and ref.args[0] == ref.args[1]:
            return "compares a condition with itself"
        return None

    def statistic_help(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> str:
        return (
            "write e.g. 'r_ssd(a, b)' (relative test, pass if <= 0), 'eps_fsd_ucb(a, b)', "
            "'rank_ssd(a)'; prefix 'portfolio:', 'aggregate:' or '<scorer>:' with several "
            "scorers (tailgate.analyses.dominance_kind)"
        )

    # --- computation ---------------------------------------------------------------------
    def inputs(
        self, spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
    ) -> dict[str, list[str]]:
        st = settings(spec, study.data)
        return {
            "severities": [
                layout["severities"].format(scorer=s, scale=st["scale"][s], condition=c)
                for s in st["scorers"]
                for c in st["conditions"]
            ]
        }

    def _load(self, st: dict[str, Any], paths: Sequence[str]) -> dict[str, list[np.ndarray]]:
        from tailgate.severities import read_severities  # pyarrow loads with the first read

        it = iter(paths)
        by_scorer: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for s in st["scorers"]:
            by_scorer[s] = [read_severities(next(it)) for _ in st["conditions"]]
        aligned_needed = st["resampling"] == "paired" or len(st["scorers"]) > 1
        ref_ids = None
        out: dict[str, list[np.ndarray]] = {}
        for s, rows in by_scorer.items():
            sign = -1.0 if st["orientation"][s] == "higher_is_worse" else 1.0
            vals = []
            for c, (ids, x) in zip(st["conditions"], rows, strict=True):
                order = np.argsort(ids, kind="stable")
                if aligned_needed:
                    if ref_ids is None:
                        ref_ids = ids[order]
                    elif not np.array_equal(ids[order], ref_ids):
                        why = (
                            "resampling is 'paired'"
                            if st["resampling"] == "paired"
                            else "a portfolio joins the scorers' rows on prompt"
                        )
                        raise InputError(
                            f"dominance analysis: condition '{c}' (scorer '{s}') is not on the "
                            f"same prompts as the first condition, but {why}. Fix: register "
                            "conditions on the same prompts, or 'resampling: independent' with "
                            "a single scorer (an amendment if frozen)."
                        )
                vals.append(sign * x[order])
            out[s] = vals
        return out

    def _target_stats(
        self, samples: list[np.ndarray], st: dict[str, Any], seed: Any, threads: int
    ) -> dict[str, Any]:
        # the tests' numba kernels load with the first dominance computation, not with the
        # registry (a job that only validates the study never compiles them)
        from .dominance import dominance_tests_orders

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
        for name, o in _ORDER.items():
            if o in tests:
                out[name] = _tests_dict(tests[o])
        return out

    def compute(
        self,
        study: Study,
        name: str,
        spec: Mapping[str, Any],
        inputs: Mapping[str, Sequence[str]],
        *,
        threads: int = 1,
    ) -> AnalysisResult:
        st = settings(spec, study.data)
        samples = self._load(st, inputs["severities"])
        k = len(st["conditions"])
        targets: dict[str, Any] = {}
        for s in st["scorers"]:
            seed = seed_sequence(study.seed, "analysis", name, s)
            targets[s] = self._target_stats(samples[s], st, seed, threads)
        if len(st["scorers"]) > 1:
            port = portfolio(samples, st["weights"])
            seed = seed_sequence(study.seed, "analysis", name, "portfolio")
            targets["portfolio"] = self._target_stats(port, st, seed, threads)
            agg: dict[str, Any] = {}
            for o in ("fsd", "ssd"):
                if o in targets[st["scorers"][0]]:
                    agg[f"rank_{o}"] = aggregate_ranks(
                        [targets[s][o]["rank"] for s in st["scorers"]], st["aggregation"]
                    ).tolist()
            agg["rank_mean_risk"] = aggregate_ranks(
                [targets[s]["mean_risk"]["rank"] for s in st["scorers"]], st["aggregation"]
            ).tolist()
            agg["rank_mwr"] = aggregate_ranks(
                [targets[s]["mwr"]["rank"] for s in st["scorers"]], st["aggregation"]
            ).tolist()
            targets["aggregate"] = agg
        return AnalysisResult(
            {
                "settings": st,
                "k": k,
                "alpha_pair": st["alpha"] / k**2,
                "targets": targets,
            }
        )

    # --- decisions -----------------------------------------------------------------------
    def statistic(
        self, spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
    ) -> tuple[float | None, str]:
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
        order, stat = _PAIR_STATS[name]
        value = t[order][stat][idx[0]][idx[1]]
        how = CALIBRATION_TEXT[calibration_of(t[order])]
        note = {
            "eps": "violation ratio",
            "eps_ucb": f"upper bound at 1 − α/k² = {1 - stats['alpha_pair']:.5g} ({how})",
            "delta": "relative statistic Δε",
            "r": f"upper bound of Δε at 1 − α/k² = {1 - stats['alpha_pair']:.5g} ({how})",
        }[stat]
        return (None if value is None else float(value)), note


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


DOMINANCE = DominanceAnalysis()
