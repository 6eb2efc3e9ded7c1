"""Gates G1–G5, P1, P2 and the H1 rule on hand-worked cases (Section 3 of Zhou (2026))."""

from __future__ import annotations

import dataclasses
import json

import pytest
from tailgate.protocol.gates import (
    GATE_ORDER,
    ConditionSummary,
    GateSettings,
    PairVerdict,
    evaluate_pair,
)
from tailgate.protocol.verdict import ProtocolVerdict, h1_verdict, pairwise_matrix
from tailgate.stats.equivalence import BulkEquivalence, EquivalenceResult

S = GateSettings()  # Zhou (2026) defaults, no multiplicity adjustment: CI level 0.95


def cond(name: str, **kw) -> ConditionSummary:
    base = dict(
        condition=name,
        q=0.95,
        u=1.0,
        n_exc=1600,
        xi=0.0,
        sigma=1.0,
        fit_status="ok",
        xi_ci_low=-0.05,
        xi_ci_high=0.05,
        ci_level=0.95,
        ad_pvalue=0.3,
        xi_minus=0.01,
        xi_plus=-0.02,
    )
    base.update(kw)
    return ConditionSummary(**base)


def bulk(mean=(-0.05, 0.05), tv=(-0.1, 0.1), level=0.95) -> BulkEquivalence:
    m = EquivalenceResult("mean", sum(mean) / 2, *mean, 0.10, level, 10_000, False)
    t = EquivalenceResult("tvar_0.9", sum(tv) / 2, *tv, 0.20, level, 10_000, False)
    return BulkEquivalence(m, t, 0.9)


A = cond("A")
B = cond("B", xi=0.25, xi_ci_low=0.18, xi_ci_high=0.32, ad_pvalue=0.4, xi_minus=0.24, xi_plus=0.27)


def test_all_gates_pass_on_the_reference_pair() -> None:
    v = evaluate_pair(A, B, bulk(), S)
    assert v.passed and v.admissible and v.first_failing is None
    assert tuple(g.gate for g in v.gates) == GATE_ORDER
    assert v.gate("P2").value == pytest.approx(0.25)
    assert v.gate("P1").value == pytest.approx(0.13)  # gap between 0.05 and 0.18


CASES = {
    "G1": dict(bulk=bulk(mean=(0.05, 0.12))),
    "G2": dict(bulk=bulk(tv=(-0.25, 0.1))),
    "G3": dict(a=cond("A", n_exc=499)),
    "G4": dict(b=dataclasses.replace(B, ad_pvalue=0.05)),
    "G5": dict(a=cond("A", xi_plus=0.051)),
    "P1": dict(a=cond("A", xi_ci_high=0.2)),
    "P2": dict(
        b=dataclasses.replace(
            B, xi=0.09, xi_ci_low=0.06, xi_ci_high=0.12, xi_minus=0.08, xi_plus=0.1
        )
    ),
}


@pytest.mark.parametrize("gate", GATE_ORDER)
def test_each_gate_failing_alone(gate: str) -> None:
    c = CASES[gate]
    v = evaluate_pair(c.get("a", A), c.get("b", B), c.get("bulk", bulk()), S)
    assert v.first_failing == gate
    assert [g.gate for g in v.gates if not g.passed] == [gate]
    assert not v.passed


def test_first_failing_follows_gate_order() -> None:
    v = evaluate_pair(cond("A", n_exc=10, ad_pvalue=0.0), B, bulk(tv=(0.3, 0.4)), S)
    assert v.first_failing == "G2"
    assert {g.gate for g in v.gates if not g.passed} == {"G2", "G3", "G4"}


def test_g5_uses_existing_side_and_fails_without_any() -> None:
    one_sided = evaluate_pair(cond("A", xi_plus=None), B, bulk(), S)
    assert one_sided.gate("G5").passed and "minus" in one_sided.gate("G5").detail
    none = evaluate_pair(cond("A", xi_plus=None, xi_minus=None), B, bulk(), S)
    assert none.first_failing == "G5"
    nan_side = evaluate_pair(cond("A", xi_plus=float("nan")), B, bulk(), S)
    assert nan_side.first_failing == "G5"


def test_boundary_fit_cannot_pass_p1_p2() -> None:
    v = evaluate_pair(
        cond(
            "A",
            fit_status="boundary",
            xi=-1.0,
            xi_ci_low=-1.0,
            xi_ci_high=-1.0,
            xi_minus=-1.0,
            xi_plus=-1.0,
        ),
        B,
        bulk(),
        S,
    )
    assert not v.gate("P1").passed and not v.gate("P2").passed


