"""Analysis kind ``severity``: severity index b, families and the deployment table (ERRORQUAKE
(2026)).

Data: the severities of one registered scorer (``scorer``; ``scale`` [identity]) for each of the
analysis's ``conditions``, every value on the registered grid 0, δ, …, top (0 = correct; an
imported column, a judge scorer's parsed grade, or simulated Gutenberg–Richter data). The
statistics are those of :mod:`tailgate.analyses.severity` (the methods note section B).

Parameters (``$defs/analysis_severity``; an absent field means the default in brackets):
``grid`` {``step`` [0.5], ``top`` [4.0]}; ``mc`` [``reselect``: m_c by KS in the data and in each
resample] or a fixed grid value; ``min_events`` [30] per m_c candidate (and ≥ 3 grid levels);
``resamples`` B [2000]; ``level`` of every CI [0.95]; ``tolerance`` of matched accuracy |Δε|
[0.05]; ``delta_b_floor`` a matched pair's |Δb| must reach to count [0]; ``x_min`` of the family
fits [the first positive level]; ``decisive`` {``pvalue`` [0.05], ``delta_bic`` [6],
``rule`` [``test``: the test of the BIC-best family against the runner-up must reject in its
favour, the likelihood-ratio test with the boundary χ² mixture for a nested pair and Vuong's
otherwise; ``paper``: that test's p < pvalue or ΔBIC > delta_bic, ERRORQUAKE (2026) Section 2]};
``thresholds`` of the deployment table [1.5, 2.0, 2.5, 3.0, 3.5, 4.0]; ``secondary`` [none] a
second judge (scorer) and ``aggregation`` [primary] of the two: ``primary``, ``secondary``,
``max``, ``min`` or ``mean`` rounded to the grid (halves up) over the rows both graded; with a
secondary judge every other aggregation's headline count is reported as a robustness check
(ERRORQUAKE (2026), Section 4.1, "Judge-aggregation robustness"), criterion statistic
``disjoint_pairs_under(rule)``.

Criteria statistics (``name(args)``):

==================================  ===========================================================
``disjoint_pairs``                  matched pairs with disjoint b CIs and |Δb| ≥ floor (ERRORQUAKE
(2026)'s
                                    headline); ``disjoint_pairs_low``/``_high`` its CI
``matched_pairs``                   pairs with |Δε| < tolerance
``b(c)``, ``b_low(c)``, ``b_high(c)``  finite-grid b̂ of condition c and its bootstrap CI
``error_rate(c)``                   ε = P(S > 0)
``delta_b(a, b)``                   b̂_a − b̂_b; ``delta_b_pvalue(a, b)`` its bootstrap test at the
                                    shared m_c (matched pairs only, ERRORQUAKE (2026), App. O)
``tail_ratio(c)``                   P(M ≥ 3)/P(M ≥ 1)
``per_million(c, t)``               events with severity ≥ t per million queries
``non_exponential``                 conditions whose BIC-best family is not the exponential
``decisive``                        conditions whose BIC-best family is decisive
==================================  ===========================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.prereg.study import Study
from tailgate.seeds import seed_sequence

from . import severity as S
from .base import AnalysisKind, AnalysisResult, Problem
from .criteria import StatisticRef
from .kind_support import (
    condition_problems,
    num,
    scorer_problems,
    seed_key,
    severity_paths,
    unknown_args,
)

__all__ = ["SEVERITY", "SeverityAnalysis", "settings"]

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


def aggregate_grades(
    ids1: np.ndarray, g1: np.ndarray, ids2: np.ndarray, g2: np.ndarray, rule: str, step: float
) -> np.ndarray:
    """Combine a primary and a secondary judge's grades. ``primary``/``secondary`` take one
    judge's rows as they are; ``max``, ``min`` and ``mean`` use the rows both judges graded
    (joined on prompt id), the mean rounded to the grid with halves rounded up (the more severe
    grade)."""
    if rule == "primary":
        return g1
    if rule == "secondary":
        return g2
    _, i1, i2 = np.intersect1d(ids1, ids2, assume_unique=True, return_indices=True)
    a, b = g1[i1], g2[i2]
    if rule == "max":
        return np.maximum(a, b)
    if rule == "min":
        return np.minimum(a, b)
    return np.floor((a + b) / 2.0 / step + 0.5) * step


def _grid(st: Mapping[str, Any]) -> np.ndarray:
    return S.make_grid(st["grid"]["top"], st["grid"]["step"])


def _on_grid(value: float, grid: np.ndarray, positive: bool = True) -> bool:
    i = round(value / (grid[1] - grid[0]))
    return (1 if positive else 0) <= i < grid.size and abs(grid[i] - value) < 1e-9


def _condition_stats(fit: S.SeverityFit, grid: np.ndarray, st: Mapping[str, Any]) -> dict:
    e = fit.estimate
    boot = fit.bootstrap
    rows, ratio = S.deployment_table(fit.counts, grid, st["thresholds"], st["level"])
    fam = S.compare_families(
        fit.counts,
        grid,
        x_min=st["x_min"],
        p_threshold=st["decisive"]["pvalue"],
        bic_threshold=st["decisive"]["delta_bic"],
        rule=st["decisive"]["rule"],
    )
    sel = fit.selection
    mc_share = {}
    if boot is not None:
        levels, counts = np.unique(boot.m_c[np.isfinite(boot.m_c)], return_counts=True)
        mc_share = {f"{v:g}": int(c) for v, c in zip(levels, counts, strict=True)}
    return {
        "status": fit.status,
        "counts": [int(c) for c in fit.counts],
        "n": int(fit.counts.sum()),
        "errors": fit.error_rate.k,
        "error_rate": fit.error_rate.proportion,
        "error_ci": list(fit.error_rate.confidence_interval),
        "m_c": None if e is None else e.m_c,
        "n_tail": None if e is None else e.n_tail,
        "b": None if e is None else num(e.b),
        "b_ci": [num(v) for v in fit.ci],
        "b_aki_utsu": None if e is None else num(e.b_aki_utsu),
        "b_unbounded": None if e is None else num(e.b_unbounded),
        "se_aki": None if e is None else num(e.se_aki),
        "se_shi_bolt": None if e is None else num(e.se_shi_bolt),
        "ks": {
            "candidates": list(sel.candidates),
            "n_tail": list(sel.n_tail),
            "distances": [num(d) for d in sel.distances],
        },
        "bootstrap_failed": None if boot is None else boot.failed,
        "bootstrap_m_c": mc_share,
        "families": {
            "x_min": fam.x_min,
            "best": fam.best,
            "runner_up": fam.runner_up,
            "decisive": fam.decisive,
            "decisive_rule": fam.rule,
            "deciding_test": {
                "kind": "LR (nested)" if fam.deciding_test.nested else "Vuong",
                "pvalue": num(fam.deciding_test.pvalue),
                "statistic": num(fam.deciding_test.statistic),
            },
            "delta_bic": {f: num(v) for f, v in fam.delta_bic.items()},
            "loglik": {f: num(v.loglik) for f, v in fam.fits.items()},
            "parameters": {
                f: {k: num(p) for k, p in v.parameters.items()} for f, v in fam.fits.items()
            },
            "converged": {f: v.converged for f, v in fam.fits.items()},
            "tests": [
                {
                    "first": t.first,
                    "second": t.second,
                    "statistic": num(t.statistic),
                    "pvalue": num(t.pvalue),
                    "nested": t.nested,
                }
                for t in fam.tests
            ],
        },
        "deployment": [
            {
                "threshold": r.threshold,
                "events": r.events,
                "per_million": r.per_million,
                "ci": list(r.confidence_interval),
            }
            for r in rows
        ],
        "tail_ratio": num(ratio),
    }


class SeverityAnalysis(AnalysisKind):
    """ERRORQUAKE (2026) as an analysis kind (module docstring)."""

    kind = "severity"

    # --- registration ------------------------------------------------------------------
    def check_spec(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
        out = condition_problems(spec["conditions"], data) + scorer_problems(spec, data)
        st = settings(spec)
        try:
            grid = _grid(st)
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
        self, spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
    ) -> str | None:
        if ref.target is not None:
            return "takes no target"
        need = (
            0 if ref.name in _NONE else 1 if ref.name in _ONE else 2 if ref.name in _TWO else None
        )
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

    def statistic_help(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> str:
        return (
            "write e.g. 'disjoint_pairs', 'b(a)', 'delta_b_pvalue(a, b)', 'per_million(a, 3.0)' "
            "(tailgate.analyses.severity_kind)"
        )

    # --- computation ---------------------------------------------------------------------
    def inputs(
        self, spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
    ) -> dict[str, list[str]]:
        out = {"severities": severity_paths(spec, layout, spec["conditions"])}
        if spec.get("secondary") is not None:
            second = {**spec, "scorer": spec["secondary"]}
            out["secondary"] = severity_paths(second, layout, spec["conditions"])
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
        from tailgate.severities import read_severities  # pyarrow loads with the first read

        st = settings(spec)
        grid = _grid(st)
        step = st["grid"]["step"]
        primary = [read_severities(p) for p in inputs["severities"]]
        secondary = [read_severities(p) for p in inputs.get("secondary", [])]
        rules = [st["aggregation"]] + (
            [r for r in AGGREGATIONS if r != st["aggregation"]] if secondary else []
        )
        runs = {}
        for rule in rules:
            grades = [
                aggregate_grades(
                    *primary[i], *(secondary[i] if secondary else primary[i]), rule, step
                )
                for i in range(len(st["conditions"]))
            ]
            runs[rule] = self._analyse(study, name, st, grid, grades, inputs, rule)
        fits, pairs, count = runs[st["aggregation"]]
        robustness = {
            rule: {"disjoint_pairs": c.statistic, "ci": [num(v) for v in c.confidence_interval]}
            for rule, (_, _, c) in runs.items()
        }
        return AnalysisResult(
            {
                "settings": st,
                "conditions": {f.name: _condition_stats(f, grid, st) for f in fits},
                "pairs": [
                    {
                        "first": p.first,
                        "second": p.second,
                        "delta_error_rate": p.delta_error_rate,
                        "matched": p.matched,
                        "delta_b": num(p.delta_b),
                        "disjoint": p.disjoint,
                        "above_floor": p.above_floor,
                        "discriminating": p.discriminating,
                        "test": None
                        if p.test is None
                        else {
                            "m_c": p.test.m_c,
                            "statistic": num(p.test.statistic),
                            "ci": [num(v) for v in p.test.confidence_interval],
                            "pvalue": num(p.test.pvalue),
                        },
                    }
                    for p in pairs
                ],
                "robustness": robustness,
                "headline": {
                    "disjoint_pairs": count.statistic,
                    "ci": [num(v) for v in count.confidence_interval],
                    "matched_pairs": sum(p.matched for p in pairs),
                },
            }
        )

    def _analyse(
        self,
        study: Study,
        name: str,
        st: Mapping[str, Any],
        grid: np.ndarray,
        grades: Sequence[np.ndarray],
        inputs: Mapping[str, Sequence[str]],
        rule: str,
    ) -> tuple[list[S.SeverityFit], list[S.PairComparison], S.PairCount]:
        """b per condition, the pairs and the headline count for one aggregation of the judges
        (the registered one keys its streams as before; the others add the rule's name)."""
        tag = () if rule == st["aggregation"] else (rule,)
        fits = []
        for i, c in enumerate(st["conditions"]):
            try:
                counts = S.counts_on_grid(grades[i], grid)
            except ValueError as exc:
                raise InputError(
                    f"{inputs['severities'][i]}: {exc}. The severity analysis '{name}' needs "
                    f"scorer '{st['scorer']}' to grade on the registered grid. Fix: map the "
                    "grades onto the grid in the scorer, or register the grid the data use (an "
                    "amendment if frozen)."
                ) from None
            fits.append(
                S.analyse_condition(
                    c,
                    counts,
                    grid,
                    resamples=st["resamples"],
                    seed=seed_sequence(study.seed, *seed_key(name, "b", c, *tag)),
                    mc=st["mc"],
                    level=st["level"],
                    min_events=st["min_events"],
                )
            )
        seeds = {
            (a, b): (
                seed_sequence(study.seed, *seed_key(name, "delta_b", a, b, a, *tag)),
                seed_sequence(study.seed, *seed_key(name, "delta_b", a, b, b, *tag)),
            )
            for i, a in enumerate(st["conditions"])
            for b in st["conditions"][i + 1 :]
        }
        pairs = S.matched_pairs(
            fits,
            grid,
            tolerance=st["tolerance"],
            floor=st["delta_b_floor"],
            resamples=st["resamples"],
            seeds=seeds if not tag else None,  # Δb tests for the registered aggregation only
        )
        count = S.disjoint_pair_count(
            fits, tolerance=st["tolerance"], floor=st["delta_b_floor"], level=st["level"]
        )
        return fits, pairs, count

    # --- decisions -----------------------------------------------------------------------
    def statistic(
        self, spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
    ) -> tuple[float | None, str]:
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


SEVERITY = SeverityAnalysis()
