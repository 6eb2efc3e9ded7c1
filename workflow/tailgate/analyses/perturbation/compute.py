"""The statistics of a ``perturbation`` analysis (Acharyya et al. (2025); methods note A): the
pilot's interval [â, b̂] (Algorithm B), the design it derives (Algorithm C), each test query's
composite test beside the naive two-proportion test, and the energy tests of embedded
responses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.stats.stored import finite_or_none

from ..base import AnalysisResult, AnalysisRun
from . import statistics as P
from .inputs import read_answers, read_vectors
from .spec import energy_conditions, settings

__all__ = ["analyse"]


def analyse(run: AnalysisRun) -> AnalysisResult:
    """The pilot's interval, the derived design, each test query's composite test beside the
    naive two-proportion test and, where registered, the energy tests."""
    st = settings(run.spec, run.study.data)
    yes = read_answers(st, run.inputs["severities"])
    n0 = st["pilot_responses"] or min(yes[c].size for c in st["pilot"])
    pilot_counts = [int(yes[c][:n0].sum()) for c in st["pilot"]]
    short = [c for c in st["pilot"] if yes[c].size < n0]
    interval = P.estimate_interval(np.array(pilot_counts) / n0, n0, st["interval"])
    width = interval.high - interval.low
    d = (
        P.design(
            interval.low,
            interval.high,
            st["budget"],
            st["alpha"],
            null_model=st["null_model"],
            min_m=st["min_null_queries"],
        )
        if 0 < width < 1
        else None
    )
    if d is None:  # every pilot query answered alike (width 0) or [0, 1]: no design exists
        nulls, null_counts, met = [], [], False
    else:
        nulls = st["null_queries"][: d.m]
        met = len(nulls) == d.m and all(yes[c].size >= d.n for c in [*nulls, *st["test_queries"]])
        null_counts = [int(yes[c][: d.n].sum()) for c in nulls]
    tests = {}
    base = yes[st["base_query"]]
    for t in st["test_queries"]:
        naive = P.two_proportion_test(int(yes[t].sum()), yes[t].size, int(base.sum()), base.size)
        entry: dict[str, Any] = {
            "responses": int(yes[t].size),
            "p_all": float(yes[t].mean()),
            "naive": {"statistic": naive.statistic, "pvalue": naive.pvalue},
        }
        if met:
            ct = P.composite_test(
                int(yes[t][: d.n].sum()),
                null_counts,
                d.n,
                d.J,
                interval.low,
                interval.high,
                st["null_model"],
            )
            entry.update(
                p_test=ct.p_test,
                statistic=ct.statistic,
                reject=ct.reject,
                pvalue=ct.pvalue,
                nearest=nulls[ct.nearest],
            )
        tests[t] = entry
    energy = None
    if st["embedding"] is not None:
        energy = _energy_tests(run, st)
    return AnalysisResult(
        {
            "settings": st,
            "pilot": {
                "queries": st["pilot"],
                "responses": int(n0),
                "counts": pilot_counts,
                "short": short,
                "interval": {
                    "low": interval.low,
                    "high": interval.high,
                    "method": interval.method,
                    "clipped": interval.clipped,
                },
            },
            "design": _no_design(width)
            if d is None
            else {
                "status": "ok",
                "m": d.m,
                "n": d.n,
                "J": d.J,
                "tau": d.tau,
                "size": d.size,
                "size_at_a": d.size_at_a,
                "size_at_b": d.size_at_b,
                "average_power": d.average_power,
                "ideal_size": d.ideal_size,
                "ideal_average_power": P.ideal_average_power(d.m, d.tau, d.a, d.b),
                "hoeffding_size_bound": finite_or_none(d.hoeffding_size_bound),
                "null_model": d.null_model,
                "min_null_queries": d.min_m,
                "size_attained": finite_or_none(d.size_attained),
                "met": met,
                "derived_from": _derivation(st, n0, pilot_counts),
            },
            "null": {"queries": nulls, "counts": null_counts},
            "tests": tests,
            **({} if energy is None else {"energy": energy}),
        }
    )


def _energy_tests(run: AnalysisRun, st: Mapping[str, Any]) -> dict[str, Any]:
    """methods note A8 per test query: against the pooled null queries and against each one
    alone."""
    emb = st["embedding"]
    k, R = int(emb["responses"]), int(emb["resamples"])
    conditions = energy_conditions(st)
    paths = run.inputs["embeddings"]
    vectors = read_vectors(st, paths)
    short = [c for c in conditions if vectors[c].shape[0] < k]
    out: dict[str, Any] = {
        "model": emb["model"],
        "responses": k,
        "resamples": R,
        "short": short,
        "tests": {},
    }
    if short:
        out["status"] = (
            f"not tested: {', '.join(short)} have fewer than the registered {k} responses"
        )
        return out
    widths = {vectors[c].shape[1] for c in conditions}
    if len(widths) != 1:
        raise InputError(
            f"{paths[0]}: the embeddings of the analysis's queries differ in dimension "
            f"({sorted(widths)}). Fix: re-run the embed stage with the registered model."
        )
    out["status"] = "ok"
    pooled = np.vstack([vectors[q][:k] for q in st["null_queries"]])

    def energy(t: str, other: str, y: np.ndarray) -> dict[str, Any]:
        seed = run.seed("energy", t, other)
        res = P.energy_test(vectors[t][:k], y, R, seed)
        return {"statistic": res.statistic, "pvalue": res.pvalue, "n1": res.n1, "n2": res.n2}

    for t in st["test_queries"]:
        out["tests"][t] = {
            "pooled": energy(t, "pooled", pooled),
            "pairwise": {q: energy(t, q, vectors[q][:k]) for q in st["null_queries"]},
        }
    return out


def _derivation(st: Mapping[str, Any], n0: int, counts: Sequence[int]) -> dict[str, Any]:
    """Where the derived design came from: the registered rule and the pilot counts."""
    return {
        "rule": "Algorithm B (methods note A6) on the pilot, then Algorithm C (methods note A7)",
        "pilot_counts": [int(c) for c in counts],
        "pilot_responses": int(n0),
        "interval": st["interval"],
        "budget": int(st["budget"]),
        "alpha": float(st["alpha"]),
        "null_model": st["null_model"],
        "min_null_queries": int(st["min_null_queries"]),
        "registration_change": False,
    }


def _no_design(width: float) -> dict[str, Any]:
    """The design entry when the pilot's interval admits none (a reported status)."""
    keys = ("m", "n", "J", "tau", "size", "size_at_a", "size_at_b", "average_power")
    keys += ("ideal_size", "ideal_average_power", "hoeffding_size_bound")
    return {
        "status": f"no design: the pilot's interval has width {width:.4g} (every pilot query "
        "answered alike, or the interval is all of [0, 1])",
        **dict.fromkeys(keys),
        "met": False,
    }
