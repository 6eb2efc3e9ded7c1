"""Dominance criteria on capped integer scores (a numeric scorer's absolute error, integers
0–100 with a pile at the cap, 300 samples per model): the bound behind ``r_*`` reflects the
bootstrap spread, and every criterion's PASS agrees with the ✓ of the ε table the report shows
(Nitsure et al. (2024), Algorithm 1; methods notes D7–D9).

On such scores the replicates of Δε have atoms: where two conditions tie, ε* of that pair is
almost always 0 or 1, so Δε* sits at −½ or ½. An atom covering the median and the Φ(1)
quantile made the logit-percentile bound the atom itself, the point estimate −0.5, with some
7 % of the replicates a whole unit above it (σ of Δε 0.25); the criterion then passed where
the guard did not reject equal distributions and the table showed no ✓."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.special import ndtr
from tailgate.analyses.criteria import Criterion, evaluate, parse_statistic
from tailgate.analyses.dominance import criteria as dom_criteria
from tailgate.analyses.dominance.compute import _target_stats
from tailgate.analyses.dominance.statistics import bootstrap_ratios, logit_percentile_bound
from tailgate.report.sections.dominance import DOMINANCE
from tailgate.report.tables import Table

CONDS = ["tiny-a", "tiny-b", "tiny-c"]
ALPHA = 0.05
SETTINGS = {
    "conditions": CONDS,
    "scorers": ["abs_error"],
    "scale": {"abs_error": "identity"},
    "orientation": {"abs_error": "higher_is_worse"},
    "orders": [1, 2],
    "alpha": ALPHA,
    "resamples": 1000,
    "resampling": "independent",
    "eps0": [],
    "risk_level": 0.1,
    "aggregation": "borda",
    "calibration": "logit_percentile",
}


def _errors(rng: np.random.Generator, scale: float, at_cap: float) -> np.ndarray:
    """300 absolute errors: rounded exponential, capped at 100, a share ``at_cap`` at 100."""
    x = np.minimum(np.round(rng.exponential(scale, 300)), 100.0)
    x[rng.random(300) < at_cap] = 100.0
    return x


def _samples(seed: int) -> list[np.ndarray]:
    """Negated errors (larger is better): tiny-a and tiny-c share their distribution, tiny-b's
    errors run a little larger (the data sets of seeds 3 and 10 are ones where the former bound
    passed ``r_*`` criteria with no ✓)."""
    rng = np.random.default_rng([52, seed])
    return [-_errors(rng, 12, 0.08), -_errors(rng, 14, 0.10), -_errors(rng, 12, 0.08)]


@functools.cache
def _stats(seed: int) -> dict:
    """The stored statistics of one analysis of :func:`_samples`."""
    target = _target_stats(_samples(seed), SETTINGS, np.random.SeedSequence([52, seed]), 1)
    return {
        "settings": SETTINGS,
        "k": 3,
        "alpha_pair": ALPHA / 9,
        "targets": {"abs_error": target},
        "seed": seed,
    }


def _criterion(stats: dict, text: str, comparison: str, threshold: float) -> tuple[str, str]:
    value, note = dom_criteria.statistic({}, stats, parse_statistic(text))
    out = evaluate(Criterion("c", text, comparison, threshold), value, note)
    return out.outcome, out.note


def _tables(stats: dict) -> dict[str, Table]:
    blocks = DOMINANCE.blocks("lattice", {}, stats)
    return {b.title: b for b in blocks if isinstance(b, Table)}


@pytest.fixture(params=[3, 10])
def lattice(request) -> dict:
    return _stats(request.param)


def test_every_bound_criterion_passes_exactly_where_the_table_marks_a_win(lattice):
    """``r_fsd(x, y) <= 0`` and ``r_ssd(x, y) <= 0`` for every ordered pair PASS exactly where
    the report's ε table shows ✓, and ``> 0`` exactly where it does not (the test's "no
    dominance claim" where the guard does not reject)."""
    tables = _tables(lattice)
    checked = 0
    for o, name in (("fsd", "W2"), ("ssd", "IQ")):
        (table,) = (t for title, t in tables.items() if f"ε_{name}(row, column)" in title)
        for row in table.rows:
            i = CONDS.index(row[0])
            for j, cell in enumerate(row[1:]):
                if i == j:
                    continue
                stat = f"r_{o}({CONDS[i]}, {CONDS[j]})"
                tick = "✓" in cell
                assert (_criterion(lattice, stat, "<=", 0.0)[0] == "PASS") == tick, (stat, cell)
                assert (_criterion(lattice, stat, ">", 0.0)[0] == "PASS") != tick, (stat, cell)
                checked += 1
    assert checked == 12


