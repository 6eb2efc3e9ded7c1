"""Every ``dominance`` criterion's PASS agrees with the table the report shows for it, on any
small data (Nitsure et al. (2024), Algorithm 1): continuous scores, capped integers with a pile
at the cap, a few grades, pass/fail; two to four conditions; every order, resampling, ε₀ and
calibration the schema allows.

- ``r_fsd(a, b) <= 0`` / ``r_ssd(a, b) <= 0`` PASS exactly where the ε table marks the pair ✓,
  and ``> 0`` exactly where it does not;
- ``eps_*_ucb(a, b) <= ε₀`` PASS exactly where the absolute ε₀-test records a win, the wins
  whose Borda ranks the rankings table shows in its ``@ ε₀`` column;
- ``rank_fsd(c)`` / ``rank_ssd(c)`` read the rank the rankings table shows.

The statistics are computed as the analysis stage computes them (its ``_target_stats``), with
few resamples; the tables are the report section's own blocks.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from registration_strategies import field
from tailgate.analyses.criteria import Criterion, evaluate, parse_statistic
from tailgate.analyses.dominance import criteria as dom_criteria
from tailgate.analyses.dominance.compute import NORMAL_TIE_SHARE, _target_stats
from tailgate.analyses.dominance.spec import ORDERS
from tailgate.report.sections.dominance import DOMINANCE
from tailgate.report.tables import Table

DOM = "analysis_dominance"
KINDS = ("continuous", "capped", "grades", "binary")


def _sample(rng: np.random.Generator, kind: str, n: int, shift: float) -> np.ndarray:
    """``n`` scores of ``kind`` (larger is better, as the analysis reads severities)."""
    if kind == "continuous":
        return rng.normal(shift, 1.0, n)
    if kind == "capped":  # a numeric scorer's absolute error: integers 0-100, a pile at 100
        x = np.minimum(np.round(rng.exponential(12 + 4 * shift, n)), 100.0)
        x[rng.random(n) < 0.08] = 100.0
        return -x
    if kind == "grades":
        return -np.round(np.clip(rng.normal(2 + shift, 1.0, n), 0, 4) * 2) / 2
    return -(rng.random(n) < 0.3 + 0.1 * shift).astype(float)


@st.composite
def analyses(draw: st.DrawFn) -> tuple[dict, list[np.ndarray]]:
    """A dominance analysis's settings (from the schema's enums and bounds) and its samples."""
    k = draw(st.integers(2, 4))
    conds = [f"m{i}" for i in range(k)]
    resampling = draw(st.sampled_from(field("analyses.*.resampling", DOM)["enum"]))
    kind = draw(st.sampled_from(KINDS))
    sizes = draw(st.lists(st.integers(15, 60), min_size=k, max_size=k))
    if resampling == "paired":
        sizes = [sizes[0]] * k
    shifts = draw(st.lists(st.sampled_from([0.0, 0.0, 0.3, 1.0]), min_size=k, max_size=k))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    samples = [_sample(rng, kind, n, s) for n, s in zip(sizes, shifts, strict=True)]
    orders = draw(
        st.lists(
            st.sampled_from(field("analyses.*.orders[*]", DOM)["enum"]),
            min_size=1,
            max_size=2,
            unique=True,
        )
    )
    eps0 = draw(st.lists(st.sampled_from([0.05, 0.1, 0.25, 0.4, 0.5]), max_size=2, unique=True))
    calibration = draw(st.sampled_from(field("analyses.*.calibration", DOM)["enum"]))
    if calibration == "normal":  # refused on tied scores (the analysis says so, exit 2)
        assume(all(x.size - np.unique(x).size <= NORMAL_TIE_SHARE * x.size for x in samples))
    settings_ = {
        "conditions": conds,
        "scorers": ["s"],
        "scale": {"s": "identity"},
        "orientation": {"s": "higher_is_worse"},
        "orders": sorted(orders),
        "alpha": draw(st.sampled_from([0.05, 0.1, 0.2])),
        "resamples": draw(st.integers(20, 120)),
        "resampling": resampling,
        "eps0": eps0,
        "risk_level": 0.1,
        "aggregation": "borda",
        "calibration": calibration,
    }
    return settings_, samples


def _stats(settings_: dict, samples: list[np.ndarray], seed: int) -> dict:
    k = len(samples)
    target = _target_stats(samples, settings_, np.random.SeedSequence(seed), 1)
    return {
        "settings": settings_,
        "k": k,
        "alpha_pair": settings_["alpha"] / k**2,
        "targets": {"s": target},
    }


def _outcome(stats: dict, text: str, comparison: str, threshold: float) -> str:
    value, note = dom_criteria.statistic({}, stats, parse_statistic(text))
    return evaluate(Criterion("c", text, comparison, threshold), value, note).outcome


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=analyses(), seed=st.integers(0, 2**16))
def test_every_dominance_criterion_agrees_with_its_table(case, seed):
    settings_, samples = case
    stats = _stats(settings_, samples, seed)
    conds = settings_["conditions"]
    tables = {b.title: b for b in DOMINANCE.blocks("a", {}, stats) if isinstance(b, Table)}
    (ranking,) = (t for title, t in tables.items() if "rankings" in title)
    for o, order in ORDERS.items():
        if order not in settings_["orders"]:
            continue
        tests = stats["targets"]["s"][o]
        name = "W2" if o == "fsd" else "IQ"
        (table,) = (t for title, t in tables.items() if f"ε_{name}(row, column)" in title)
        for row in table.rows:
            i = conds.index(row[0])
            for j, cell in enumerate(row[1:]):
                if i == j:
                    continue
                stat = f"r_{o}({conds[i]}, {conds[j]})"
                tick = "✓" in cell
                assert (_outcome(stats, stat, "<=", 0.0) == "PASS") == tick, (stat, cell)
                assert (_outcome(stats, stat, ">", 0.0) == "PASS") != tick, (stat, cell)
                for a in tests["absolute"]:
                    ucb = f"eps_{o}_ucb({conds[i]}, {conds[j]})"
                    passed = _outcome(stats, ucb, "<=", a["eps0"]) == "PASS"
                    assert passed == bool(a["wins"][i][j]), (ucb, a["eps0"], cell)
        col = ranking.header.index(f"R-{o.upper()} rank")
        for c, row in zip(conds, ranking.rows, strict=True):
            shown = int(row[col].split()[0])
            assert _outcome(stats, f"rank_{o}({c})", "==", shown) == "PASS", (c, row[col])
        for a in tests["absolute"]:
            col = ranking.header.index(f"ε-{o.upper()} rank @ ε₀={a['eps0']:g}")
            wins = np.asarray(a["wins"]).sum(axis=1)
            shown = [int(row[col].split()[0]) for row in ranking.rows]
            # a condition with more absolute wins is never ranked below one with fewer
            for x in range(len(conds)):
                for y in range(len(conds)):
                    if wins[x] > wins[y]:
                        assert shown[x] < shown[y], (a["eps0"], wins.tolist(), shown)
