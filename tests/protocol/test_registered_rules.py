"""Registered rules beyond Zhou (2026)'s defaults: G5 edge and tolerance, family, P1 method."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from tailgate.prereg.validated import Study
from tailgate.protocol.gates import ConditionSummary, GateSettings, evaluate_pair
from tailgate.protocol.registered import family_pairs, registered_settings
from tailgate.protocol.verdict import h1_verdict, pairwise_matrix
from tailgate.stages.fit import side_xi
from tailgate.stats import gpd, inference
from tailgate.stats.equivalence import BulkEquivalence, EquivalenceResult
from tailgate.stats.gof import sample_gpd
from tailgate.stats.stability import side_difference_se, stability_check
from test_gates import cond as gate_cond

S = GateSettings()


def cond(name: str, **kw) -> ConditionSummary:
    """test_gates' reference condition with exceedance counts at q ± δ (for the se rule)."""
    return gate_cond(name, **{"n_minus": 2240, "n_plus": 960, **kw})


def bulk(level_mean=0.95, level_tvar=0.95) -> BulkEquivalence:
    m = EquivalenceResult("mean", 0.0, -0.05, 0.05, 0.10, level_mean, 10_000, False)
    t = EquivalenceResult("tvar_0.9", 0.0, -0.1, 0.1, 0.20, level_tvar, 10_000, False)
    return BulkEquivalence(m, t, 0.9)


A = cond("A")
B = cond("B", xi=0.25, xi_ci_low=0.18, xi_ci_high=0.32, xi_minus=0.24, xi_plus=0.27)


def test_g5_side_without_data_fails_as_not_testable() -> None:
    """A side inside (0, 1) with too few exceedances is NaN and fails G5, never dropped."""
    v = evaluate_pair(cond("A", xi_plus=math.nan, n_plus=150), B, bulk(), S)
    assert v.first_failing == "G5" and "not testable" in v.gate("G5").detail
    x = np.random.default_rng(1).exponential(size=18_000)
    assert math.isnan(side_xi(x, 0.99, 200))  # 180 exceedances < 200
    assert side_xi(x, 1.01, 200) is None  # beyond the data range: structural
    assert math.isfinite(side_xi(x, 0.97, 200))


def test_g5_edge_rule_is_registered() -> None:
    edge = cond("A", xi_plus=None, n_plus=None)
    assert evaluate_pair(edge, B, bulk(), S).gate("G5").passed
    strict = dataclasses.replace(S, stability_edge="fail")
    v = evaluate_pair(edge, B, bulk(), strict)
    assert v.first_failing == "G5" and "beyond the data range (fail)" in v.gate("G5").detail


def test_g5_se_tolerance_scales_with_sampling_error() -> None:
    se = side_difference_se(0.0, 1600, 960)
    assert se == pytest.approx(math.sqrt(1 / 960 - 1 / 1600))
    s2 = dataclasses.replace(S, stability_rule="se", stability_se_multiplier=2.0)
    ok = evaluate_pair(cond("A", xi_plus=-1.9 * se, xi_minus=0.0), B, bulk(), s2)
    assert ok.gate("G5").passed
    bad = evaluate_pair(cond("A", xi_plus=-2.1 * se, xi_minus=0.0), B, bulk(), s2)
    assert bad.first_failing == "G5"
    # without exceedance counts the s.e. cannot be formed: G5 fails rather than passes
    no_n = evaluate_pair(cond("A", n_plus=None, n_minus=None), B, bulk(), s2)
    assert no_n.first_failing == "G5"


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_g5_se_rule_size_on_a_stable_tail() -> None:
    """An exact GPD tail fails the se rule at about 2·(1 − Φ(2)) per side (fixed 0.05: ~37 %)."""
    rng = np.random.default_rng(4)
    fails = 0
    m = 300
    for _ in range(m):
        x = rng.exponential(size=30_000)
        f = {q: gpd.fit(x[x > np.quantile(x, q)] - np.quantile(x, q)) for q in (0.95, 0.97, 0.99)}
        n = {q: int(np.sum(x > np.quantile(x, q))) for q in f}
        c = stability_check(
            f[0.97].xi,
            f[0.95].xi,
            f[0.99].xi,
            q=0.97,
            delta=0.02,
            tolerance=0.05,
            rule="se",
            se_multiplier=2.0,
            n_q=n[0.97],
            n_minus=n[0.95],
            n_plus=n[0.99],
        )
        fails += not c.passed
    rate = fails / m
    assert rate < 0.15  # two sides at 2 s.e.: ≈ 0.09


