"""Hypothesis strategies for registrations, drawn from the pre-registration schema itself.

Every enum, constant and numeric bound comes from the schema (``prereg.v1.schema.json``)
through the field annotations of :mod:`tailgate.prereg.fields` (:func:`field`); the shapes of
the studies follow the shipped studies in ``preregistrations/`` and the template's examples:
the five-gate protocol (with a dominance analysis or none), and with the protocol off
(``protocol: {enabled: false}``) each analysis kind — dominance, severity, perturbation,
percentiles. Either backend (``simulate``, or ``import`` of a small file the strategy describes
and :func:`write_project` writes), every scorer kind, every scale and ``ties`` rule.

The sizes of the design's own simulations (the fields the schema marks ``design-only``:
``protocol.power_simulation``, ``protocol.operating_characteristics``) are drawn at or near their
schema minimum, so that ``tailgate design`` stays cheap; everything else varies within its
schema bounds.

:func:`mutations` turns a valid registration into an invalid one: a value of the wrong type, a
number outside its schema bounds, an unknown key, a missing required field.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from hypothesis import strategies as st
from tailgate.prereg.fields import DESIGN_ONLY, Field, annotations
from tailgate.prereg.schema import load_schema

__all__ = [
    "Registration",
    "field",
    "from_schema",
    "mutations",
    "registrations",
    "write_project",
]

#: condition and scorer names: the schema's name pattern, kept short for readable examples
NAME = r"[a-z][a-z0-9]{0,3}(-[a-z0-9]{1,3})?"


@functools.cache
def _fields() -> dict[str, list[Field]]:
    out: dict[str, list[Field]] = defaultdict(list)
    for f in annotations().fields:
        out[f.pattern].append(f)
    return dict(out)


def field(pattern: str, where: str | None = None) -> dict[str, Any]:
    """The schema of the field ``pattern`` (as :mod:`tailgate.prereg.fields` names it, e.g.
    ``protocol.alpha``, ``scorers[*].head``); ``where``: the definition it is declared in, for
    a field of one branch (``scorer_detoxify``)."""
    found = [f for f in _fields()[pattern] if where is None or f.where == where]
    assert found, f"no schema field {pattern!r} ({where})"
    return found[0].schema


def _bounds(node: dict[str, Any], lo: float, hi: float) -> tuple[float, float, bool, bool]:
    """The schema bounds of a number intersected with the practical range [lo, hi]; whether
    each end is exclusive."""
    low, low_ex = lo, False
    if "minimum" in node and node["minimum"] >= low:
        low = node["minimum"]
    if "exclusiveMinimum" in node and node["exclusiveMinimum"] >= low:
        low, low_ex = node["exclusiveMinimum"], True
    high, high_ex = hi, False
    if "maximum" in node and node["maximum"] <= high:
        high = node["maximum"]
    if "exclusiveMaximum" in node and node["exclusiveMaximum"] <= high:
        high, high_ex = node["exclusiveMaximum"], True
    return low, high, low_ex, high_ex


def from_schema(node: dict[str, Any], lo: float = -10.0, hi: float = 10.0) -> st.SearchStrategy:
    """A value of the schema ``node``: its constant, one of its enum, a boolean, or a number
    within its bounds (and within [lo, hi], rounded to 4 decimals as a user writes it)."""
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if "boolean" in kinds:
        return st.booleans()
    if "integer" in kinds:
        low, high, low_ex, high_ex = _bounds(node, lo, hi)
        return st.integers(math.floor(low) + low_ex, math.ceil(high) - high_ex)
    if "number" in kinds:
        low, high, low_ex, high_ex = _bounds(node, lo, hi)
        step = 1e-4
        return st.floats(low, high, exclude_min=low_ex, exclude_max=high_ex).map(
            lambda x: min(max(round(x, 4), low + step * low_ex), high - step * high_ex)
        )
    raise AssertionError(f"no strategy for {node}")


def _value(pattern: str, where: str | None = None, lo: float = -10.0, hi: float = 10.0):
    return from_schema(field(pattern, where), lo, hi)


def _maybe(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """A value, or nothing (the field left out: its default or its absent meaning)."""
    return st.one_of(st.none(), strategy)


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


@dataclass
class Registration:
    """A registration document, and the import file it needs (rows of ``prompt_id``,
    ``condition``, the score columns and ``completion``), written by :func:`write_project`."""

    doc: dict[str, Any]
    rows: list[dict[str, Any]] = dc_field(default_factory=list)
    data_format: str = "csv"
    #: the file stem (the study's name before any mutation)
    stem: str = ""

    @property
    def name(self) -> str:
        return self.stem or str(self.doc["study"])

    def yaml(self) -> str:
        return yaml.safe_dump(self.doc, sort_keys=False, allow_unicode=True)


def write_project(root: Path, reg: Registration) -> Path:
    """A project at ``root`` with the registration (and its import file); the registration's
    path."""
    (root / "preregistrations").mkdir(parents=True, exist_ok=True)
    (root / "config").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(f"study: {reg.name}\nthreads: 1\n")
    if reg.rows:
        _write_rows(root / "data" / f"scores.{reg.data_format}", reg.rows, reg.data_format)
    path = root / "preregistrations" / f"{reg.name}.yaml"
    path.write_text(reg.yaml(), encoding="utf-8")
    return path


def _write_rows(path: Path, rows: list[dict[str, Any]], fmt: str) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(rows)
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        frame.to_parquet(path, index=False)


# --- the parts of a registration ------------------------------------------------------------


SHAPES = ("protocol", "dominance", "severity", "perturbation", "percentiles")


@st.composite
def _names(draw: st.DrawFn, n_min: int, n_max: int) -> list[str]:
    return draw(
        st.lists(st.from_regex(NAME, fullmatch=True), min_size=n_min, max_size=n_max, unique=True)
    )


@st.composite
def _simulate(draw: st.DrawFn, shape: str) -> dict[str, Any]:
    """A condition's ``simulate`` truth for the shape's data (the template's models)."""
    if shape == "severity":
        grid = {
            "b": draw(_value("conditions[*].simulate.severity_grid.b", lo=0.3, hi=1.6)),
            "error_rate": draw(
                _value("conditions[*].simulate.severity_grid.error_rate", lo=0.1, hi=0.7)
            ),
        }
        return {"severity_grid": grid}
    if shape == "perturbation":
        return {
            "bernoulli": {"p": draw(_value("conditions[*].simulate.bernoulli.p", lo=0.05, hi=0.95))}
        }
    if shape == "percentiles":
        ce = {
            "median": draw(_value("conditions[*].simulate.token_ce.median", hi=3.0)),
            "hard_median": draw(_value("conditions[*].simulate.token_ce.hard_median", hi=15.0)),
        }
        _put(
            ce,
            "hard_share",
            draw(_maybe(_value("conditions[*].simulate.token_ce.hard_share", hi=0.3))),
        )
        return {"token_ce": ce}
    sim: dict[str, Any] = {}
    tail = {
        "xi": draw(_value("conditions[*].simulate.tail.xi", hi=0.6)),
        "sigma": draw(_value("conditions[*].simulate.tail.sigma", hi=2.0)),
        "share": draw(_value("conditions[*].simulate.tail.share", lo=0.01, hi=0.2)),
    }
    sim["tail"] = tail
    if draw(st.booleans()):
        sim["saturation"] = {
            "share": draw(_value("conditions[*].simulate.saturation.share", hi=0.01)),
            "at": draw(_value("conditions[*].simulate.saturation.at", lo=0.9)),
        }
    return sim


def _criterion(name: str, statistic: str, comparison: str, threshold: float) -> dict[str, Any]:
    return {"name": name, "statistic": statistic, "comparison": comparison, "threshold": threshold}


@st.composite
def _criteria(draw: st.DrawFn, statistics: list[str]) -> list[dict[str, Any]]:
    """One to three criteria on the kind's statistics, every comparison and a threshold."""
    chosen = draw(st.lists(st.sampled_from(statistics), min_size=1, max_size=3, unique=True))
    return [
        _criterion(
            f"c{i}",
            s,
            draw(_value("analyses.*.criteria[*].comparison")),
            draw(_value("analyses.*.criteria[*].threshold", lo=-2, hi=5)),
        )
        for i, s in enumerate(chosen)
    ]


DOM = "analysis_dominance"


@st.composite
def dominance_spec(
    draw: st.DrawFn, conds: list[str], scorers: list[str], scales: list[str]
) -> dict[str, Any]:
    """A ``dominance`` analysis over some of ``conds`` and ``scorers`` (Nitsure et al. (2024);
    the protocol demo's ``safety-ranking``)."""
    chosen = draw(
        st.lists(st.sampled_from(conds), min_size=2, max_size=min(4, len(conds)), unique=True)
    )
    spec: dict[str, Any] = {
        "kind": "dominance",
        "conditions": chosen,
        "scorers": draw(st.lists(st.sampled_from(scorers), min_size=1, max_size=2, unique=True)),
    }
    _put(spec, "scale", draw(_maybe(st.sampled_from(scales))))
    for key in ("alpha", "resampling", "aggregation", "calibration", "risk_level"):
        _put(spec, key, draw(_maybe(_value(f"analyses.*.{key}", DOM, lo=0.01, hi=0.5))))
    _put(spec, "resamples", draw(_maybe(_value("analyses.*.resamples", DOM, hi=50))))
    _put(
        spec,
        "orders",
        draw(
            _maybe(
                st.lists(_value("analyses.*.orders[*]", DOM), min_size=1, max_size=2, unique=True)
            )
        ),
    )
    eps0 = draw(_maybe(st.lists(_value("analyses.*.eps0[*]", DOM), max_size=2, unique=True)))
    _put(spec, "eps0", eps0)
    a, b = chosen[:2]
    stats = [
        f"r_fsd({a}, {b})",
        f"r_ssd({b}, {a})",
        f"eps_ssd({a}, {b})",
        f"delta_fsd({a}, {b})",
        f"eps_ssd_ucb({a}, {b})",
        f"rank_fsd({a})",
        f"rank_ssd({b})",
        f"rank_mean_risk({a})",
        f"mwr({b})",
        f"rank_mwr({a})",
    ]
    spec["criteria"] = draw(_criteria(stats))
    return spec


@st.composite
def severity_spec(draw: st.DrawFn, conds: list[str], scorer: str) -> dict[str, Any]:
    """A ``severity`` analysis (ERRORQUAKE (2026); ``preregistrations/severity-example.yaml``)."""
    w = "analysis_severity"
    spec: dict[str, Any] = {"kind": "severity", "conditions": conds, "scorer": scorer}
    if draw(st.booleans()):
        spec["grid"] = {"step": 0.5, "top": 4.0}
    _put(spec, "mc", draw(_maybe(st.one_of(st.just("reselect"), st.sampled_from([0.5, 1.0])))))
    _put(spec, "min_events", draw(_maybe(_value("analyses.*.min_events", w, hi=40))))
    _put(spec, "resamples", draw(_maybe(_value("analyses.*.resamples", w, hi=50))))
    for key in ("level", "tolerance"):
        _put(spec, key, draw(_maybe(_value(f"analyses.*.{key}", w))))
    _put(spec, "aggregation", draw(_maybe(st.just("primary"))))  # the others need 'secondary'
    a, b = conds[:2]
    stats = [
        "disjoint_pairs",
        f"delta_b_pvalue({a}, {b})",
        "non_exponential",
        f"per_million({a}, 3.0)",
    ]
    spec["criteria"] = draw(_criteria(stats))
    return spec


@st.composite
def perturbation_spec(draw: st.DrawFn, conds: list[str], scorer: str) -> dict[str, Any]:
    """A ``perturbation`` analysis (Acharyya et al. (2025);
    ``preregistrations/perturbation-energy-example.yaml``): pilot, null and test queries."""
    w = "analysis_perturbation"
    n_pilot = draw(st.integers(2, max(2, len(conds) - 2)))
    pilot, rest = conds[:n_pilot], conds[n_pilot:]
    n_null = draw(st.integers(1, len(rest) - 1))
    spec: dict[str, Any] = {
        "kind": "perturbation",
        "scorer": scorer,
        "pilot": pilot,
        "null_queries": rest[:n_null],
        "test_queries": rest[n_null:],
        "budget": draw(_value("analyses.*.budget", w, lo=50, hi=400)),
    }
    for key in ("threshold", "alpha", "interval", "null_model"):
        _put(spec, key, draw(_maybe(_value(f"analyses.*.{key}", w, lo=0.01, hi=0.99))))
    _put(spec, "pilot_responses", draw(_maybe(_value("analyses.*.pilot_responses", w, hi=60))))
    t = rest[n_null]
    stats = [f"reject({t})", "size", f"naive_pvalue({t})"]
    spec["criteria"] = draw(_criteria(stats))
    return spec


@st.composite
def percentiles_spec(draw: st.DrawFn, conds: list[str], scorer: str) -> dict[str, Any]:
    """A ``percentiles`` analysis (Guo et al. (2025);
    ``preregistrations/percentiles-example.yaml``)."""
    w = "analysis_percentiles"
    spec: dict[str, Any] = {"kind": "percentiles", "conditions": conds, "scorer": scorer}
    pcts = draw(
        _maybe(
            st.lists(
                st.sampled_from([10, 25, 50, 75, 90, 95, 99]), min_size=1, max_size=4, unique=True
            )
        )
    )
    _put(spec, "percentiles", sorted(pcts) if pcts else None)
    if draw(st.booleans()):
        spec["summary_sets"] = {"head": ["mean", f"p{(pcts or [50])[0]}"]}
    _put(spec, "resamples", draw(_maybe(_value("analyses.*.resamples", w, hi=50))))
    for key in ("level", "resampling"):
        _put(spec, key, draw(_maybe(_value(f"analyses.*.{key}", w))))
    # a column scorer's rows are tokens, sequence_length per sequence (a token_nll scorer's
    # per-token files need none)
    spec["sequence_length"] = draw(_value("analyses.*.sequence_length", w, hi=20))
    stats = ["concordance", "same_selection(mean, p50)", f"p50({conds[-1]})"]
    spec["criteria"] = draw(_criteria(stats))
    return spec


@st.composite
def protocol_block(draw: st.DrawFn, scales: list[str], conds: list[str]) -> dict[str, Any]:
    """The five-gate protocol of Zhou (2026), every rule drawn from the schema; the design's
    simulations at their smallest (``design-only`` fields)."""
    p: dict[str, Any] = {"headline_scale": draw(st.sampled_from(scales))}
    for key in ("alpha", "multiplicity", "family", "p1_method", "band_rule", "tvar_level"):
        _put(p, key, draw(_maybe(_value(f"protocol.{key}", lo=0.01, hi=0.99))))
    if p.get("p1_method") == "lr_test":
        _put(p, "lr_calibration", draw(_maybe(st.sampled_from(["bartlett", "chi2"]))))
    gates = draw(_maybe(st.lists(_value("protocol.adjusted_gates[*]"), max_size=4, unique=True)))
    _put(p, "adjusted_gates", gates)
    p["power"] = draw(_value("protocol.power", lo=0.5, hi=0.95))
    p["delta_floor"] = draw(_value("protocol.delta_floor", lo=0.05, hi=0.5))
    p["xi_bar"] = draw(_value("protocol.xi_bar", hi=0.5))
    p["tolerances"] = {
        "mean": draw(_value("protocol.tolerances.mean", hi=1)),
        "tvar": draw(_value("protocol.tolerances.tvar", hi=1)),
    }
    if draw(st.booleans()):
        s = draw(st.sampled_from(scales))
        p["tolerances"]["scales"] = {s: {"mean": draw(_value("protocol.tolerances.mean", hi=1))}}
    p["min_exceedances"] = draw(_value("protocol.min_exceedances", hi=60))
    band = sorted(
        draw(
            st.lists(
                _value("protocol.thresholds.band[*]", lo=0.8, hi=0.99),
                min_size=1,
                max_size=4,
                unique=True,
            )
        )
    )
    thresholds: dict[str, Any] = {"headline": draw(st.sampled_from(band)), "band": band}
    ties = draw(_maybe(_value("protocol.thresholds.ties")))
    _put(thresholds, "ties", ties)
    if ties == "lattice":
        _put(thresholds, "lattice_step", draw(_maybe(st.sampled_from([0.5, 1.0]))))
        _put(thresholds, "min_levels", draw(_maybe(_value("protocol.thresholds.min_levels", hi=6))))
    p["thresholds"] = thresholds
    start = draw(_value("protocol.stability.scan.start", lo=0.5, hi=0.8))
    stability: dict[str, Any] = {
        "delta": draw(_value("protocol.stability.delta", hi=0.05)),
        "tolerance": draw(_value("protocol.stability.tolerance", hi=0.3)),
        "scan": {"start": start, "stop": 0.98, "step": 0.01},
        "min_exceedances": draw(_value("protocol.stability.min_exceedances", hi=50)),
        "resamples": 0,
        "intervals": "wald",
    }
    for key in ("edge", "tolerance_rule"):
        _put(stability, key, draw(_maybe(_value(f"protocol.stability.{key}"))))
    p["stability"] = stability
    p["bootstrap"] = {
        "resamples": draw(_value("protocol.bootstrap.resamples", hi=200)),
        "resampling": draw(_value("protocol.bootstrap.resampling")),
    }
    if draw(st.booleans()) and len(conds) >= 2:
        p["pairs"] = [[conds[0], conds[1]]]
    p["power_simulation"] = _smallest("protocol.power_simulation") | {
        "delta_xi": [draw(_value("protocol.power_simulation.delta_xi[*]", hi=0.3))],
        "n_exc": [draw(_value("protocol.power_simulation.n_exc[*]", hi=200))],
    }
    p["operating_characteristics"] = _smallest("protocol.operating_characteristics")
    return p


def _smallest(block: str) -> dict[str, Any]:
    """The ``design-only`` sizes of ``block`` (the design's simulations) that the schema
    bounds below, each at its minimum: ``trials``, and no optional resamples."""
    out = {}
    for f in annotations().fields:
        if f.pattern == f"{block}.trials" and f.role == DESIGN_ONLY:
            out["trials"] = int(f.schema.get("minimum", 1))
    assert out, f"{block}.trials is no longer a design-only field"
    return out


# --- scorers and the data ------------------------------------------------------------------


@st.composite
def _extra_scorers(draw: st.DrawFn, models: dict[str, Any]) -> list[dict[str, Any]]:
    """Scorers of the other kinds, read from completions (import with a completion column)."""
    kinds = draw(
        st.lists(
            st.sampled_from(["detoxify", "profanity", "regex", "judge", "token_nll"]),
            max_size=2,
            unique=True,
        )
    )
    out = []
    for kind in kinds:
        w = f"scorer_{kind}"
        s: dict[str, Any] = {"name": f"s-{kind.replace('_', '')}", "kind": kind}
        if kind in ("judge", "token_nll"):
            models.setdefault("judge", {"id": "local/judge", "dtype": "float32"})
            s["judge"] = "judge"
        if kind == "judge":
            s["rubric"] = "Rate {prompt} -> {completion} from 0 to 4."
            s["bounded"] = False
            s["grid"] = {"step": 0.5, "top": 4.0}
        if kind == "regex":
            s["pattern"] = draw(st.sampled_from(["yes", r"\bno\b", "[0-9]+"]))
            s["bounded"] = True
            _put(s, "ignore_case", draw(_maybe(st.booleans())))
        if kind == "detoxify":
            _put(s, "head", draw(_maybe(_value("scorers[*].head", w))))
        if kind != "judge":
            _put(s, "on_empty", draw(_maybe(_value("scorers[*].on_empty", w))))
        _put(s, "worse", draw(_maybe(st.sampled_from(["higher", "lower"]))))
        out.append(s)
    return out


def _scores(shape: str, rng: np.random.Generator, n: int, bounded: bool) -> list[float]:
    """Scores an import file holds for one condition of ``shape``."""
    if shape == "severity":
        return (rng.integers(0, 9, n) * 0.5 * (rng.random(n) < 0.4)).tolist()
    if shape == "perturbation":
        return rng.integers(0, 2, n).astype(float).tolist()
    if shape == "percentiles" or not bounded:
        return np.round(rng.lognormal(0, 1, n), 4).tolist()
    return np.round(rng.beta(1, 8, n), 6).tolist()


@st.composite
def registrations(draw: st.DrawFn, shape: str | None = None) -> Registration:
    """A valid registration of one of :data:`SHAPES` (module docstring)."""
    shape = shape or draw(st.sampled_from(SHAPES))
    backend = draw(st.sampled_from(["simulate", "import"]))
    n_conds = {"perturbation": (4, 6), "severity": (2, 3)}.get(shape, (2, 4))
    conds = draw(_names(*n_conds))
    study = draw(
        st.from_regex(r"[a-z][a-z0-9-]{1,10}", fullmatch=True).filter(
            lambda s: re.fullmatch(load_schema()["properties"]["study"]["pattern"], s) is not None
        )
    )
    # the protocol needs exceedances above its band (min_exceedances at most 60 below)
    prompts = draw(st.integers(400, 3000) if shape == "protocol" else st.integers(20, 120))
    doc: dict[str, Any] = {
        "schema_version": draw(_value("schema_version")),
        "study": study,
        "seed": draw(_value("seed", hi=2**40)),
        "sample_cap": draw(st.integers(prompts, 4 * prompts)),
    }
    if draw(st.booleans()):
        doc["title"] = draw(st.text(max_size=20))
        doc["hypotheses"] = {"H1": draw(st.text(max_size=20))}
    models: dict[str, Any] = {}
    bounded = shape == "protocol" or (shape == "dominance" and draw(st.booleans()))
    scorer = {"name": "score", "kind": "column", "column": "simulated_score", "bounded": bounded}
    _put(scorer, "worse", draw(_maybe(st.sampled_from(["higher", "lower"]))))
    scorers = [scorer]
    if backend == "import":
        scorers += draw(_extra_scorers(models))
    conditions = []
    for i, c in enumerate(conds):
        cond: dict[str, Any] = {"name": c}
        if backend == "simulate":
            cond["simulate"] = draw(_simulate(shape))
        if shape == "perturbation" and i < 2:
            cond["pilot"] = True
        if draw(st.integers(0, 3)) == 0:
            cond["prompts"] = draw(st.integers(prompts // 2, prompts))
        if draw(st.integers(0, 5)) == 0 and shape == "protocol" and backend == "simulate":
            cond["perturbation"] = {
                "kind": "embedding_noise",
                "sigma_rel": draw(_value("conditions[*].perturbation.sigma_rel", hi=1)),
            }
        conditions.append(cond)
    doc["conditions"] = conditions
    if models:
        doc["models"] = models
    scales = (
        sorted(draw(st.lists(_value("transform.scales[*]"), min_size=1, max_size=3, unique=True)))
        if bounded
        else ["identity"]
    )
    doc["scorers"] = scorers
    doc["transform"] = {"scales": scales}
    _put(doc["transform"], "epsilon", draw(_maybe(_value("transform.epsilon", hi=0.01))))
    rows: list[dict[str, Any]] = []
    data_format = draw(st.sampled_from(["csv", "jsonl", "parquet"]))
    if backend == "simulate":
        doc["data"] = {"backend": "simulate"}
    else:
        columns: dict[str, Any] = {"score": "score"}
        text = len(scorers) > 1
        columns["completion"] = "completion" if text else None
        doc["data"] = {
            "backend": "import",
            "import": {"path": f"data/scores.{data_format}", "columns": columns},
        }
        if draw(st.booleans()):
            doc["data"]["import"]["format"] = data_format
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        for c in conds:
            for pid, value in enumerate(_scores(shape, rng, prompts, bounded)):
                row = {"prompt_id": pid, "condition": c, "score": value}
                if text:
                    row["completion"] = str(rng.choice(["yes", "no 12", "fine", "ok"]))
                rows.append(row)
    doc["generation"] = {"shards": 1}
    analyses: dict[str, Any] = {}
    if shape == "protocol":
        doc["protocol"] = draw(protocol_block(scales, conds))
        # none (the cap must meet Eq. 2), 0 (H1 may not PASS at this size) or a lower power
        low = st.one_of(st.just(0), _value("accepted_power", lo=0.01, hi=0.5))
        doc["accepted_power"] = draw(_maybe(low))
        if draw(st.booleans()):
            analyses["ranking"] = draw(dominance_spec(conds, ["score"], scales))
    else:
        doc["protocol"] = {"enabled": False}
        spec = {
            "dominance": lambda: dominance_spec(conds, ["score"], scales),
            "severity": lambda: severity_spec(conds, "score"),
            "perturbation": lambda: perturbation_spec(conds, "score"),
            "percentiles": lambda: percentiles_spec(conds, "score"),
        }[shape]()
        analyses[shape] = draw(spec)
    if analyses:
        doc["analyses"] = analyses
        if draw(st.integers(0, 3)) == 0:
            name = next(iter(analyses))
            crit = analyses[name]["criteria"][0]["name"]
            doc["answer"] = [draw(st.sampled_from([name, f"{name}.{crit}"]))]
    return Registration(doc, rows, data_format)


# --- amendments and mutations --------------------------------------------------------------


def _leaves(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value (containers included) in the document."""
    out = [path] if path else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _leaves(v, (*path, i))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def pattern_of(doc: dict[str, Any], path: tuple) -> str | None:
    """The schema field pattern of a concrete path (``analyses.x.alpha`` -> ``analyses.*.alpha``)
    or None where the schema names no field there."""
    pattern = ""
    for step in path:
        if isinstance(step, int):
            pattern += "[*]"
            continue
        exact = f"{pattern}.{step}" if pattern else step
        pattern = exact if exact in _fields() else f"{pattern}.*"
        if pattern not in _fields():
            return None
    return pattern


def _out_of_range(node: dict[str, Any]) -> list[Any]:
    """Numbers just outside the schema bounds of ``node``."""
    out: list[Any] = []
    if "minimum" in node:
        out.append(node["minimum"] - 1)
    if "exclusiveMinimum" in node:
        out.append(node["exclusiveMinimum"])
    if "maximum" in node:
        out.append(node["maximum"] + 1)
    if "exclusiveMaximum" in node:
        out.append(node["exclusiveMaximum"])
    return out


WRONG_TYPES = ("text", 3, -1.5, True, None, [1, 2], {"a": 1}, float("nan"), "")


@st.composite
def mutations(draw: st.DrawFn, reg: Registration) -> tuple[Registration, str]:
    """``reg`` made invalid in one place, and what was done: a wrong type, an out-of-range
    number (from the field's schema bounds), an unknown key, a missing required field."""
    doc = copy.deepcopy(reg.doc)
    what = draw(st.sampled_from(["type", "range", "unknown", "missing"]))
    paths = _leaves(doc)
    if what == "range":
        ranged = []
        for p in paths:
            pat = pattern_of(doc, p)
            if pat and isinstance(_get(doc, p), int | float) and not isinstance(_get(doc, p), bool):
                bad = [v for f in _fields()[pat] for v in _out_of_range(f.schema)]
                ranged += [(p, v) for v in bad]
        if ranged:
            path, value = draw(st.sampled_from(ranged))
            _get(doc, path[:-1])[path[-1]] = value
            return Registration(doc, reg.rows, reg.data_format, reg.name), f"{path} = {value!r}"
        what = "type"
    if what == "unknown":
        objects = [()] + [p for p in paths if isinstance(_get(doc, p), dict)]
        path = draw(st.sampled_from(objects))
        key = draw(st.sampled_from(["bogus", "alpah", "enabled", "kind", "name"]))
        target = _get(doc, path)
        if key in target:
            key = "bogus"
        target[key] = draw(st.sampled_from(WRONG_TYPES))
        return Registration(doc, reg.rows, reg.data_format, reg.name), f"{path}.{key} added"
    if what == "missing":
        keyed = [p for p in paths if isinstance(p[-1], str)]
        path = draw(st.sampled_from(keyed))
        del _get(doc, path[:-1])[path[-1]]
        return Registration(doc, reg.rows, reg.data_format, reg.name), f"{path} removed"
    path = draw(st.sampled_from(paths))
    value = draw(st.sampled_from(WRONG_TYPES))
    _get(doc, path[:-1])[path[-1]] = value
    return Registration(doc, reg.rows, reg.data_format, reg.name), f"{path} = {value!r}"


@st.composite
def amendments(draw: st.DrawFn, reg: Registration) -> tuple[Registration, str]:
    """``reg`` with one registered value changed within its schema (a decision rule, a
    threshold, a sample size or the title): what an amendment records."""
    doc = copy.deepcopy(reg.doc)
    candidates = []
    for p in _leaves(doc):
        value, pat = _get(doc, p), pattern_of(doc, p)
        if pat is None or isinstance(value, dict | list) or p[0] in ("study", "schema_version"):
            continue
        for f in _fields()[pat]:
            node = f.schema
            if "enum" in node or node.get("type") in ("integer", "number", "boolean"):
                candidates.append((p, node))
    if draw(st.booleans()) or not candidates:
        doc["title"] = draw(st.text(min_size=1, max_size=10))
        return Registration(doc, reg.rows, reg.data_format, reg.name), "title"
    path, node = draw(st.sampled_from(candidates))
    _get(doc, path[:-1])[path[-1]] = draw(from_schema(node, lo=0.0, hi=1000.0))
    return Registration(doc, reg.rows, reg.data_format, reg.name), str(path)
