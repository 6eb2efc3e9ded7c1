"""The severity, percentiles and perturbation kinds through the analysis protocol (compute,
criteria from stored statistics, report section, cards) on artifacts written to a tmp folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tailgate.analyses.criteria import parse_statistic
from tailgate.files.atomic import canonical_json_bytes
from tailgate.prereg.study import Study
from tailgate.report.sections import section_of

LAYOUT = {"severities": "{root}/severities/{scorer}/{scale}/{condition}.parquet"}


def _study(tmp_path: Path, conditions: list[str], scorer: str = "grade") -> Study:
    data = {
        "study": "kinds",
        "seed": 20260615,
        "conditions": [{"name": c} for c in conditions],
        "scorers": [{"name": scorer, "bounded": False}],
        "transform": {"scales": ["identity"]},
    }
    return Study(tmp_path / "kinds.yaml", data, "0" * 64, "0" * 64)


def _layout(tmp_path: Path) -> dict[str, str]:
    return {k: v.replace("{root}", str(tmp_path)) for k, v in LAYOUT.items()}


def _write_severities(path: str, values: np.ndarray) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"prompt_id": np.arange(values.size), "severity": values.astype(float)})
    pq.write_table(table, path)


def _check_protocol(kind, study, name, spec, stats) -> dict[str, str]:
    """Validation, criteria, JSON-safety, report and cards: the parts every kind provides."""
    assert kind.validate(spec, study.data) == []
    canonical_json_bytes(stats)  # plain JSON, no NaN
    stats = json.loads(json.dumps(stats))  # criteria are re-derived from the stored form
    outcomes = {o.name: o.outcome for o in kind.criteria(spec, stats)}
    section = section_of(kind.kind)
    blocks = section.blocks(name, spec, stats)
    assert blocks
    cards = section.card_columns(name, spec, stats)
    assert all(isinstance(v, dict) for v in cards.values())
    return outcomes


# --- severity -----------------------------------------------------------------------------------


def _gr_values(g: np.random.Generator, n: int, b: float, eps: float) -> np.ndarray:
    p = 10.0 ** (-b * 0.5 * np.arange(8))
    p /= p.sum()
    errors = g.binomial(n, eps)
    counts = np.concatenate([[n - errors], g.multinomial(errors, p)])
    return g.permutation(np.repeat(np.arange(9) * 0.5, counts))


def test_severity_kind_end_to_end(tmp_path: Path) -> None:
    from tailgate.analyses.severity.kind import SEVERITY

    truth = {"flat": (0.6, 0.30), "steep": (1.4, 0.31), "twin": (0.6, 0.31), "loose": (1.0, 0.6)}
    study = _study(tmp_path, list(truth))
    g = np.random.default_rng(1)
    spec = {
        "kind": "severity",
        "conditions": list(truth),
        "scorer": "grade",
        "resamples": 300,
        "criteria": [
            {"name": "headline", "statistic": "disjoint_pairs", "comparison": ">=", "threshold": 2},
            {"name": "steeper", "statistic": "delta_b(steep, flat)", "comparison": ">",
             "threshold": 0.3},
            {"name": "test", "statistic": "delta_b_pvalue(flat, steep)", "comparison": "<",
             "threshold": 0.05},
            {"name": "not-matched", "statistic": "delta_b_pvalue(flat, loose)",
             "comparison": "<", "threshold": 0.05},
            {"name": "rare", "statistic": "per_million(flat, 3.0)", "comparison": "<",
             "threshold": 1e6},
        ],
    }  # fmt: skip
    inputs = SEVERITY.inputs(spec, study, _layout(tmp_path))
    for (b, eps), path in zip(truth.values(), inputs["severities"], strict=True):
        _write_severities(path, _gr_values(g, 10_000, b, eps))
    stats = SEVERITY.compute(study, "sev", spec, inputs).statistics
    outcomes = _check_protocol(SEVERITY, study, "sev", spec, stats)
    assert outcomes == {
        "headline": "PASS",
        "steeper": "PASS",
        "test": "PASS",
        "not-matched": "NOT_TESTED",
        "rare": "PASS",
    }
    c = stats["conditions"]["steep"]
    assert abs(c["b"] - 1.4) < 0.15 and c["b_ci"][0] < c["b"] < c["b_ci"][1]
    # the same inputs give the same statistics (the seed fixes every stream)
    assert SEVERITY.compute(study, "sev", spec, inputs).statistics == stats


def test_severity_kind_refuses_off_grid_values_and_bad_registrations(tmp_path: Path) -> None:
    from tailgate.analyses.severity.kind import SEVERITY
    from tailgate.errors import InputError

    study = _study(tmp_path, ["a", "b"])
    spec = {"kind": "severity", "conditions": ["a", "b"], "scorer": "grade", "criteria": []}
    inputs = SEVERITY.inputs(spec, study, _layout(tmp_path))
    _write_severities(inputs["severities"][0], np.array([0.0, 0.5, 0.7]))
    _write_severities(inputs["severities"][1], np.array([0.0, 0.5, 1.0]))
    with pytest.raises(InputError, match="not on the registered grid"):
        SEVERITY.compute(study, "sev", spec, inputs)
    bad = {**spec, "mc": 0.75, "conditions": ["a", "zz"], "thresholds": [3.0]}
    bad["criteria"] = [
        {"name": "x", "statistic": "per_million(a, 2.0)", "comparison": "<", "threshold": 1}
    ]
    problems = SEVERITY.validate(bad, study.data)
    assert {p.path for p in problems} >= {("conditions", 1), ("mc",)}
    bad.pop("mc")
    bad["conditions"] = ["a", "b"]
    (p,) = SEVERITY.validate(bad, study.data)
    assert "not among the registered 'thresholds'" in p.message
    assert parse_statistic("per_million(a, 2.0)").args == ("a", "2.0")


# --- perturbation -------------------------------------------------------------------------------


def test_perturbation_kind_end_to_end(tmp_path: Path) -> None:
    """Null rates uniform on [.3, .5]; 'inside' (p = .33) is a semantically irrelevant variant,
    'outside' (p = .70) is not. The naive test calls 'inside' different from the base query;
    the composite test does not."""
    from tailgate.analyses.perturbation.kind import PERTURBATION

    g = np.random.default_rng(4)
    pilot = [f"pilot{i}" for i in range(20)]
    nulls = [f"null{i}" for i in range(40)]
    truth = {
        **dict(zip(pilot, g.uniform(0.3, 0.5, 20), strict=True)),
        **dict(zip(nulls, g.uniform(0.3, 0.5, 40), strict=True)),
        "base": 0.45,
        "inside": 0.33,
        "outside": 0.70,
    }
    study = _study(tmp_path, list(truth), scorer="says-yes")
    study.data["protocol"] = {"alpha": 0.05}
    spec = {
        "kind": "perturbation",
        "scorer": "says-yes",
        "pilot": pilot,
        "pilot_responses": 100,
        "null_queries": nulls,
        "test_queries": ["inside", "outside"],
        "base_query": "base",
        "budget": 10_000,
        "criteria": [
            {"name": "inside-kept", "statistic": "reject(inside)", "comparison": "==",
             "threshold": 0},
            {"name": "outside-rejected", "statistic": "reject(outside)", "comparison": "==",
             "threshold": 1},
            {"name": "naive-fooled", "statistic": "naive_pvalue(inside)", "comparison": "<",
             "threshold": 0.05},
            {"name": "valid", "statistic": "size", "comparison": "<=", "threshold": 0.05},
        ],
    }  # fmt: skip
    inputs = PERTURBATION.inputs(spec, study, _layout(tmp_path))
    assert len(inputs["severities"]) == 63
    for path in inputs["severities"]:
        _write_severities(path, g.binomial(1, truth[Path(path).stem], size=1000).astype(float))
    stats = PERTURBATION.compute(study, "pert", spec, inputs).statistics
    outcomes = _check_protocol(PERTURBATION, study, "pert", spec, stats)
    assert outcomes == {
        "inside-kept": "PASS",
        "outside-rejected": "PASS",
        "naive-fooled": "PASS",
        "valid": "PASS",
    }
    d = stats["design"]
    iv = stats["pilot"]["interval"]
    # the design is Algorithm C at the pilot's interval
    ref = __import__("tailgate.analyses.perturbation", fromlist=["design"]).design(
        iv["low"], iv["high"], 10_000, 0.05
    )
    assert (d["m"], d["n"], d["J"]) == (ref.m, ref.n, ref.J) and d["met"]


def test_perturbation_kind_not_met_is_not_tested(tmp_path: Path) -> None:
    from tailgate.analyses.perturbation.kind import PERTURBATION

    conds = ["p0", "p1", "p2", "n0", "t"]
    study = _study(tmp_path, conds, scorer="says-yes")
    study.data["protocol"] = {"alpha": 0.05}
    spec = {
        "kind": "perturbation", "scorer": "says-yes", "pilot": ["p0", "p1", "p2"],
        "null_queries": ["n0"], "test_queries": ["t"], "budget": 5000,
        "criteria": [{"name": "r", "statistic": "reject(t)", "comparison": "==", "threshold": 1}],
    }  # fmt: skip
    inputs = PERTURBATION.inputs(spec, study, _layout(tmp_path))
    g = np.random.default_rng(5)
    for path, p in zip(inputs["severities"], (0.3, 0.4, 0.5, 0.4, 0.9), strict=True):
        _write_severities(path, g.binomial(1, p, size=200).astype(float))
    stats = PERTURBATION.compute(study, "pert", spec, inputs).statistics
    assert not stats["design"]["met"]
    assert _check_protocol(PERTURBATION, study, "pert", spec, stats) == {"r": "NOT_TESTED"}
    bad = {**spec, "test_queries": ["n0"]}
    assert any("only once" in p.fix for p in PERTURBATION.validate(bad, study.data))


# --- percentiles --------------------------------------------------------------------------------


def _write_tokens(path: str, seq: np.ndarray, losses: np.ndarray) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pos = np.concatenate([np.arange(n) for n in np.bincount(seq)])
    pq.write_table(pa.table({"prompt_id": seq, "position": pos, "loss": losses}), path)


def reshaping_checkpoints(g: np.random.Generator, steps: int, n_seq: int = 200):
    """Per-token CE of checkpoints on the same sequences: the bulk improves (median falls) while
    a growing tail of hard tokens gets worse (mean rises): the top-K distillation effect of Guo et
    al. (2025)."""
    lengths = g.integers(20, 60, size=n_seq)
    seq = np.repeat(np.arange(n_seq), lengths)
    hard = g.random(seq.size) < 0.06
    out = []
    for i in range(steps):
        bulk = np.exp(g.normal(-0.3 - 0.12 * i, 1.0, seq.size))
        tail = np.exp(g.normal(1.2 + 0.6 * i, 0.4, seq.size))
        out.append((seq, np.where(hard, tail, bulk)))
    return out


def test_percentiles_kind_end_to_end(tmp_path: Path) -> None:
    from tailgate.analyses.percentiles.inputs import score_shards
    from tailgate.analyses.percentiles.kind import PERCENTILES
    from tailgate.data.score_files import token_losses_path

    steps = [f"step{i}" for i in range(5)]
    study = _study(tmp_path, steps, scorer="nll")
    study.data["scorers"] = [{"name": "nll", "kind": "token_nll", "bounded": False}]
    study.data["generation"] = {"shards": 2}
    spec = {
        "kind": "percentiles",
        "conditions": steps,
        "scorer": "nll",
        "resamples": 200,
        "summary_sets": {"core": ["mean", "p50", "p95"], "bulk": ["p25", "p50", "p75"]},
        "metric": {s: float(i) for i, s in enumerate(steps)},
        "criteria": [
            {"name": "mean-median-agree", "statistic": "same_selection(mean, p50)",
             "comparison": "==", "threshold": 1},
            {"name": "concordant", "statistic": "concordance(core)", "comparison": ">=",
             "threshold": 0.8},
            {"name": "bulk-concordant", "statistic": "concordance(bulk)", "comparison": ">=",
             "threshold": 0.8},
            {"name": "median-tracks", "statistic": "spearman(p50)", "comparison": "<=",
             "threshold": -0.9},
            {"name": "last-median", "statistic": "p50(step4)", "comparison": "<",
             "threshold": 1.0},
            {"name": "tail-z", "statistic": "z_p99(step4)", "comparison": ">", "threshold": 0},
        ],
    }  # fmt: skip
    inputs = PERCENTILES.inputs(spec, study, _layout(tmp_path))
    assert inputs["shards_step0"] == score_shards(study, _layout(tmp_path), "nll", "step0")
    assert inputs["shards_step0"][1].endswith("scores/nll/step0/shard-1.parquet")
    g = np.random.default_rng(8)
    for s, (seq, losses) in zip(steps, reshaping_checkpoints(g, 5), strict=True):
        half = seq < 100  # two shards: sequences 0-99 and 100-199
        first, second = (str(token_losses_path(p)) for p in inputs[f"shards_{s}"])
        _write_tokens(first, seq[half], losses[half])
        _write_tokens(second, seq[~half], losses[~half])
    stats = PERCENTILES.compute(study, "pct", spec, inputs).statistics
    outcomes = _check_protocol(PERCENTILES, study, "pct", spec, stats)
    means = [stats["summaries"][s]["values"]["mean"] for s in steps]
    medians = [stats["summaries"][s]["values"]["p50"] for s in steps]
    assert np.all(np.diff(means) > 0) and np.all(np.diff(medians) < 0)  # the reshaping truth
    assert outcomes == {
        "mean-median-agree": "FAIL",  # mean picks step0, the median step4
        "concordant": "FAIL",  # π(mean, p50, p95) = 0: mean and median disagree on every pair
        "bulk-concordant": "PASS",
        "median-tracks": "PASS",
        "last-median": "PASS",
        "tail-z": "PASS",
    }
    assert stats["concordance"]["core"]["statistic"] == 0.0
    assert stats["selection"]["selected"]["mean"] == "step0"
    assert PERCENTILES.compute(study, "pct", spec, inputs).statistics == stats


# --- simulate backend: discrete models with known truth -----------------------------------------


def test_simulated_severity_grid_and_bernoulli_recover_their_truth() -> None:
    from tailgate.analyses.severity import statistics as S
    from tailgate.generate.simulate import DISCRETE_MODELS, discrete_model

    u = np.random.default_rng(12).random(200_000)
    grades = DISCRETE_MODELS["severity_grid"]({"b": 1.2, "error_rate": 0.3}, u, "x")
    counts = S.counts_on_grid(grades, S.make_grid())
    eps = S.wilson_interval(int(counts[1:].sum()), int(counts.sum()))
    assert eps.confidence_interval.low <= 0.3 <= eps.confidence_interval.high
    est = S.estimate_b(counts, S.make_grid(), 0.5)
    assert abs(est.b - 1.2) < 4 * est.se_aki
    # m_min: nothing between 0 and m_min
    grades = DISCRETE_MODELS["severity_grid"]({"b": 1.0, "error_rate": 0.5, "m_min": 1.5}, u, "x")
    assert set(np.unique(grades)) <= {0.0, *np.arange(3, 9) * 0.5}
    yes = DISCRETE_MODELS["bernoulli"]({"p": 0.37}, u, "x")
    assert abs(yes.mean() - 0.37) < 4 * np.sqrt(0.37 * 0.63 / u.size)
    assert discrete_model({"bernoulli": {"p": 0.1}}) == "bernoulli"
    assert discrete_model({"tail": {"xi": 0.1}}) is None


def test_composite_design_command(capsys) -> None:
    """`tailgate composite` prints Algorithm C's design before any data; bad input exits 2."""
    from tailgate.analyses.perturbation import design
    from tailgate.cli import main

    assert main(["composite", "--a", "0.3", "--b", "0.5", "--budget", "10000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    d = design(0.3, 0.5, 10_000, 0.05)
    assert (out["m"], out["n"], out["J"]) == (d.m, d.n, d.J) == (13, 714, 37)
    assert main(["composite", "--a", "0.6", "--b", "0.5", "--budget", "10000"]) == 2
    err = capsys.readouterr().err
    assert "0 <= a < b <= 1" in err and "Traceback" not in err


def test_perturbation_kind_degenerate_pilot_is_a_status(tmp_path: Path) -> None:
    """Pilot queries that all answer alike give an interval of width 0: no design, no error."""
    from tailgate.analyses.perturbation.kind import PERTURBATION

    conds = ["p0", "p1", "n0", "t"]
    study = _study(tmp_path, conds, scorer="says-yes")
    study.data["protocol"] = {"alpha": 0.05}
    spec = {
        "kind": "perturbation", "scorer": "says-yes", "pilot": ["p0", "p1"],
        "null_queries": ["n0"], "test_queries": ["t"], "budget": 100,
        "criteria": [
            {"name": "r", "statistic": "reject(t)", "comparison": "==", "threshold": 1},
            {"name": "s", "statistic": "size", "comparison": "<=", "threshold": 0.05},
            {"name": "naive", "statistic": "naive_pvalue(t)", "comparison": "<", "threshold": 1},
        ],
    }  # fmt: skip
    inputs = PERTURBATION.inputs(spec, study, _layout(tmp_path))
    for path, yes in zip(inputs["severities"], (5, 5, 3, 9), strict=True):
        _write_severities(path, np.array([1.0] * yes + [0.0] * (12 - yes)))
    stats = PERTURBATION.compute(study, "pert", spec, inputs).statistics
    assert stats["design"]["status"].startswith("no design")
    assert _check_protocol(PERTURBATION, study, "pert", spec, stats) == {
        "r": "NOT_TESTED",
        "s": "NOT_TESTED",
        "naive": "PASS",
    }


def test_severity_judge_aggregations_and_robustness(tmp_path: Path) -> None:
    from tailgate.analyses.severity.compute import aggregate_grades
    from tailgate.analyses.severity.kind import SEVERITY

    ids1, g1 = np.array([0, 1, 2, 3]), np.array([0.0, 1.0, 2.5, 4.0])
    ids2, g2 = np.array([1, 2, 3, 4]), np.array([1.5, 2.0, 4.0, 0.5])
    assert aggregate_grades(ids1, g1, ids2, g2, "max", 0.5).tolist() == [1.5, 2.5, 4.0]
    assert aggregate_grades(ids1, g1, ids2, g2, "min", 0.5).tolist() == [1.0, 2.0, 4.0]
    # mean of (1, 1.5) = 1.25 → 1.5 (halves up), (2.5, 2) = 2.25 → 2.5, (4, 4) = 4
    assert aggregate_grades(ids1, g1, ids2, g2, "mean", 0.5).tolist() == [1.5, 2.5, 4.0]
    assert aggregate_grades(ids1, g1, ids2, g2, "secondary", 0.5) is g2

    conds = ["flat", "steep"]
    study = _study(tmp_path, conds)
    study.data["scorers"].append({"name": "grade2", "bounded": False})
    spec = {
        "kind": "severity", "conditions": conds, "scorer": "grade", "secondary": "grade2",
        "aggregation": "max", "resamples": 200,
        "criteria": [{"name": "robust-min", "statistic": "disjoint_pairs_under(min)",
                      "comparison": ">=", "threshold": 0}],
    }  # fmt: skip
    inputs = SEVERITY.inputs(spec, study, _layout(tmp_path))
    g = np.random.default_rng(9)
    for paths in (inputs["severities"], inputs["secondary"]):
        for path, b in zip(paths, (0.6, 1.4), strict=True):
            _write_severities(path, _gr_values(g, 5000, b, 0.3))
    stats = SEVERITY.compute(study, "sev", spec, inputs).statistics
    assert list(stats["robustness"]) == ["max", "primary", "secondary", "min", "mean"]
    assert _check_protocol(SEVERITY, study, "sev", spec, stats) == {"robust-min": "PASS"}
    bad = {**spec, "secondary": "nope"}
    assert any(p.path == ("secondary",) for p in SEVERITY.validate(bad, study.data))
    alone = {k: v for k, v in spec.items() if k != "secondary"}
    assert any(p.path == ("aggregation",) for p in SEVERITY.validate(alone, study.data))


def test_every_kind_is_named_once_and_found_everywhere():
    """The schema's enum of kinds is the registry's one list: each kind has its parameter schema
    (applied by one clause of ``$defs/analysis``, and no schema is left without a kind), its
    implementation and its report section, found by its name alone."""
    from tailgate.analyses.registry import KIND_NAMES, KINDS
    from tailgate.prereg.schema import load_schema

    defs = load_schema()["$defs"]
    assert defs["analysis"]["properties"]["kind"]["enum"] == list(KIND_NAMES)
    clauses = {
        c["if"]["properties"]["kind"]["const"]: c["then"]["$ref"] for c in defs["analysis"]["allOf"]
    }
    assert clauses == {kind: f"#/$defs/analysis_{kind}" for kind in KIND_NAMES}
    assert {d for d in defs if d.startswith("analysis_")} == {f"analysis_{k}" for k in KIND_NAMES}
    for kind in KIND_NAMES:
        assert KINDS[kind].kind == kind
        section = section_of(kind)
        assert section is not None and section.kind == kind
    assert section_of("nosuch") is None
