"""Freeze records the operating characteristics of the registered procedure when the study
registers a bound on its false-PASS rate, and refuses a rule that exceeds the bound."""

from __future__ import annotations

import json

import pytest
from tailgate.cli import main

QUICK = "  operating_characteristics: {trials: 40, resamples: 20, max_false_pass: MAX}\n"


def _with_bound(project, bound: str) -> None:
    """The small study's simulation (registered smaller than the default) with a bound."""
    text = project.prereg.read_text()
    small = "  operating_characteristics: {trials: 10}\n"
    assert small in text
    project.write(text.replace(small, QUICK.replace("MAX", bound), 1))


def test_a_bound_that_holds_is_recorded_in_the_lock(project, capsys):
    _with_bound(project, "0.99")
    assert main(["freeze", str(project.prereg)]) == 0
    derived = json.loads(project.lock.read_text())["chain"][0]["derived"]
    oc = derived["operating_characteristics"]
    assert oc["trials"] == 40 and oc["scenarios"][0]["delta_xi"] == 0.0
    assert 0.0 <= oc["false_pass"] <= 1.0


def test_a_bound_the_rule_exceeds_is_refused(project, capsys, monkeypatch):
    """The refusal path (the rate check itself is tested with the simulation)."""
    import tailgate.authoring.freeze as freeze

    seen = []

    def exceeded(study, oc):
        seen.append(oc)
        return "the rule passes a null pair too often, above max_false_pass"

    monkeypatch.setattr(freeze, "check_false_pass", exceeded)
    _with_bound(project, "0.01")
    code = main(["freeze", str(project.prereg)])
    err = capsys.readouterr().err
    assert code == 2 and "max_false_pass" in err and seen, err
    assert not project.lock.exists()


def test_design_json_carries_the_rates_as_numbers_with_their_mc_se(project, capsys):
    """``design --json``: the false-PASS rate and the power of the whole procedure, and the
    P1∧P2 simulated power, as numbers with their binomial Monte Carlo s.e. (not only text)."""
    import math

    _with_bound(project, "0.99")
    assert main(["design", "--json", str(project.prereg)]) == 0
    doc = json.loads(capsys.readouterr().out)
    oc = doc["operating_characteristics"]
    trials = oc["trials"]
    worst = max(
        (s for s in oc["scenarios"] if s["delta_xi"] < oc["delta_floor"]),
        key=lambda s: s["rate"][oc["band_rule"]],
    )
    assert oc["false_pass"] == worst["rate"][oc["band_rule"]]
    p = oc["false_pass"]
    assert oc["false_pass_mc_se"] == pytest.approx(math.sqrt(p * (1 - p) / trials), abs=1e-6)
    assert [r["delta_xi"] for r in oc["power"]] == [
        s["delta_xi"] for s in oc["scenarios"] if s["delta_xi"] >= oc["delta_floor"]
    ]
    for r in oc["power"]:
        assert r["mc_se"] == pytest.approx(
            math.sqrt(r["rate"] * (1 - r["rate"]) / trials), abs=1e-6
        )
    assert oc["p1_interval"].startswith("percentile bootstrap, 20 resamples")
    rates = doc["simulated_power_rates"]
    assert len(rates) == 2 and all(isinstance(r["rate"], float) for r in rates)
    for r in rates:
        assert r["mc_se"] == pytest.approx(
            math.sqrt(r["rate"] * (1 - r["rate"]) / r["trials"]), abs=1e-6
        )
