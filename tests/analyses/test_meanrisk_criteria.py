"""Mean–risk models against normal closed forms, the portfolio and rank aggregation against
brute force, criteria outcomes (fail closed) and the registration checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import norm
from tailgate.analyses.criteria import Criterion, evaluate, parse_statistic
from tailgate.analyses.dominance.meanrisk import (
    aggregate_ranks,
    mean_risk,
    mean_win_rate,
    portfolio,
)
from tailgate.errors import PreregError


def test_mean_risk_matches_normal_closed_forms():
    mu, s, p, n = 1.0, 2.0, 0.1, 1_000_000
    x = mu + s * norm.ppf((np.arange(1, n + 1) - 0.5) / n)
    m = mean_risk(x, p)
    tail = s * norm.pdf(norm.ppf(p)) / p
    assert m.mean == pytest.approx(mu, abs=1e-9)
    assert m.sd == pytest.approx(s, abs=1e-4)
    assert m.semi_deviation == pytest.approx(s / np.sqrt(2 * np.pi), abs=1e-5)
    assert m.neg_tvar == pytest.approx(-(mu - tail), abs=1e-4)
    assert m.mad_quantile == pytest.approx(tail, abs=1e-4)
    assert m.gini_tail == pytest.approx(s / np.sqrt(np.pi), abs=1e-5)  # half the Gini mean diff.
    assert m.score("gini_tail") == pytest.approx(mu - s / np.sqrt(np.pi), abs=1e-5)


def test_gini_tail_is_the_integral_of_the_integrated_quantile():
    rng = np.random.default_rng(0)
    x = rng.exponential(size=37)
    xs = np.sort(x)
    # brute force: Γ = 2∫(μp − Q₂(p))dp on a fine grid of the piecewise-linear Q₂
    grid = np.linspace(0, 1, 37 * 2000 + 1)
    q2 = np.interp(grid, np.arange(38) / 37, np.concatenate([[0], np.cumsum(xs) / 37]))
    gamma = 2 * np.trapezoid(x.mean() * grid - q2, grid)
    assert mean_risk(x, 0.2).gini_tail == pytest.approx(gamma, abs=1e-9)


def test_mean_win_rate_and_portfolio():
    a, b, c = np.array([1.0, 2, 3]), np.array([2.0, 2, 2]), np.array([0.0, 5, 0])
    eq15, eq16 = mean_win_rate([a, b, c], aligned=True)
    assert eq15.tolist() == [1.0, 1.0, 0.0]  # means 2, 2, 5/3; ties count as wins (Eq. 15)
    assert eq16.tolist() == [1 / 3, 1 / 3, 1 / 3]  # each wins one prompt outright (Eq. 16)
    # Eq. 9 by hand: pooled mid-rank CDFs of two metrics, weights 0.25/0.75
    m1 = [np.array([1.0, 2.0]), np.array([2.0, 3.0])]
    m2 = [np.array([10.0, 0.0]), np.array([5.0, 5.0])]
    r = portfolio({"m1": m1, "m2": m2}, {"m1": 1.0, "m2": 3.0})
    f1 = {1.0: 0.5 / 4, 2.0: 2 / 4, 3.0: 3.5 / 4}
    f2 = {0.0: 0.5 / 4, 5.0: 2 / 4, 10.0: 3.5 / 4}
    want0 = [f1[1.0] ** 0.25 * f2[10.0] ** 0.75, f1[2.0] ** 0.25 * f2[0.0] ** 0.75]
    np.testing.assert_allclose(r[0], want0, rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_exact_rank_aggregation_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    k = 6
    rankings = np.array([rng.permutation(k) + 1 for _ in range(4)])
    perms = list(itertools.permutations(range(1, k + 1)))

    def kendall(p):
        return sum(
            (p[a] < p[b]) != (r[a] < r[b]) for r in rankings for a in range(k) for b in range(a)
        )

    def footrule(p):
        return sum(abs(np.array(p) - r).sum() for r in rankings)

    for method, dist in (("kemeny", kendall), ("footrule", footrule)):
        got = aggregate_ranks(rankings, method)
        assert dist(tuple(got)) == min(dist(p) for p in perms)
    borda = aggregate_ranks(rankings, "borda")
    assert borda[np.argmin(rankings.mean(axis=0))] == 1


def test_criteria_outcomes_fail_closed():
    c = Criterion("c", "r_ssd(a, b)", "<=", 0.0, borderline=0.01)
    assert evaluate(c, -0.5).outcome == "PASS"
    assert evaluate(c, 0.5).outcome == "FAIL"
    assert evaluate(c, -0.005).outcome == "BORDERLINE"
    assert evaluate(c, 0.01).outcome == "BORDERLINE"
    assert evaluate(c, None).outcome == "NOT_TESTED"
    assert evaluate(c, float("nan")).outcome == "NOT_TESTED"
    assert evaluate(Criterion("d", "x", "==", 3.0), 3.0).outcome == "PASS"
    ref = parse_statistic("portfolio: r_ssd(qwen, nemo)")
    assert (ref.target, ref.name, ref.args) == ("portfolio", "r_ssd", ("qwen", "nemo"))
    assert parse_statistic("r_ssd(a,)") is None and parse_statistic("R(a)") is None


def _study(tmp_path, analyses: str):
    from tailgate.plans.registration import load
    from wf_project import SMALL_STUDY

    p = tmp_path / "small.yaml"
    p.write_text(SMALL_STUDY + analyses)
    return load(p)


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ("conditions: [base, nope]", "analyses.a.conditions[1]"),
        ("conditions: [base, twin]\n    scorers: [tox]\n    scale: identity", "analyses.a.scale"),
        ("conditions: [base, twin]\n    orders: [1]\n    criteria:\n      - {name: c, "
         "statistic: \"r_ssd(base, twin)\", comparison: \"<=\", threshold: 0}",
         "analyses.a.criteria[0].statistic"),
        ("conditions: [base, twin]\n    criteria:\n      - {name: c, "
         "statistic: \"r_ssd(base, heavy)\", comparison: \"<=\", threshold: 0}",
         "analyses.a.criteria[0].statistic"),
        ("conditions: [base, twin]\n    calibration: bootstrap_t", "analyses.a.calibration"),
    ],
)  # fmt: skip
def test_invalid_registrations_name_the_field(tmp_path, block, field):
    """Refused when the registration loads (design, freeze and the workflow alike)."""
    text = f"analyses:\n  a:\n    kind: dominance\n    {block}\n"
    if "scorers:" not in block:
        text = text.replace("    kind: dominance\n", "    kind: dominance\n    scorers: [tox]\n")
    if "criteria:" not in block:
        text += "    criteria: []\n"
    with pytest.raises(PreregError) as err:
        _study(tmp_path, text)
    assert f"field '{field}'" in str(err.value) and "Fix:" in str(err.value)
    assert "line " in str(err.value)  # the YAML line of the field
