"""The design's own simulation sizes are design-only: an amendment of them is recorded, not a
deviation; the bound they are checked against stays a decision rule. The shipped protocol demo,
amended before data only in such a field and its hypothesis text, opens with a confirmatory
answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from tailgate.prereg.deviations import amendment_log
from tailgate.prereg.diff import diff, is_decision
from tailgate.prereg.lock import read_lock

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "field",
    [
        "protocol.power_simulation.resamples",
        "protocol.power_simulation.trials",
        "protocol.power_simulation.delta_xi",
        "protocol.operating_characteristics.trials",
        "protocol.operating_characteristics.resamples",
    ],
)
def test_the_design_simulation_sizes_are_design_only(field):
    assert not is_decision(field)
    old = {"protocol": {"power_simulation": {}, "operating_characteristics": {}}}
    new = {"protocol": {"power_simulation": {}, "operating_characteristics": {}}}
    _, block, key = field.split(".")
    old["protocol"][block][key], new["protocol"][block][key] = 80, 200
    (change,) = diff(old, new)
    assert change.field == field and change.direction == "descriptive" and not change.decision


def test_the_false_pass_bound_and_the_bootstrap_stay_decision_rules():
    for field in (
        "protocol.operating_characteristics.max_false_pass",
        "protocol.bootstrap.resamples",
        "protocol.stability.tolerance",
    ):
        assert is_decision(field)


def test_the_shipped_protocol_demo_carries_no_deviation():
    lock = read_lock(REPO / "preregistrations" / "protocol-demo.lock.json")
    amendments, deviations = amendment_log(lock)
    assert [a["seq"] for a in amendments] == [1]  # the amendment is recorded ...
    assert {f["path"] for f in amendments[0]["fields"]} == {
        "hypotheses.H1",
        "protocol.power_simulation.resamples",
    }
    assert amendments[0]["classes"] == ["other"]
    assert deviations == []  # ... and is no deviation
