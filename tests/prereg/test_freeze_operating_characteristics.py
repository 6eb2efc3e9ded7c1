"""Freeze records the operating characteristics of the registered procedure when the study
registers a bound on its false-PASS rate, and refuses a rule that exceeds the bound."""

from __future__ import annotations

import json

from tailgate.cli import main

QUICK = "  operating_characteristics: {trials: 40, resamples: 20, max_false_pass: MAX}\n"


def _with_bound(project, bound: str) -> None:
    text = project.prereg.read_text()
    assert "\nprotocol:\n" in text
    project.write(text.replace("\nprotocol:\n", "\nprotocol:\n" + QUICK.replace("MAX", bound), 1))


def test_a_bound_that_holds_is_recorded_in_the_lock(project, capsys):
    _with_bound(project, "0.99")
    assert main(["freeze", str(project.prereg)]) == 0
    derived = json.loads(project.lock.read_text())["chain"][0]["derived"]
    oc = derived["operating_characteristics"]
    assert oc["trials"] == 40 and oc["scenarios"][0]["delta_xi"] == 0.0
    assert 0.0 <= oc["false_pass"] <= 1.0


def test_a_bound_the_rule_exceeds_is_refused(project, capsys, monkeypatch):
    """The refusal path (the rate check itself is tested with the simulation)."""
    import tailgate.prereg.design as design

    seen = []

    def exceeded(study, oc):
        seen.append(oc)
        return "the rule passes a null pair too often, above max_false_pass"

    monkeypatch.setattr(design, "check_false_pass", exceeded)
    _with_bound(project, "0.01")
    code = main(["freeze", str(project.prereg)])
    err = capsys.readouterr().err
    assert code == 2 and "max_false_pass" in err and seen, err
    assert not project.lock.exists()
