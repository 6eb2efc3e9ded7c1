"""Eq. 2 / Table 1 of Zhou (2026) and the App. E operating characteristics of P1 ∧ P2."""

from __future__ import annotations

import pytest
from tailgate.protocol.gates import GateSettings
from tailgate.protocol.recovery import recovery_grid, simulate_pass_rate
from tailgate.stats.power import achieved_power, prompts_required, required_exceedances

# Table 1 of Zhou (2026): Δξ → (n_exc*, prompts at q = 0.95)
TABLE_1 = {0.05: (6280, 125_600), 0.07: (3204, 64_080), 0.10: (1570, 31_400), 0.20: (393, 7_860)}


@pytest.mark.parametrize("delta", sorted(TABLE_1))
def test_table_1_reproduced(delta: float) -> None:
    n_exc, prompts = TABLE_1[delta]
    assert abs(required_exceedances(delta) - n_exc) <= 1
    assert abs(prompts_required(delta, q=0.95) - prompts) <= 20  # ±1 exceedance at 5 %


def test_eq2_inverts_the_z_test_power() -> None:
    for delta in (0.05, 0.1, 0.2):
        n = required_exceedances(delta, power=0.8)
        assert achieved_power(n, delta) >= 0.8 > achieved_power(n - 2, delta)


# App. E of Zhou (2026), cells checked with M = 160 trials (binomial MC sd ≤ 0.04) and B = 80
APP_E = [
    # (Δξ, n_exc, low, high): null ≤ 5 %; floor ≈ 46 %; 0.15 crosses 80 % in (1000, 1500];
    # 0.20 ≥ 90 % by 1000
    (0.0, 1500, 0.0, 0.05),
    (0.10, 1500, 0.46 - 0.12, 0.46 + 0.12),
    (0.15, 1000, 0.55, 0.85),
    (0.15, 1500, 0.78, 1.0),
    (0.20, 1000, 0.86, 1.0),
]


@pytest.mark.parametrize(("delta", "n_exc", "low", "high"), APP_E)
def test_app_e_operating_characteristics(delta: float, n_exc: int, low: float, high: float) -> None:
    r = simulate_pass_rate(
        delta, n_exc, GateSettings(delta_floor=0.10), trials=160, resamples=80, seed=2026
    )
    assert low <= r.rate <= high, (r.rate, r.mc_se)


def test_pass_rate_is_deterministic_and_worker_independent() -> None:
    a = simulate_pass_rate(0.15, 300, trials=12, resamples=30, seed=5, workers=1)
    b = simulate_pass_rate(0.15, 300, trials=12, resamples=30, seed=5, workers=2)
    assert a == b


def test_recovery_grid_shape_and_frontier() -> None:
    g = recovery_grid((0.0, 0.2), (200, 400), trials=6, resamples=20, seed=1)
    assert len(g.cells) == 4 and g.frontier == {0.2: 393}
    assert 0 <= g.rate(0.2, 400) <= 1
    assert g.to_dict()["frontier"] == [{"delta_xi": 0.2, "n_exc": 393}]
