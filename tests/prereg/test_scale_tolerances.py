"""G1/G2 tolerances in each scale's own units: ``protocol.tolerances.scales`` replaces the common
tolerances for one scale or one scorer's scale, is refused when it names a scale the run does not
analyse, and leaves registrations without it (and their hashes) as they were."""

from __future__ import annotations

import pytest
from tailgate.errors import PreregError
from tailgate.plans.registration import load
from tailgate.protocol.registered import registered_settings, tolerances_for
from tailgate.report.tables import _gate_cell

COMMON = "  tolerances: {mean: 0.10, tvar: 0.20}"
PER_SCALE = (
    "  tolerances:\n"
    "    mean: 0.10\n"
    "    tvar: 0.20\n"
    "    scales:\n"
    "      logit: {mean: 0.30}\n"
    "      toxicity/probability: {mean: 0.005, tvar: 0.02}\n"
)


def _with(project, block: str):
    text = project.text()
    assert COMMON in text
    project.write(text.replace(COMMON + "\n", block, 1))
    return load(project.prereg)


def test_the_scale_entry_replaces_the_common_tolerance_field_by_field(project) -> None:
    before = load(project.prereg)
    study = _with(project, PER_SCALE)
    assert tolerances_for(study, "toxicity", "logit") == {"mean": 0.30, "tvar": 0.20}
    assert tolerances_for(study, "toxicity", "probability") == {"mean": 0.005, "tvar": 0.02}
    assert tolerances_for(study, "other", "identity") == {"mean": 0.10, "tvar": 0.20}
    s = registered_settings(study, 2.0, scorer="toxicity", scale="probability")
    assert (s.delta_mu, s.delta_tvar) == (0.01, 0.04)  # App. B multipliers scale them too
    # a decision rule: the registration hashes differently, the common form as before
    assert study.canonical_hash != before.canonical_hash
    assert tolerances_for(before, "toxicity", "logit") == {"mean": 0.10, "tvar": 0.20}


def test_the_most_specific_entry_wins(project) -> None:
    block = PER_SCALE + "      toxicity/logit: {tvar: 0.5}\n"
    study = _with(project, block)
    assert tolerances_for(study, "toxicity", "logit") == {"mean": 0.30, "tvar": 0.5}


@pytest.mark.parametrize(
    "key",
    ["identity", "severity/logit", "toxicity/identity", "logits"],
)
def test_a_scale_the_run_does_not_analyse_is_refused(project, key) -> None:
    block = PER_SCALE + f"      {key}: {{mean: 0.2}}\n"
    with pytest.raises(PreregError) as err:
        _with(project, block)
    text = str(err.value)
    assert f"protocol.tolerances.scales.{key}" in text and "never be used" in text
    assert "toxicity/logit" in text  # the fix lists what the run analyses


def test_an_empty_or_unknown_entry_is_refused(project) -> None:
    original = project.text()
    with pytest.raises(PreregError, match="tolerances"):
        _with(project, PER_SCALE + "      probability: {}\n")
    project.write(original)
    with pytest.raises(PreregError, match="level"):
        _with(project, PER_SCALE.replace("{mean: 0.30}", "{mean: 0.30, level: 1}"))


def test_design_refuses_it_with_exit_2_and_names_the_field(project) -> None:
    text = project.text().replace(COMMON + "\n", PER_SCALE + "      identity: {mean: 1}\n", 1)
    project.write(text)
    code, _, err = project.cli("design", project.prereg)
    assert code == 2 and "protocol.tolerances.scales.identity" in err and "Traceback" not in err


def test_the_report_prints_each_g1_g2_tolerance_beside_its_value() -> None:
    g1 = {"passed": False, "value": -0.0033, "criterion": "CI inside [-0.005, 0.005]",
          "observed": "CI [-0.0046, -0.0019]"}  # fmt: skip
    text, css = _gate_cell(g1)
    assert text.startswith("FAIL -0.0033 (tolerance ±0.005)") and css == "fail"
    g3 = {"passed": True, "value": 612.0, "criterion": "n_exc >= 500", "observed": ""}
    assert "tolerance" not in _gate_cell(g3)[0]
