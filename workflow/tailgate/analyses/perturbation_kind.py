"""Analysis kind ``perturbation``: the composite-null test of Acharyya et al. (2025) on binary
responses.

Each registered condition is one query; its rows are the responses, and a response is a "yes"
when the registered ``scorer``'s severity exceeds ``threshold`` [0.5] (a 0/1 score, a regex
match, a classifier probability). The conditions play four roles:

- ``pilot``: m0 semantically irrelevant perturbations of the base query; the first
  ``pilot_responses`` [all] responses of each (in prompt-id order) estimate the null interval
  [â, b̂] by Algorithm B (``interval`` [order_statistics] or ``moments``; methods note A6);
- the design (m, n, τ) is then derived from [â, b̂], the registered ``budget`` B and ``alpha``
  [protocol.alpha] by Algorithm C (methods note A7) — a **derived value of the registration**: the
  rule
  was frozen, so deriving it from the pilot is not a change. The statistics store it beside the
  pilot counts it came from (``design.derived_from``), and every criterion re-derives it from
  those counts first: a stored design that does not follow from them makes every criterion
  that reads it NOT_TESTED, so the audit's re-derivation disagrees with a forged one. Changing
  the pilot, the perturbation lists or the budget after data exists is a decision-rule change
  (refused until amended, then a reported deviation);
- ``null_queries``: the first m of them, n responses each, are the sampled null queries;
- ``test_queries``: each gets the decision T̂ = min_i |p̂_t − p̂_i| > τ on its first n responses,
  the exact plug-in size and average power (methods note A5), and beside it the classical
  two-proportion
  test against ``base_query`` [the first null query] on all their responses (Eq. 1 of Acharyya et
  al. (2025),
  which the composite null replaces).

- ``embedding`` [none] = {model, responses, resamples}: the energy-distance test on embedded
  responses (methods note A8). Each response is embedded by the registered local model (the
  mean-pooled last hidden state, :mod:`tailgate.score.embedding`); each test query's first
  ``responses`` responses are tested against the null queries' first ``responses`` pooled, and
  against each null query alone (pairwise), with ``resamples`` label permutations whose seeds
  derive from the study seed.

If fewer than m null queries or fewer than n responses per query are available, the design is
not met: the decisions are not made and criteria on them are NOT_TESTED. When every pilot query
answered alike (estimated width 0) no design exists: a reported status, and every criterion but
``naive_pvalue`` is NOT_TESTED.

Criteria statistics: ``reject(t)`` (1 reject, 0 keep), ``pvalue(t)`` (plug-in composite p-value),
``naive_pvalue(t)``, ``statistic(t)`` (T̂), and ``size``, ``average_power``, ``width`` (b̂ − â),
``m``, ``n``, ``tau`` of the design; with ``embedding``: ``energy_pvalue(t)`` and
``energy_statistic(t)`` (against the pooled null queries) and ``energy_pvalue(t, q)``,
``energy_statistic(t, q)`` (against null query q).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.prereg.answer import protocol_settings
from tailgate.prereg.study import Study
from tailgate.seeds import seed_sequence

from . import perturbation as P
from .base import AnalysisKind, AnalysisResult, Problem
from .criteria import StatisticRef
from .kind_support import (
    condition_problems,
    num,
    scorer_problems,
    seed_key,
    severity_paths,
    sorted_values,
    unknown_args,
)

__all__ = ["PERTURBATION", "PerturbationAnalysis", "settings"]

_PER_TEST = ("reject", "pvalue", "naive_pvalue", "statistic")
_DESIGN = ("size", "average_power", "width", "m", "n", "tau")
_ENERGY = ("energy_pvalue", "energy_statistic")


def settings(spec: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter with the documented default applied for absent fields."""
    nulls = list(spec["null_queries"])
    return {
        "scorer": str(spec["scorer"]),
        "scale": str(spec.get("scale", "identity")),
        "threshold": float(spec.get("threshold", 0.5)),
        "pilot": list(spec["pilot"]),
        "pilot_responses": spec.get("pilot_responses"),
        "null_queries": nulls,
        "test_queries": list(spec["test_queries"]),
        "base_query": str(spec.get("base_query", nulls[0])),
        "budget": int(spec["budget"]),
        "alpha": float(spec.get("alpha", protocol_settings(data)["alpha"])),
        "interval": str(spec.get("interval", "order_statistics")),
        "null_model": str(spec.get("null_model", "uniform")),
        "min_null_queries": int(spec.get("min_null_queries", P.MIN_NULL_QUERIES)),
        "embedding": None if spec.get("embedding") is None else dict(spec["embedding"]),
    }


