"""P1's intervals in the whole-procedure simulation at the registered resolution.

At P1's level under Bonferroni (0.995 in the demo) the percentile interval's endpoints are the
0.25 % and 99.75 % quantiles of the bootstrap replicates; with 100 replicates they sit too far
in, and the simulated power runs about twice the procedure's. ``tailgate design`` therefore uses
the observed-information Wald interval as a stand-in; these tests check it against the
percentile interval at the registered 10,000 resamples — interval by interval, and decision by
decision through the whole registered procedure of the demo on common data.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from tailgate.protocol.design import operating_characteristics
from tailgate.protocol.gates import GateSettings
from tailgate.protocol.recovery import simulate_pass_rate
from tailgate.protocol.simulated_p1 import normal_cis, percentile_cis
from tailgate.stats import gpd
from tailgate.stats.gof import sample_gpd

LEVEL, REGISTERED_B = 0.995, 10_000


def test_stand_in_interval_matches_the_registered_percentile_interval() -> None:
    """1,500 exceedances (the demo's at q = 0.95), ξ = 0 and 0.15: every stand-in endpoint within
    0.03 of the 10,000-resample percentile endpoint, mean offsets below 0.01 and equal at both
    ends within 0.01 (so the gap P1 reads is unbiased); 100 resamples narrow the interval by more
    than 0.01 on average (the defect)."""
    rng = np.random.default_rng(20260615)
    for xi in (0.0, 0.15):
        y = np.stack([sample_gpd(rng, xi, 1.0, 1500) for _ in range(6)])
        rows = np.arange(y.shape[0])
        fits = gpd.fit_rows(y)
        stand_in = normal_cis(y, fits, rows, LEVEL)
        rngs = [np.random.default_rng([7, i]) for i in rows]
        _, full = percentile_cis(y, REGISTERED_B, [LEVEL], rngs, workers=2)
        _, few = percentile_cis(y, 100, [LEVEL], rngs, workers=2)
        full, few = full[:, 0, :], few[:, 0, :]
        offset = stand_in - full
        assert np.all(np.abs(offset) < 0.03), offset
        assert np.all(np.abs(offset.mean(axis=0)) < 0.01), offset.mean(axis=0)
        assert abs(offset[:, 1].mean() - offset[:, 0].mean()) < 0.01
        width = (full[:, 1] - full[:, 0]).mean()
        assert (few[:, 1] - few[:, 0]).mean() < width - 0.01


@pytest.mark.slow
def test_procedure_decisions_match_a_direct_simulation_at_the_registered_resamples(
    demo_study,
) -> None:
    """The demo's whole registered procedure at Δξ = 1.5 × Δfloor, 16 trials on common data: P1's
    percentile bootstrap at the registered 10,000 resamples against the stand-in. Their PASS
    counts differ by at most 2 and at most 3 trials disagree (measured: 40 trials at Δfloor and
    1.5 × Δfloor, 1 and 3 disagreements; 100 resamples instead: 6 and 14, all extra passes)."""
    kwargs = {"workers": 2, "trials": 16, "factors": (1.5,)}
    registered = operating_characteristics(demo_study, resamples=REGISTERED_B, **kwargs)
    stand_in = operating_characteristics(demo_study, resamples=None, **kwargs)
    assert "observed-information" in stand_in.p1_interval
    a = set(registered.scenarios[0].passed_trials["any"])
    b = set(stand_in.scenarios[0].passed_trials["any"])
    assert len(a) >= 2, "the truth must give the bootstrap something to pass"
    assert abs(len(a) - len(b)) <= 2 and len(a ^ b) <= 3, (sorted(a), sorted(b))


@pytest.mark.slow
def test_recovery_grid_decisions_match_a_direct_simulation_at_the_registered_resamples() -> None:
    """The App. E cell at the demo's design point (1,500 exceedances, Δξ = 1.5 × Δfloor, P1 at
    0.995 under Bonferroni over 10 pairs), 16 trials on common data: the stand-in's PASS
    decisions against P1's percentile bootstrap at the registered 10,000 resamples. Measured at
    40 trials: 16 and 17 passes, 1 disagreement (at the floor 6 and 5, 1); 80 resamples, App. E's
    own B: 28 passes, 11 disagreements (10 and 5 at the floor), all of them extra passes."""
    settings = GateSettings(multiplicity="bonferroni", n_pairs=10)
    assert settings.ci_level == LEVEL
    runs = {
        b: simulate_pass_rate(0.15, 1500, settings, trials=16, resamples=b, seed=3, workers=2)
        for b in (REGISTERED_B, None, 80)
    }
    registered, stand_in, few = (set(runs[b].passed) for b in (REGISTERED_B, None, 80))
    assert "observed-information" in runs[None].p1 and runs[None].resamples is None
    assert len(registered) >= 2, "the truth must give the bootstrap something to pass"
    assert abs(len(registered) - len(stand_in)) <= 2 and len(registered ^ stand_in) <= 3
    assert len(few) >= len(registered)  # too few resamples: too narrow, never more careful


@pytest.mark.parametrize("method", ["profile", "lr_test"])
def test_recovery_grid_applies_the_registered_p1_method(method: str) -> None:
    """P1 by the registered likelihood method in the App. E grid, on common data with the
    percentile interval's stand-in: non-overlap of profile-likelihood intervals decides as the
    normal intervals do in most trials (asymptotically the same rule); the likelihood-ratio test
    at α is the more powerful rule (non-overlap of two 95 % intervals is a test at about 0.006),
    so it passes nearly every trial the intervals pass, and more. The grid records how P1 was
    computed and carries no bootstrap size."""
    base = GateSettings()
    other = dataclasses.replace(base, p1_method=method)
    a = simulate_pass_rate(0.25, 600, base, trials=30, resamples=None, seed=9)
    b = simulate_pass_rate(0.25, 600, other, trials=30, resamples=None, seed=9)
    assert b.resamples is None and "as registered" in b.p1
    assert 5 <= len(a.passed) <= 27
    if method == "profile":
        assert len(set(a.passed) ^ set(b.passed)) <= 4, (a.passed, b.passed)
    else:
        assert len(set(a.passed) - set(b.passed)) <= 1 < len(set(b.passed) - set(a.passed))
    null = simulate_pass_rate(0.0, 600, other, trials=30, resamples=None, seed=9)
    assert null.passes <= 2  # P2's floor and P1's level both hold at the null
