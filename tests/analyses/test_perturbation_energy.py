"""The perturbation kind's energy tests on embedded responses (methods note A8) and its
registration:
statistics against an independent computation (``dcor`` and the plain energy statistic),
shifted and unshifted test queries with known truth, criteria re-derived from stored statistics,
the report table, and the refusal of a bad ``embedding`` block."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dcor_reference import energy_tests
from tailgate.analyses.criteria import parse_statistic
from tailgate.analyses.perturbation import statistics as P
from tailgate.analyses.perturbation.kind import PERTURBATION
from tailgate.prereg.study import Study
from tailgate.report.sections import section_of

LAYOUT = {
    "severities": "{root}/severities/{scorer}/{scale}/{condition}.parquet",
    "embeddings": "{root}/embeddings/{embedder}/{condition}/shard-{shard}.parquet",
}
PILOT = ["p0", "p1", "p2", "p3"]
NULLS = ["n0", "n1", "n2"]
TESTS = ["same", "shifted"]
K, DIM = 40, 6


def _study(tmp_path: Path) -> Study:
    data = {
        "study": "energy",
        "seed": 20260615,
        "data": {"backend": "import"},
        "generation": {"shards": 2},
        "models": {"enc": {"id": "unused"}},
        "conditions": [{"name": c} for c in [*PILOT, *NULLS, *TESTS]],
        "scorers": [{"name": "says-yes", "bounded": False}],
        "transform": {"scales": ["identity"]},
        "protocol": {"alpha": 0.05},
    }
    return Study(tmp_path / "energy.yaml", data, "0" * 64, "0" * 64)


def _spec(**embedding) -> dict:
    return {
        "kind": "perturbation",
        "scorer": "says-yes",
        "pilot": PILOT,
        "null_queries": NULLS,
        "test_queries": TESTS,
        "budget": 400,
        "embedding": {"model": "enc", "responses": K, "resamples": 199, **embedding},
        "criteria": [
            {"name": "same-kept", "statistic": "energy_pvalue(same)", "comparison": ">",
             "threshold": 0.01},
            {"name": "shift-found", "statistic": "energy_pvalue(shifted)", "comparison": "<",
             "threshold": 0.01},
            {"name": "shift-vs-n2", "statistic": "energy_statistic(shifted, n2)",
             "comparison": ">", "threshold": 0},
        ],
    }  # fmt: skip


def _write(tmp_path: Path, study: Study, spec: dict, g: np.random.Generator) -> dict:
    layout = {k: v.replace("{root}", str(tmp_path)) for k, v in LAYOUT.items()}
    inputs = PERTURBATION.inputs(spec, study, layout)
    for path in inputs["severities"]:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        yes = g.binomial(1, 0.4, size=100).astype(float)
        pq.write_table(pa.table({"prompt_id": np.arange(100), "severity": yes}), path)
    assert len(inputs["embeddings"]) == 2 * (len(TESTS) + len(NULLS))
    vectors = {}
    for path in inputs["embeddings"][::2]:
        condition = Path(path).parent.name
        x = g.normal(size=(K + 5, DIM)).astype(np.float32)
        if condition == "shifted":
            x[:, 0] += 1.5
        vectors[condition] = x
        for shard in (0, 1):  # rows p with p % 2 == shard, like generation shards
            rows = np.arange(K + 5)[np.arange(K + 5) % 2 == shard]
            out = Path(path).with_name(f"shard-{shard}.parquet")
            out.parent.mkdir(parents=True, exist_ok=True)
            blobs = [x[i].astype("<f4").tobytes() for i in rows]
            pq.write_table(
                pa.table({"prompt_id": rows, "embedding": pa.array(blobs, pa.binary(4 * DIM))}),
                out,
            )
    return {"inputs": inputs, "vectors": vectors}


def test_energy_tests_pooled_and_pairwise(tmp_path: Path) -> None:
    study = _study(tmp_path)
    spec = _spec()
    assert PERTURBATION.validate(spec, study.data) == []
    made = _write(tmp_path, study, spec, np.random.default_rng(11))
    stats = json.loads(
        json.dumps(PERTURBATION.compute(study, "pert", spec, made["inputs"]).statistics)
    )
    energy = stats["energy"]
    assert (energy["status"], energy["responses"], energy["resamples"]) == ("ok", K, 199)
    v = {c: x[:K].astype(np.float64) for c, x in made["vectors"].items()}
    pooled = np.vstack([v[q] for q in NULLS])
    reference = dict(zip(TESTS, energy_tests([(v[t], pooled) for t in TESTS]), strict=True))
    for t in TESTS:
        res = energy["tests"][t]
        assert res["pooled"]["statistic"] == pytest.approx(
            P.energy_statistic(v[t], pooled), rel=1e-9
        )
        assert res["pooled"]["statistic"] == pytest.approx(reference[t][0], rel=1e-9)
        assert (res["pooled"]["n1"], res["pooled"]["n2"]) == (K, 3 * K)
        for q in NULLS:
            assert res["pairwise"][q]["statistic"] == pytest.approx(
                P.energy_statistic(v[t], v[q]), rel=1e-9
            )
    assert energy["tests"]["shifted"]["pooled"]["pvalue"] == 1 / 200  # a 1.5 s.d. shift
    assert energy["tests"]["same"]["pooled"]["pvalue"] > 0.01
    outcomes = {o.name: o for o in PERTURBATION.criteria(spec, stats)}
    assert {n: o.outcome for n, o in outcomes.items()} == {
        "same-kept": "PASS",
        "shift-found": "PASS",
        "shift-vs-n2": "PASS",
    }
    assert (
        outcomes["shift-vs-n2"].value == energy["tests"]["shifted"]["pairwise"]["n2"]["statistic"]
    )
    blocks = section_of("perturbation").blocks("pert", spec, stats)
    titles = [getattr(b, "title", "") for b in blocks]
    assert "pert: energy test of embedded responses" in titles
    # the same registration gives the same p-values (seeds derive from the study seed)
    again = PERTURBATION.compute(study, "pert", spec, made["inputs"]).statistics["energy"]
    assert json.loads(json.dumps(again)) == energy


def test_energy_needs_the_registered_responses(tmp_path: Path) -> None:
    study = _study(tmp_path)
    spec = _spec(responses=K + 10)  # more than the K + 5 embedded
    made = _write(tmp_path, study, spec, np.random.default_rng(12))
    stats = json.loads(
        json.dumps(PERTURBATION.compute(study, "pert", spec, made["inputs"]).statistics)
    )
    assert stats["energy"]["status"].startswith("not tested")
    assert {o.outcome for o in PERTURBATION.criteria(spec, stats)} == {"NOT_TESTED"}


def test_bad_embedding_registrations_are_refused(tmp_path: Path) -> None:
    study = _study(tmp_path)
    problems = PERTURBATION.validate(_spec(model="nope"), study.data)
    assert any(p.path == ("embedding", "model") for p in problems)
    study.data["data"]["backend"] = "simulate"
    assert any("simulate" in p.message for p in PERTURBATION.validate(_spec(), study.data))
    # the simulate backend writes texts for bernoulli conditions only ("Yes." / "No."): every
    # embedded query (test and null queries; the pilot is not embedded) must be one, and the
    # check names a condition's model as the backend picks it
    from tailgate.analyses.perturbation.spec import SIMULATE_MODELS
    from tailgate.generate.simulate import DISCRETE_MODELS

    assert SIMULATE_MODELS == tuple(DISCRETE_MODELS)
    for c in study.data["conditions"]:
        if c["name"] not in PILOT:
            c["simulate"] = {"bernoulli": {"p": 0.4}}
    assert PERTURBATION.validate(_spec(), study.data) == []
    study.data["conditions"][-1]["simulate"] = {"token_ce": {"median": 1.0, "hard_median": 4.0}}
    study.data["conditions"][-2]["simulate"] = {"bernoulli": {"p": 0.4}, "severity_grid": {}}
    (problem,) = PERTURBATION.validate(_spec(), study.data)
    assert problem.path == ("embedding",)
    assert "only for bernoulli" in problem.message
    assert "shifted (token_ce)" in problem.message and "same (severity_grid)" in problem.message
    assert "bernoulli" in problem.fix and "drop 'embedding'" in problem.fix
    study.data["data"]["backend"] = "import"
    no_embedding = {k: v for k, v in _spec().items() if k != "embedding"}
    ref = parse_statistic("energy_pvalue(same)")
    assert "embedding" in PERTURBATION.check_statistic(no_embedding, study.data, ref)
    ref = parse_statistic("energy_pvalue(same, p0)")
    assert "not a null query" in PERTURBATION.check_statistic(_spec(), study.data, ref)


def test_new_registration_fields_are_decision_rules() -> None:
    from tailgate.prereg.diff import diff

    old = {"analyses": {"x": {"embedding": {"model": "a", "responses": 8, "resamples": 99}}},
           "conditions": [{"name": "q", "query": "Who was R A Fisher?"}]}  # fmt: skip
    new = {"analyses": {"x": {"embedding": {"model": "b", "responses": 6, "resamples": 50}}},
           "conditions": [{"name": "q", "query": "Who was R.A. Fisher?"}]}  # fmt: skip
    changes = {c.field: c for c in diff(old, new)}
    assert all(c.decision for c in changes.values())
    assert changes["analyses.x.embedding.resamples"].direction == "loosening"
    assert changes["conditions[q].query"].direction == "unclassified"


def test_an_embedding_model_is_pinned_whatever_the_backend(tmp_path: Path) -> None:
    """The embedding model's files shape the energy test as a generating model's shape the
    data: a local folder is pinned on the import and simulate backends too."""
    from tailgate.prereg.pins import pins_of, registered_paths

    model = tmp_path / "enc"
    model.mkdir()
    (model / "config.json").write_text("{}")
    study = _study(tmp_path)
    study.data["models"] = {"enc": {"id": str(model)}, "unused": {"id": str(model)}}
    study.data["analyses"] = {"pert": _spec()}
    for data in ({"backend": "import", "import": {}}, {"backend": "simulate"}):
        study.data["data"] = data
        assert registered_paths(study) == {"models.enc.id": (str(model), False)}
        assert pins_of(study)["models.enc.id"]["type"] == "folder"