def _all_conditions(st: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for c in [*st["pilot"], *st["null_queries"], *st["test_queries"], st["base_query"]]:
        if c not in out:
            out.append(c)
    return out


class PerturbationAnalysis(AnalysisKind):
    """Acharyya et al. (2025) as an analysis kind (module docstring)."""

    kind = "perturbation"
    protocol_defaults = ("alpha",)

    def check_spec(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
        out = scorer_problems(spec, data)
        for key in ("pilot", "null_queries", "test_queries"):
            out += condition_problems(spec[key], data, key)
        if "base_query" in spec:
            out += condition_problems([spec["base_query"]], data, "base_query")
        emb = spec.get("embedding")
        if emb is not None:
            models = data.get("models") or {}
            if emb["model"] not in models:
                out.append(
                    Problem(
                        ("embedding", "model"),
                        f"'{emb['model']}' is not a key of models",
                        f"register the embedding model under 'models' (known: "
                        f"{', '.join(sorted(models)) or 'none'})",
                    )
                )
            if data["data"]["backend"] == "simulate":
                out.append(
                    Problem(
                        ("embedding",),
                        "the simulate backend writes no response texts to embed",
                        "use the transformers or import backend, or drop 'embedding'",
                    )
                )
        overlap = set(spec["test_queries"]) & (set(spec["null_queries"]) | set(spec["pilot"]))
        if overlap:
            out.append(
                Problem(
                    ("test_queries",),
                    "test queries also listed as null or pilot queries: "
                    + ", ".join(sorted(overlap)),
                    "a test query is tested against the null queries: list it only once",
                )
            )
        return out

    def check_statistic(
        self, spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
    ) -> str | None:
        if ref.target is not None:
            return "takes no target"
        if ref.name in _DESIGN:
            return None if not ref.args else f"takes no arguments, got {len(ref.args)}"
        if ref.name in _ENERGY:
            if spec.get("embedding") is None:
                return "needs a registered 'embedding' (model, responses, resamples)"
            if len(ref.args) not in (1, 2):
                return f"takes a test query and optionally a null query, got {len(ref.args)}"
            if ref.args[0] not in spec["test_queries"]:
                return f"names '{ref.args[0]}', which is not a test query"
            if len(ref.args) == 2 and ref.args[1] not in spec["null_queries"]:
                return f"names '{ref.args[1]}', which is not a null query"
            return None
        if ref.name not in _PER_TEST:
            return "is not a statistic of the perturbation kind"
        if len(ref.args) != 1:
            return f"takes 1 test query, got {len(ref.args)}"
        return unknown_args(ref.args, spec["test_queries"])

    def statistic_help(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> str:
        return (
            "write e.g. 'reject(t)' (1 when the composite test rejects), 'pvalue(t)', 'size', "
            "'average_power' (tailgate.analyses.perturbation_kind)"
        )

    def inputs(
        self, spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
    ) -> dict[str, list[str]]:
        st = settings(spec, study.data)
        out = {"severities": severity_paths(spec, layout, _all_conditions(st))}
        if st["embedding"] is not None:
            template = layout.get("embeddings") or layout["severities"].replace(
                "/severities/{scorer}/{scale}/{condition}.parquet",
                "/embeddings/{embedder}/{condition}/shard-{shard}.parquet",
            )
            shards = int(study.data["generation"]["shards"])
            out["embeddings"] = [
                template.format(embedder=st["embedding"]["model"], condition=c, shard=k)
                for c in _energy_conditions(st)
                for k in range(shards)
            ]
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

        st = settings(spec, study.data)
        yes: dict[str, np.ndarray] = {}
        for c, path in zip(_all_conditions(st), inputs["severities"], strict=True):
            ids, x = read_severities(path)
            yes[c] = (sorted_values(ids, x) > st["threshold"]).astype(np.int64)
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
            met = len(nulls) == d.m and all(
                yes[c].size >= d.n for c in [*nulls, *st["test_queries"]]
            )
            null_counts = [int(yes[c][: d.n].sum()) for c in nulls]
        tests = {}
        base = yes[st["base_query"]]
        for t in st["test_queries"]:
            naive = P.two_proportion_test(
                int(yes[t].sum()), yes[t].size, int(base.sum()), base.size
            )
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
            energy = _energy_tests(study, name, st, inputs["embeddings"], threads=threads)
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
                    "hoeffding_size_bound": num(d.hoeffding_size_bound),
                    "null_model": d.null_model,
                    "min_null_queries": d.min_m,
                    "size_attained": None if d.size_attained is None else num(d.size_attained),
                    "met": met,
                    "derived_from": _derivation(st, n0, pilot_counts),
                },
                "null": {"queries": nulls, "counts": null_counts},
                "tests": tests,
                **({} if energy is None else {"energy": energy}),
            }
        )

    def statistic(
        self, spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
    ) -> tuple[float | None, str]:
        d = stats["design"]
        if ref.name in _ENERGY:
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
        if ref.name in _DESIGN:
            return float(d[ref.name]), "Algorithm C design (methods note A7)"
        t = stats["tests"][ref.args[0]]
        if ref.name == "naive_pvalue":
            return float(t["naive"]["pvalue"]), "two-proportion test against the base query"
        if not d["met"]:
            return None, "the derived design is not met by the sampled responses"
        if ref.name == "reject":
            return float(t["reject"]), "1 = the composite null is rejected"
        return float(t[ref.name]), "composite test (methods note A5)"


