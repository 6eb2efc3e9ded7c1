"""The statistics of a ``severity`` analysis (ERRORQUAKE (2026); methods note section B): per
condition b with its bootstrap CI, the error rate, the families and the deployment table, the
matched-accuracy pairs with their Δb tests and the headline count of disjoint-CI pairs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.stats.stored import finite_or_none

from ..base import AnalysisResult, AnalysisRun
from . import statistics as S
from .inputs import read_grades
from .spec import AGGREGATIONS, grid_of, settings

__all__ = ["aggregate_grades", "analyse"]


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
        "b": None if e is None else finite_or_none(e.b),
        "b_ci": [finite_or_none(v) for v in fit.ci],
        "b_aki_utsu": None if e is None else finite_or_none(e.b_aki_utsu),
        "b_unbounded": None if e is None else finite_or_none(e.b_unbounded),
        "se_aki": None if e is None else finite_or_none(e.se_aki),
        "se_shi_bolt": None if e is None else finite_or_none(e.se_shi_bolt),
        "ks": {
            "candidates": list(sel.candidates),
            "n_tail": list(sel.n_tail),
            "distances": [finite_or_none(d) for d in sel.distances],
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
                "pvalue": finite_or_none(fam.deciding_test.pvalue),
                "statistic": finite_or_none(fam.deciding_test.statistic),
            },
            "delta_bic": {f: finite_or_none(v) for f, v in fam.delta_bic.items()},
            "loglik": {f: finite_or_none(v.loglik) for f, v in fam.fits.items()},
            "parameters": {
                f: {k: finite_or_none(p) for k, p in v.parameters.items()}
                for f, v in fam.fits.items()
            },
            "converged": {f: v.converged for f, v in fam.fits.items()},
            "tests": [
                {
                    "first": t.first,
                    "second": t.second,
                    "statistic": finite_or_none(t.statistic),
                    "pvalue": finite_or_none(t.pvalue),
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
        "tail_ratio": finite_or_none(ratio),
    }


def analyse(run: AnalysisRun) -> AnalysisResult:
    """b per condition, the matched pairs, the deployment table and the families, under the
    registered aggregation of the judges (and, with a secondary judge, the headline count under
    every other aggregation)."""
    st = settings(run.spec)
    grid = grid_of(st)
    step = st["grid"]["step"]
    primary = read_grades(run.inputs["severities"])
    secondary = read_grades(run.inputs.get("secondary", []))
    rules = [st["aggregation"]] + (
        [r for r in AGGREGATIONS if r != st["aggregation"]] if secondary else []
    )
    runs = {}
    for rule in rules:
        grades = [
            aggregate_grades(*primary[i], *(secondary[i] if secondary else primary[i]), rule, step)
            for i in range(len(st["conditions"]))
        ]
        runs[rule] = _analyse(run, st, grid, grades, rule)
    fits, pairs, count = runs[st["aggregation"]]
    robustness = {
        rule: {
            "disjoint_pairs": c.statistic,
            "ci": [finite_or_none(v) for v in c.confidence_interval],
        }
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
                    "delta_b": finite_or_none(p.delta_b),
                    "disjoint": p.disjoint,
                    "above_floor": p.above_floor,
                    "discriminating": p.discriminating,
                    "test": None
                    if p.test is None
                    else {
                        "m_c": p.test.m_c,
                        "statistic": finite_or_none(p.test.statistic),
                        "ci": [finite_or_none(v) for v in p.test.confidence_interval],
                        "pvalue": finite_or_none(p.test.pvalue),
                    },
                }
                for p in pairs
            ],
            "robustness": robustness,
            "headline": {
                "disjoint_pairs": count.statistic,
                "ci": [finite_or_none(v) for v in count.confidence_interval],
                "matched_pairs": sum(p.matched for p in pairs),
            },
        }
    )


def _analyse(
    run: AnalysisRun,
    st: Mapping[str, Any],
    grid: np.ndarray,
    grades: Sequence[np.ndarray],
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
                f"{run.inputs['severities'][i]}: {exc}. The severity analysis '{run.name}' needs "
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
                seed=run.seed("b", c, *tag),
                mc=st["mc"],
                level=st["level"],
                min_events=st["min_events"],
            )
        )
    seeds = {
        (a, b): (
            run.seed("delta_b", a, b, a, *tag),
            run.seed("delta_b", a, b, b, *tag),
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