def test_multiplicity_family_and_adjusted_gates() -> None:
    conds = [{"name": n, "pilot": n.startswith("p")} for n in ("a", "b", "c", "p1", "p2")]
    pairs = [("a", "b"), ("a", "c"), ("b", "c"), ("p1", "p2")]

    scan = {"start": 0.9, "stop": 0.99, "step": 0.01}
    resamples = {"min_exceedances": 50, "resamples": 99}

    def study(**proto):
        base = {
            "tolerances": {"mean": 0.1, "tvar": 0.2},
            "min_exceedances": 500,
            "gof": {"alpha": 0.05},
            "stability": {"delta": 0.02, "tolerance": 0.05, "scan": scan, **resamples},
            "delta_floor": 0.1,
            "alpha": 0.05,
            "multiplicity": "bonferroni",
            "tvar_level": 0.9,
            "power": 0.8,
            "xi_bar": 0.0,
            "headline_scale": "logit",
            "band_rule": "any",
            "pairs": pairs,
        }
        base.update(proto)
        return Study(Path("study.yaml"), {"conditions": conds, "protocol": base}, "0", "0")

    reg = registered_settings(study())
    assert reg.n_pairs == 4 and reg.adjusted_gates == ("G1", "G2", "P1")
    conf = registered_settings(study(family="confirmatory"))
    assert conf.n_pairs == 3 and family_pairs(study(family="confirmatory")) == pairs[:3]
    assert conf.level_of("P1") == pytest.approx(1 - 0.05 / 3)
    g4 = registered_settings(study(adjusted_gates=["G4", "P1"]))
    assert g4.alpha_of("G4") == pytest.approx(0.05 / 4) and g4.level_of("G1") == 0.95
    # a pair outside the family is evaluated but cannot make H1 pass
    lvl = conf.ci_level
    p1, p2 = cond("p1", ci_level=lvl), dataclasses.replace(B, condition="p2", ci_level=lvl)
    b = bulk(conf.level_of("G1"), conf.level_of("G2"))
    matrix = pairwise_matrix({0.95: {"p1": p1, "p2": p2}}, {("p1", "p2"): b}, conf, [("p1", "p2")])
    assert matrix[0].passed
    v = h1_verdict(matrix, headline_q=0.95, band=[0.95], settings=conf, family=pairs[:3])
    assert v.h1 == "KILL"


def test_p1_methods_profile_and_lr_test() -> None:
    rng = np.random.default_rng(2)
    ya, yb = sample_gpd(rng, 0.0, 1.0, 1600), sample_gpd(rng, 0.3, 1.0, 1600)

    def summary(name: str, y: np.ndarray) -> ConditionSummary:
        f = gpd.fit(y)
        pci = inference.profile_ci(y, 0.95, f)
        return cond(
            name,
            xi=f.xi,
            sigma=f.sigma,
            xi_minus=f.xi,
            xi_plus=f.xi,
            profile_ci_low=pci.low,
            profile_ci_high=pci.high,
            profile=inference.profile_grid(y, f),
            xi_ci_low=pci.low,
            xi_ci_high=pci.high,
        )

    a, b = summary("A", ya), summary("B", yb)
    for method in ("percentile", "profile", "lr_test"):
        v = evaluate_pair(a, b, bulk(), dataclasses.replace(S, p1_method=method))
        assert v.gate("P1").passed, method
    same = summary("B", sample_gpd(rng, 0.0, 1.0, 1600))
    v = evaluate_pair(a, same, bulk(), dataclasses.replace(S, p1_method="lr_test"))
    assert not v.gate("P1").passed and v.gate("P1").value > 0.05
    with pytest.raises(ValueError, match="p1_method"):
        GateSettings(p1_method="wald")