def _energy_conditions(st: Mapping[str, Any]) -> list[str]:
    """The queries whose responses are embedded: the test queries, then the null queries."""
    return [*st["test_queries"], *[q for q in st["null_queries"] if q not in st["test_queries"]]]


def _energy_tests(
    study: Study, name: str, st: Mapping[str, Any], paths: Sequence[str], *, threads: int = 1
) -> dict[str, Any]:
    """methods note A8 per test query: against the pooled null queries and against each one
    alone."""
    from tailgate.score.embedding import read_embeddings

    emb = st["embedding"]
    k, R = int(emb["responses"]), int(emb["resamples"])
    conditions = _energy_conditions(st)
    per = len(paths) // len(conditions)
    vectors: dict[str, np.ndarray] = {}
    for i, c in enumerate(conditions):
        _, x = read_embeddings(list(paths[i * per : (i + 1) * per]))
        vectors[c] = x
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

    def run(t: str, other: str, y: np.ndarray) -> dict[str, Any]:
        seed = seed_sequence(study.seed, *seed_key(name, "energy", t, other))
        res = P.energy_test(vectors[t][:k], y, R, seed)
        return {"statistic": res.statistic, "pvalue": res.pvalue, "n1": res.n1, "n2": res.n2}

    for t in st["test_queries"]:
        out["tests"][t] = {
            "pooled": run(t, "pooled", pooled),
            "pairwise": {q: run(t, q, vectors[q][:k]) for q in st["null_queries"]},
        }
    return out


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


PERTURBATION = PerturbationAnalysis()
