"""The registration of a ``perturbation`` analysis: its parameters with their defaults
(:func:`settings`), the queries each role names, their cross-field checks and the criterion
statistics it stores (the list in :mod:`tailgate.analyses.perturbation`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tailgate.prereg.answer import protocol_settings

from ..base import Problem, condition_problems, scorer_problems, unknown_args
from ..criteria import StatisticRef
from . import statistics as P

__all__ = [
    "DESIGN",
    "ENERGY",
    "PER_TEST",
    "SIMULATE_MODELS",
    "all_conditions",
    "check_spec",
    "check_statistic",
    "energy_conditions",
    "settings",
]

PER_TEST = ("reject", "pvalue", "naive_pvalue", "statistic")


DESIGN = ("size", "average_power", "width", "m", "n", "tau")


ENERGY = ("energy_pvalue", "energy_statistic")


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


def all_conditions(st: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for c in [*st["pilot"], *st["null_queries"], *st["test_queries"], st["base_query"]]:
        if c not in out:
            out.append(c)
    return out


def energy_conditions(st: Mapping[str, Any]) -> list[str]:
    """The queries whose responses are embedded: the test queries, then the null queries."""
    return [*st["test_queries"], *[q for q in st["null_queries"] if q not in st["test_queries"]]]


def check_spec(spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
    """Problems of the registered parameters (``data``: the canonical study document)."""
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
            out += _textless_problems(spec, data)
    overlap = set(spec["test_queries"]) & (set(spec["null_queries"]) | set(spec["pilot"]))
    if overlap:
        out.append(
            Problem(
                ("test_queries",),
                "test queries also listed as null or pilot queries: " + ", ".join(sorted(overlap)),
                "a test query is tested against the null queries: list it only once",
            )
        )
    return out


#: the discrete models of ``conditions[].simulate`` in the order the simulate backend picks the
#: first registered one (:data:`tailgate.generate.simulate.DISCRETE_MODELS`)
SIMULATE_MODELS = ("severity_grid", "bernoulli", "token_ce")


def _simulate_model(cond: Mapping[str, Any]) -> str:
    """The model a simulate condition registers: a discrete model's name, else ``bulk/tail``."""
    sim = cond.get("simulate") or {}
    return next((m for m in SIMULATE_MODELS if sim.get(m) is not None), "bulk/tail")


def _textless_problems(spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
    """The simulate backend writes response texts only for ``bernoulli`` conditions ("Yes." and
    "No.", :mod:`tailgate.generate.simulate`): every embedded query must be one."""
    by_name = {c["name"]: c for c in data["conditions"]}
    st = {"test_queries": spec["test_queries"], "null_queries": spec["null_queries"]}
    models = {q: _simulate_model(by_name[q]) for q in energy_conditions(st) if q in by_name}
    other = {q: m for q, m in models.items() if m != "bernoulli"}
    if not other:
        return []
    named = ", ".join(f"{q} ({m})" for q, m in other.items())
    return [
        Problem(
            ("embedding",),
            "the simulate backend writes response texts only for bernoulli conditions, and "
            f"these embedded queries register another model (no texts to embed): {named}",
            "register 'simulate: {bernoulli: {p: …}}' for each test and null query, use the "
            "transformers or import backend, or drop 'embedding'",
        )
    ]


def check_statistic(
    spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
) -> str | None:
    """Why a criterion's ``ref`` names no statistic this analysis stores (None if it does)."""
    if ref.name in DESIGN:
        return None if not ref.args else f"takes no arguments, got {len(ref.args)}"
    if ref.name in ENERGY:
        if spec.get("embedding") is None:
            return "needs a registered 'embedding' (model, responses, resamples)"
        if len(ref.args) not in (1, 2):
            return f"takes a test query and optionally a null query, got {len(ref.args)}"
        if ref.args[0] not in spec["test_queries"]:
            return f"names '{ref.args[0]}', which is not a test query"
        if len(ref.args) == 2 and ref.args[1] not in spec["null_queries"]:
            return f"names '{ref.args[1]}', which is not a null query"
        return None
    if ref.name not in PER_TEST:
        return "is not a statistic of the perturbation kind"
    if len(ref.args) != 1:
        return f"takes 1 test query, got {len(ref.args)}"
    return unknown_args(ref.args, spec["test_queries"])