def test_bonferroni_level_is_registered_and_checked() -> None:
    s6 = GateSettings(multiplicity="bonferroni", n_pairs=6)
    assert s6.alpha_adjusted == pytest.approx(0.05 / 6) and s6.ci_level == pytest.approx(
        1 - 0.05 / 6
    )
    with pytest.raises(ValueError, match="CI level"):
        evaluate_pair(A, B, bulk(), s6)
    lvl = s6.ci_level
    v = evaluate_pair(
        cond("A", ci_level=lvl), dataclasses.replace(B, ci_level=lvl), bulk(level=lvl), s6
    )
    assert v.passed
    with pytest.raises(ValueError, match="multiplicity"):
        GateSettings(multiplicity="holm")


def _band(fail_at: set[float]) -> tuple[dict, dict]:
    summaries = {}
    for q in (0.95, 0.96, 0.97):
        a = cond("A", q=q, n_exc=100 if q in fail_at else 1600)
        b = dataclasses.replace(B, q=q)
        c = cond("C", q=q, xi=0.02, xi_ci_low=-0.03, xi_ci_high=0.07)
        summaries[q] = {"A": a, "B": b, "C": c}
    pairs = {("A", "B"): bulk(), ("A", "C"): bulk(), ("B", "C"): bulk(mean=(0.2, 0.3))}
    return summaries, pairs


def test_band_rule_all_rejects_single_threshold_passes() -> None:
    summaries, pairs = _band(fail_at={0.96})
    matrix = pairwise_matrix(summaries, pairs, S)
    assert len(matrix) == 9
    v_all = h1_verdict(matrix, headline_q=0.95, band=(0.95, 0.96, 0.97), settings=S)
    assert v_all.h1 == "KILL" and v_all.passing_pairs == ()
    v_head = h1_verdict(
        matrix, headline_q=0.95, band=(0.95, 0.96, 0.97), settings=S, band_rule="headline"
    )
    assert v_head.h1 == "PASS" and v_head.passing_pairs == (("A", "B"),)
    assert v_all.at("A", "B", 0.96).first_failing == "G3"
    assert v_all.at("B", "C", 0.95).first_failing == "G1"
    summaries, pairs = _band(fail_at=set())
    ok = h1_verdict(
        pairwise_matrix(summaries, pairs, S), headline_q=0.95, band=(0.95, 0.96, 0.97), settings=S
    )
    assert ok.h1 == "PASS"


def test_json_round_trips_rederive_the_same_verdict() -> None:
    summaries, pairs = _band(fail_at={0.97})
    v = h1_verdict(
        pairwise_matrix(summaries, pairs, S), headline_q=0.95, band=(0.95, 0.96, 0.97), settings=S
    )
    text = json.dumps(v.to_dict(), allow_nan=False)
    back = ProtocolVerdict.from_dict(json.loads(text))
    assert back.to_dict() == v.to_dict()
    # the audit recomputes gates from stored summaries alone
    stored = {
        q: {
            k: ConditionSummary.from_dict(json.loads(json.dumps(c.to_dict(), allow_nan=False)))
            for k, c in d.items()
        }
        for q, d in summaries.items()
    }
    stored_bulk = {
        k: BulkEquivalence.from_dict(json.loads(json.dumps(b.to_dict()))) for k, b in pairs.items()
    }
    again = h1_verdict(
        pairwise_matrix(stored, stored_bulk, S),
        headline_q=0.95,
        band=(0.95, 0.96, 0.97),
        settings=S,
    )
    assert again.to_dict() == v.to_dict()
    assert PairVerdict.from_dict(v.pairs[0].to_dict()) == v.pairs[0]


def test_headline_must_be_in_band() -> None:
    with pytest.raises(ValueError, match="not in the band"):
        h1_verdict((), headline_q=0.99, band=(0.95,), settings=S)


def test_a_missing_number_says_why_instead_of_nan() -> None:
    nan = float("nan")
    failed = cond(
        "A", fit_status="too_few", xi=nan, xi_ci_low=nan, xi_ci_high=nan, ad_pvalue=nan, n_exc=3
    )
    v = evaluate_pair(failed, B, bulk(mean=(nan, nan)), S)
    details = " ".join(g.detail for g in v.gates)
    assert "nan" not in details.lower()
    assert "AD p none (fit too_few), 0.4" in v.gate("G4").detail
    assert "CIs [none (fit too_few), none (fit too_few)] vs [0.18, 0.32]" in v.gate("P1").detail
    assert v.gate("G1").detail == "CI [none (not computed), none (not computed)]"
