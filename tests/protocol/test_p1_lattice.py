"""P1 on a lattice: the percentile method reads the profile-likelihood interval (methods note P10),
in the gate, in its stored form and in the design's simulation of it."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from tailgate.protocol.gates import ConditionSummary, GateSettings, p1_gate, p1_reads
from tailgate.protocol.simulated_p1 import p1_interval
from tailgate.stages.gates import summaries_from_fits
from tailgate.stats import gpd, inference
from tailgate.stats.gof import sample_gpd
from test_gates import cond

S = GateSettings()


def summary(name: str, lattice: bool, **kw: float) -> ConditionSummary:
    """Percentile CIs that overlap, profile CIs that do not (both pairs built alike)."""
    base = dict(n_exc=200, xi_ci_low=-0.2, xi_ci_high=0.2, profile_ci_low=-0.1)
    return cond(name, **{**base, "profile_ci_high": 0.1, "lattice": lattice, **kw})


def pair(lattice: bool) -> tuple[ConditionSummary, ConditionSummary]:
    b = dict(xi=0.3, xi_ci_low=0.15, xi_ci_high=0.45, profile_ci_low=0.2, profile_ci_high=0.4)
    return summary("A", lattice), summary("B", lattice, **b)


def test_percentile_on_a_lattice_reads_the_profile_interval_and_says_so() -> None:
    r = p1_gate(*pair(lattice=True), S)
    assert r.passed and r.value == pytest.approx(0.1)  # gap 0.2 − 0.1 of the profile CIs
    assert "profile-likelihood" in r.criterion and "percentile method on a lattice" in r.criterion


def test_percentile_off_the_lattice_is_unchanged() -> None:
    r = p1_gate(*pair(lattice=False), S)
    assert not r.passed and r.value == pytest.approx(-0.05)  # 0.15 − 0.2: overlap
    assert "percentile xi CIs" in r.criterion
    assert p1_reads("percentile", False) == "percentile"
    assert p1_reads("lr_test", True) == "lr_test" and p1_reads("profile", True) == "profile"


def test_the_stored_summary_keeps_its_form_off_the_lattice() -> None:
    a, _ = pair(lattice=False)
    assert "lattice" not in a.to_dict()
    la, _ = pair(lattice=True)
    assert la.to_dict()["lattice"] is True
    assert ConditionSummary.from_dict(la.to_dict()).lattice
    assert not ConditionSummary.from_dict(a.to_dict()).lattice


def test_summaries_from_fits_mark_lattice_conditions() -> None:
    rec = {
        "q": 0.95,
        "u": 1.0,
        "n_exc": 200,
        "xi": 0.1,
        "sigma": 1.0,
        "status": "ok",
        "xi_ci_gate": [0.0, 0.2],
        "gate_ci_level": 0.95,
        "ad_p": 0.5,
        "xi_minus": 0.1,
        "xi_plus": 0.1,
        "xi_profile_ci_gate": [0.01, 0.19],
    }
    fits = {"A": {"thresholds": [rec]}, "B": {"thresholds": [rec], "lattice": {"step": 1.0}}}
    out = summaries_from_fits(fits, [0.95])[0.95]
    assert not out["A"].lattice and out["B"].lattice


def test_the_design_says_how_it_simulated_p1_on_a_lattice() -> None:
    assert "percentile method on a lattice" in p1_interval(S, None, lattice=True)
    assert "stand-in" in p1_interval(S, None)
    prof = dataclasses.replace(S, p1_method="profile")
    assert p1_interval(prof, None, lattice=True) == p1_interval(prof, None)


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_the_profile_interval_covers_on_a_coarse_lattice() -> None:
    """A small version of ``tests/benchmarks/p1_lattice_coverage.py``: 120 samples of 100
    exceedances of a discretised GPD(0.2, 1) on step h = σ; coverage within 3 s.e. of 0.95."""
    rng = np.random.default_rng(20261129)
    hits = []
    for _ in range(120):
        y = (np.floor(sample_gpd(rng, 0.2, 1.0, (100,))) + 0.5) * 1.0
        f = gpd.fit(y, 1.0)
        p = inference.profile_ci(y, 0.95, f, step=1.0)
        hits.append(math.isfinite(p.low) and p.low <= 0.2 <= p.high)
    assert np.mean(hits) >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 120)
