"""Power at the level the gates apply: the App. E simulation against the gate code itself."""

from __future__ import annotations

import math

import numpy as np
from tailgate.protocol.gates import ConditionSummary, GateSettings, evaluate_pair
from tailgate.protocol.recovery import simulate_pass_rate
from tailgate.stats import gpd
from tailgate.stats.equivalence import BulkEquivalence, EquivalenceResult
from tailgate.stats.gof import sample_gpd
from tailgate.stats.power import achieved_power, required_exceedances


def test_simulated_power_at_the_adjusted_level_matches_the_gate_code() -> None:
    settings = GateSettings(multiplicity="bonferroni", n_pairs=10)
    level, n, dxi, trials, resamples = settings.ci_level, 500, 0.3, 150, 100
    fast = simulate_pass_rate(dxi, n, settings, trials=trials, resamples=resamples, seed=1)
    rng = np.random.default_rng(2)
    bulk = BulkEquivalence(
        EquivalenceResult("mean", 0, -0.01, 0.01, 0.1, level, 1, False),
        EquivalenceResult("tvar", 0, -0.01, 0.01, 0.2, level, 1, False),
        0.9,
    )
    passes = 0
    for m in range(trials):
        sums = []
        for name, xi in (("a", 0.0), ("b", dxi)):
            y = sample_gpd(rng, xi, 1.0, n)
            boot = gpd.bootstrap(y, resamples, seed=2 * m + (name == "b"))
            lo, hi = boot.ci(level)
            sums.append(
                ConditionSummary(
                    name, 0.95, 1.0, n, boot.fit.xi, boot.fit.sigma, boot.fit.status,
                    lo, hi, level, 0.5, boot.fit.xi, boot.fit.xi,
                )
            )  # fmt: skip
        v = evaluate_pair(*sums, bulk, settings)
        passes += v.gate("P1").passed and v.gate("P2").passed
    direct = passes / trials
    se = math.sqrt(fast.rate * (1 - fast.rate) / trials + direct * (1 - direct) / trials)
    assert abs(fast.rate - direct) < 3 * se + 1e-9
    # and the adjusted level costs power against the unadjusted one
    loose = simulate_pass_rate(
        dxi, n, GateSettings(delta_floor=0.1), trials=trials, resamples=resamples, seed=1
    )
    assert loose.rate >= fast.rate


def test_eq2_at_the_gate_level() -> None:
    """Eq. 2 with α/m: n* grows from Table 1's 1,570 (α = 0.05) to 2,422 (α/6) and 2,663 (α/10)."""
    assert required_exceedances(0.10) == 1570
    assert required_exceedances(0.10, alpha=0.05 / 6) == 2422
    assert required_exceedances(0.10, alpha=0.05 / 10) == 2663
    assert achieved_power(1500, 0.10, alpha=0.005) < 0.5 < achieved_power(1500, 0.10)
