"""A stage's ``registered`` fingerprint covers everything it reads of the registration.

Snakemake re-runs a job only when its fingerprint (:mod:`tailgate.plans.fingerprint`) changes,
so a part a stage reads but does not list would leave a stale result after an amendment. Every
decision rule of the demo's protocol (and every optional rule it leaves out) is changed in turn;
whenever the fit's or the power grid's fingerprint stays the same, the stage's document must be
byte-identical. Parts that do change the fingerprint must be parts that change the document or
that the table lists on purpose.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import numpy as np
import pytest
from demo_scenarios import demo_study
from tailgate.plans.fingerprint import stage_fingerprint

STRING_ALTERNATIVES = {
    "headline_scale": "probability",
    "multiplicity": "none",
    "band_rule": "all",
    "bootstrap.resampling": "paired",
}
# optional decision rules the demo does not register (absent = their documented default)
OPTIONAL = {
    "family": "confirmatory",
    "adjusted_gates": ["G1", "G2", "P1", "G4"],
    "p1_method": "profile",
    "thresholds.ties": "half_step",
    "stability.edge": "fail",
    "stability.tolerance_rule": "se",
    "stability.se_multiplier": 3.0,
    "operating_characteristics": {"trials": 10, "resamples": 10, "max_false_pass": 0.2},
}


def _leaves(node: Any, path: str = ""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    else:
        yield path, node


def _changed(value: Any, path: str) -> Any:
    if path in STRING_ALTERNATIVES:
        return STRING_ALTERNATIVES[path]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 0.9 if value else 0.1
    if isinstance(value, list) and len(value) > 1:
        return value[:-1]
    if isinstance(value, list):
        return [*value, value[-1]]
    raise AssertionError(f"no change defined for {path}={value!r}")


def _with(study: Any, path: str, value: Any) -> Any:
    data = copy.deepcopy(study.data)
    node = data["protocol"]
    *head, last = path.split(".")
    for key in head:
        node = node.setdefault(key, {})
    node[last] = value
    return dataclasses.replace(study, data=data)


def _changes(study: Any) -> list[tuple[str, Any]]:
    out = [(p, _changed(v, p)) for p, v in _leaves(study.protocol)]
    return out + list(OPTIONAL.items())


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory):
    study = demo_study(tmp_path_factory.mktemp("deps"), resamples=40)
    small_grid = {"delta_xi": [0.0, 0.1], "n_exc": [200], "trials": 4, "resamples": 10}
    return _with(study, "power_simulation", small_grid)


def _doc(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True)


def test_the_fit_reads_nothing_its_fingerprint_leaves_out(small_demo):
    from tailgate.stages.fit import fit_condition

    x = np.random.default_rng(5).standard_t(4, size=6_000)

    def fit(study: Any) -> str:
        return _doc(
            fit_condition(
                x, study=study, scorer="toxicity", scale="logit", condition="qwen", progress=False
            )
        )

    base, base_fp = fit(small_demo), stage_fingerprint(small_demo, "fit", condition="qwen")
    unchanged = []
    for path, value in _changes(small_demo):
        other = _with(small_demo, path, value)
        if stage_fingerprint(other, "fit", condition="qwen") == base_fp:
            assert fit(other) == base, f"the fit reads protocol.{path} but does not list it"
            unchanged.append(path)
    # tolerances, the band rule, G5's tolerance and the power grid never reach the fit
    for path in ("tolerances.mean", "tolerances.tvar", "band_rule", "stability.tolerance"):
        assert path in unchanged
    assert "power_simulation.trials" in unchanged and "bootstrap.resamples" not in unchanged


def test_the_power_grid_reads_nothing_its_fingerprint_leaves_out(small_demo):
    from tailgate.stages.power import power_document

    base, base_fp = _doc(power_document(small_demo)), stage_fingerprint(small_demo, "power")
    unchanged = []
    for path, value in _changes(small_demo):
        other = _with(small_demo, path, value)
        if stage_fingerprint(other, "power") == base_fp:
            assert _doc(power_document(other)) == base, f"power reads protocol.{path}"
            unchanged.append(path)
    for path in ("tolerances.mean", "tolerances.tvar", "band_rule", "sensitivity"):
        assert any(u.startswith(path) for u in unchanged)
    assert "power_simulation.trials" not in unchanged


def test_a_tolerance_changes_the_operating_characteristics_and_gates(small_demo):
    other = _with(small_demo, "tolerances.tvar", 0.05)
    for stage in ("operating", "gates", "sensitivity", "verdict"):
        assert stage_fingerprint(other, stage) != stage_fingerprint(small_demo, stage)
    for stage in ("power", "bulk"):
        assert stage_fingerprint(other, stage) == stage_fingerprint(small_demo, stage)


#: the protocol's decision rules: what the gates apply to the stored statistics
DECISION_RULES = (
    "tolerances.mean", "tolerances.tvar", "delta_floor", "min_exceedances", "band_rule",
    "headline_scale", "thresholds.headline", "stability.tolerance", "gof.alpha",
    "sensitivity.tolerance_multipliers", "p1_method", "adjusted_gates", "stability.edge",
    "stability.se_multiplier",
)  # fmt: skip


@pytest.mark.parametrize("path", DECISION_RULES)
def test_a_decision_rule_re_runs_the_grading_not_the_statistics(small_demo, path):
    """The protocol is split as an analysis kind is: its statistics jobs (the fits and the bulk
    replicates) read no decision rule, so an amendment of one re-runs the gates, the
    sensitivity and the verdict alone (with the design's simulations that read it)."""
    value = dict(_changes(small_demo))[path]
    other = _with(small_demo, path, value)
    statistics = [("fit", {"condition": "base"}), ("bulk", {"condition": "base"})]
    for stage, wc in statistics:
        assert stage_fingerprint(other, stage, **wc) == stage_fingerprint(small_demo, stage, **wc)
    for stage in ("gates", "sensitivity", "verdict"):
        assert stage_fingerprint(other, stage) != stage_fingerprint(small_demo, stage), stage


def test_an_embed_job_reads_its_own_model_entry_only():
    from types import SimpleNamespace

    def study(models):
        return SimpleNamespace(data={"models": models})

    base = {"enc.v1": {"id": "local/enc"}, "lm": {"id": "local/lm"}}
    fp = stage_fingerprint(study(base), "embed", embedder="enc.v1")
    other = {**base, "lm": {"id": "local/lm2"}}
    assert stage_fingerprint(study(other), "embed", embedder="enc.v1") == fp
    changed = {**base, "enc.v1": {"id": "local/enc2"}}
    assert stage_fingerprint(study(changed), "embed", embedder="enc.v1") != fp
