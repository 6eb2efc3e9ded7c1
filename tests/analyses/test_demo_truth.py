"""The demo's dominance criteria against known truth: population violation ratios of the
simulated logit-scale severities (negated: larger is safer) by quadrature of their quantile
functions, and the registered tests on samples of the registered sizes drawn from that truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import integrate
from tailgate.analyses.dominance.kind import DOMINANCE
from tailgate.analyses.dominance.spec import settings
from tailgate.analyses.dominance.statistics import dominance_tests_orders
from tailgate.generate.simulate import truth_from_spec
from tailgate.plans.registration import load

DEMO = Path(__file__).resolve().parents[2] / "preregistrations" / "protocol-demo.yaml"


def _population(qa, qb) -> tuple[float, float]:
    """ε_W2, ε_IQ of "a dominates b" for vectorised quantile functions qa, qb (oriented), by
    quadrature on a fine grid dense near both ends (Q₂ by cumulative trapezoids)."""
    t = np.unique(
        np.concatenate(
            [np.geomspace(1e-9, 0.2, 200_000), np.linspace(0.2, 0.8, 100_000),
             1 - np.geomspace(1e-9, 0.2, 200_000)]
        )
    )  # fmt: skip
    d1 = qb(t) - qa(t)
    e1 = integrate.trapezoid(np.maximum(d1, 0) ** 2, t) / integrate.trapezoid(d1**2, t)
    d2 = integrate.cumulative_trapezoid(d1, t, initial=0.0)
    den2 = integrate.trapezoid(d2**2, t)
    e2 = integrate.trapezoid(np.maximum(d2, 0) ** 2, t) / den2 if den2 > 0 else 0.5
    return float(e1), float(e2)


@pytest.fixture(scope="module")
def demo():
    study = load(DEMO)
    spec = study.data["analyses"]["safety-ranking"]
    return study, spec


def _oriented_ppf(study, name):
    truth = truth_from_spec(study.condition(name)["simulate"])
    return lambda t: -truth.ppf(1.0 - t)


def test_population_truth_of_the_registered_pairs(demo):
    study, _ = demo
    e1, e2 = _population(_oriented_ppf(study, "qwen"), _oriented_ppf(study, "nemo"))
    assert e1 < 1e-6 and e2 < 1e-6  # same bulk, heavier tail: qwen dominates nemo outright
    e1, e2 = _population(_oriented_ppf(study, "llama8b"), _oriented_ppf(study, "nemo"))
    assert e1 < 0.05


def test_registered_tests_find_the_truth_on_samples_of_the_registered_size(demo):
    study, spec = demo
    st = settings(spec, study.data)
    rng = np.random.default_rng(7)
    samples = []
    for c in st["conditions"]:
        truth = truth_from_spec(study.condition(c)["simulate"])
        n = study.condition(c)["prompts"]
        samples.append(-truth.ppf(rng.uniform(size=n)))
    res = dominance_tests_orders(
        samples,
        st["orders"],
        300,
        st["alpha"],
        st["eps0"],
        np.random.SeedSequence(1),
        calibration=st["calibration"],
    )
    q, l8, nemo = (st["conditions"].index(c) for c in ("qwen", "llama8b", "nemo"))
    # the registered tests' bounds (calibration as registered) point the way the truth does ...
    assert res[1].delta_ucb[q, nemo] <= 0 and res[1].delta_ucb[l8, nemo] <= 0
    assert res[2].eps_ucb[q, nemo] <= 0.25
    assert res[1].ranks[nemo] == 4
    # ... and no test ever declares a win against the truth
    for t in res.values():
        assert not t.wins[nemo, q] and not t.wins[nemo, l8]
        assert not t.abs_wins[:, nemo, q].any() and not t.abs_wins[:, nemo, l8].any()
    # the distinctness guard (A² and W2 by permutation, on pooled-quantile cells at this size)
    # finds the difference confined to the top 5 % far below α/k² = 0.0031, where the
    # Anderson–Darling asymptotic p alone sat near α/k² (0.0015 here; methods note D8)
    assert res[1].distinct_p[q, nemo] < 0.001
    assert DOMINANCE.kind == spec["kind"]
