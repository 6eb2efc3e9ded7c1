"""The shipped demo's four demonstrations (issue: G3, G4, G5 false positives caught, a real
effect passed), read from the fits and gates the shipped demo's own run wrote at its registered
sizes and seed (the run whose results tests/analyses pins)."""

from __future__ import annotations

import json

import pytest
from demo_scenarios import demonstrations

SCALES = ("probability", "logit")


@pytest.fixture(scope="module")
def outcome(shipped_demo):
    from tailgate.plans.registration import load

    study = load(shipped_demo.prereg)
    scorer = study.scorers()[0]["name"]

    def read(*parts: str) -> dict:
        return json.loads(shipped_demo.results.joinpath(*parts).read_text())

    names = [c["name"] for c in study.conditions()]
    fits = {s: {c: read("fits", scorer, s, f"{c}.json") for c in names} for s in SCALES}
    gates = {s: read("gates", scorer, f"{s}.json") for s in SCALES}
    return demonstrations(study, fits, gates)


def test_g3_rejects_the_pilots_apparent_effect(outcome):
    assert outcome.pilot_apparent_effect
    assert outcome.pilot_g3_rejects


def test_g4_rejects_saturated_probability_fits_and_passes_on_logit(outcome):
    assert outcome.saturation_g4_probability
    assert outcome.saturation_g4_logit_headline and outcome.saturation_g4_logit_majority
    # the probability-scale fit collapses to the boundary xi = -1 at the top of the band
    nemo = outcome.gates["probability"]["summaries"]["0.99"]["nemo"]
    assert nemo["fit_status"] == "boundary" and nemo["xi"] == -1.0


def test_g5_rejects_a_single_threshold_pass(outcome):
    assert outcome.fishing_single_threshold
    assert outcome.fishing_killed


def test_true_effect_passes_every_gate(outcome):
    assert outcome.effect_passes
    assert outcome.h1 == "PASS"
    passing = outcome.gates["logit"]["protocol"]["passing_pairs"]
    assert passing == [["effect-a", "effect-b"]]
