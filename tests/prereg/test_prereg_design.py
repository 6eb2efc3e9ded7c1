"""Eq. 2 of Zhou (2026) and the freeze-time cap check."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from tailgate.plans.registration import load
from tailgate.prereg.lock import read_lock
from tailgate.protocol.design import derived_design, exceedances_at, prompts_for
from tailgate.stats.power import achieved_power, required_exceedances

# Table 1 of Zhou (2026): Δξ → (n_exc*, prompts at q = 0.95)
TABLE_1 = {0.05: (6280, 125_600), 0.07: (3204, 64_080), 0.10: (1570, 31_400), 0.20: (393, 7_860)}


@pytest.mark.parametrize("delta", sorted(TABLE_1))
def test_table_1_of_seed_000(delta):
    n, prompts = TABLE_1[delta]
    got = required_exceedances(delta)
    assert abs(got - n) <= 1
    assert abs(prompts_for(got, 0.95) - prompts) <= 20  # ±1 exceedance at a 5% rate


def test_achieved_power_matches_a_simulated_z_test():
    """Independent reference: simulate Δξ̂ ~ N(Δ, σ_Δ²) and count two-sided rejections."""
    n, delta = 1500, 0.10
    sigma = np.sqrt(2.0 / n)  # (1 + ξ̄) √(2/n) with ξ̄ = 0 (Section 4 of Zhou (2026))
    rng = np.random.default_rng(20260615)
    est = rng.normal(delta, sigma, size=400_000)
    simulated = np.mean(np.abs(est / sigma) > 1.959963984540054)
    assert achieved_power(n, delta) == pytest.approx(simulated, abs=3e-3)
    assert achieved_power(n, delta) == pytest.approx(0.78, abs=0.005)  # the demo's record
    assert achieved_power(required_exceedances(delta), delta) >= 0.80


def test_exceedance_arithmetic_has_no_float_off_by_one():
    assert exceedances_at(30_000, 0.95) == 1500
    assert prompts_for(1570, 0.95) == 31_400
    assert exceedances_at(31_400, 0.95) == 1570


def test_demo_records_its_lower_power(demo_study):
    d = derived_design(demo_study)
    assert (d.n_exc_required, d.prompts_required, d.n_exc_planned) == (1570, 31_400, 1500)
    assert not d.cap_meets_bound and d.accepted_power == 0.78  # Eq. 2's z-test power


def test_freeze_refuses_a_cap_below_the_bound_unless_power_is_accepted(project):
    project.replace("sample_cap: 40000", "sample_cap: 30000")
    code, _, err = project.cli("freeze", project.prereg)
    assert code == 2
    assert "field 'accepted_power'" in err and "31400" in err
    assert not project.lock.exists()
    # Eq. 2's z-test power (0.782) is not the registered procedure's: refused
    project.replace("accepted_power: null", "accepted_power: 0.78")
    code, _, err = project.cli("freeze", project.prereg)
    assert code == 2 and "field 'accepted_power'" in err, err
    supported = re.search(r"accepted_power may record at most ([0-9.]+) ", err)
    assert supported and float(supported[1]) < 0.78
    project.replace("accepted_power: 0.78", f"accepted_power: {supported[1]}")
    code, _out, err = project.cli("freeze", project.prereg)
    assert code == 0 and project.lock.exists(), err
    derived = read_lock(project.lock).head_entry["derived"]
    assert derived["supported_power"] == float(supported[1]) == derived["accepted_power"]


def test_design_prints_the_derived_values(project):
    code, out, _ = project.cli("design", project.prereg)
    assert code == 0
    assert "n_exc* = 1570" in out and "31400 per condition" in out
    assert "cap check: OK" in out
    assert "simulated power" in out
    assert load(project.prereg).canonical_hash in out
    assert not project.lock.exists()


def test_a_lock_frozen_when_accepted_power_was_the_z_test_power_keeps_that_meaning(demo_study):
    """The shipped demo was frozen when ``accepted_power`` recorded Eq. 2's z-test power (its lock
    has no ``supported_power``); it means that still, for design and for an amendment, while a
    new registration is held to the simulated power of its procedure."""
    from tailgate.authoring.freeze import check_design
    from tailgate.protocol.design import PROCEDURE, Z_TEST, accepted_power_rule

    assert accepted_power_rule(demo_study) == Z_TEST
    design = check_design(demo_study, runnable=False)  # no refusal, nothing simulated
    assert design is not None and design.power_accepted and design.procedure_power is None
    assert dataclasses.replace(design, accepted_rule=PROCEDURE).power_accepted is False


def test_design_of_the_demo_ends_with_0(demo_study):
    from cli_call import tailgate

    res = tailgate("design", str(demo_study.path), cwd=demo_study.path.parents[1])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "accepted_power 0.78: OK by the rule its lock was frozen under" in res.stdout