def test_the_bound_reflects_the_bootstrap_spread(lattice):
    """Every bound of Δε against the 1 − α/k² quantile of the same bootstrap replicates by hand
    (one-versus-all ratios, Eq. 8): never below it. Where 5 % or more of the replicates lie a
    whole atom (Δε̂ + 1) above the point estimate, the bound reaches that atom; the former
    bound stayed at the point estimate there (−0.5 at σ = 0.25)."""
    reps = bootstrap_ratios(
        _samples(lattice["seed"]), 1000, np.random.SeedSequence([52, lattice["seed"]])
    )
    jumps = 0
    for o, name in ((0, "fsd"), (1, "ssd")):
        t = lattice["targets"]["abs_error"][name]
        one = np.nansum(reps[1:, o], axis=2) / 2
        for i in range(3):
            for j in range(3):
                if i == j:
                    continue
                star = one[:, i] - one[:, j]
                assert star.std(ddof=1) == pytest.approx(t["delta_sigma"][i][j], rel=1e-9)
                hand = np.quantile(star, 1 - ALPHA / 9)
                assert t["r"][i][j] >= hand - 1e-12, (name, i, j)
                if np.mean(star >= t["delta"][i][j] + 0.9) >= 0.05:
                    assert t["r"][i][j] >= t["delta"][i][j] + 0.9, (name, i, j)
                    jumps += 1
    assert jumps >= 1


def test_bound_is_never_below_the_percentile_of_its_replicates():
    """The bound against the Φ(z) quantile of the replicates by hand, on replicates with an
    atom over the median and the Φ(1) quantile (the logit-normal tail alone gives the atom)."""
    z = 2.54
    reps = np.full(1000, 0.25)  # (1 + Δε*)/2 at Δε* = −½
    reps[:90] = 0.75  # 9 % of the replicates at Δε* = ½
    got = logit_percentile_bound(reps[:, None], z, wider=False)[0]
    assert got == pytest.approx(np.quantile(reps, ndtr(z)))
    assert got == 0.75
    rng = np.random.default_rng(52)
    cont = rng.beta(2, 8, (1000, 6))
    bound = logit_percentile_bound(cont, z)
    assert np.all(bound >= np.quantile(cont, ndtr(z), axis=0))


def test_criterion_notes_say_what_a_statistic_rests_on(lattice):
    """Bound criteria name the guard; point estimates say they are no test; a rank says whether
    it rests on the wins or, tied in wins, on point estimates, as the rankings table's "(tie)"
    does."""
    t = lattice["targets"]["abs_error"]["ssd"]
    p = t["distinct_p"][2][1]
    outcome, note = _criterion(lattice, "r_ssd(tiny-c, tiny-b)", "<=", 0.0)
    assert "distinctness guard" in note and f"{p:.3g}" in note
    assert (outcome == "PASS") == bool(t["wins"][2][1])
    point = _criterion(lattice, "delta_ssd(tiny-a, tiny-c)", "<=", 0.0)[1]
    assert "point estimate, not a test" in point
    ranks = next(b for title, b in _tables(lattice).items() if "rankings" in title)
    col = ranks.header.index("R-SSD rank")
    for c, row in zip(CONDS, ranks.rows, strict=True):
        note = _criterion(lattice, f"rank_ssd({c})", "==", 3)[1]
        starred = row[col].endswith("(tie)")
        assert ("rests on point estimates" in note) == starred, (c, row[col], note)
        assert ("rests on the wins" in note) != starred


def test_a_former_pass_without_a_win_now_fails():
    """Seed 3: ``r_ssd(tiny-c, tiny-b) <= 0`` passed at −0.5 (σ 0.25, guard p 0.077 > α/k²,
    no ✓); now it fails, and its note gives the guard's p."""
    stats = _stats(3)
    t = stats["targets"]["abs_error"]["ssd"]
    assert not any(map(any, t["wins"]))
    outcome, note = _criterion(stats, "r_ssd(tiny-c, tiny-b)", "<=", 0.0)
    assert outcome == "FAIL" and "no dominance claim" in note
    assert t["r"][2][1] > 0  # the bound alone fails too now
