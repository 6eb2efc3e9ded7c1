"""Top order statistics drawn directly, and the bottom sums' law (methods note P12).

References: the Beta laws of uniform order statistics, closed-form truncated moments, and the
same quantities from full samples sorted (two-sample Kolmogorov–Smirnov).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import ClassVar

import numpy as np
import pytest
from scipy import stats
from tailgate.protocol import operating
from tailgate.protocol.design import ReferencePair
from tailgate.protocol.gates import GateSettings
from tailgate.stats.order_statistics import bottom_law, draw_top


def _uniform(p: np.ndarray) -> np.ndarray:
    return np.asarray(p, dtype=np.float64)


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1.0 - p))


def test_kept_uniforms_follow_their_beta_laws() -> None:
    n, m, trials = 10_000, 500, 400
    law = bottom_law(_uniform, n, m)
    rng = np.random.default_rng(1)
    draws = [draw_top(rng, law, n, m).top for _ in range(trials)]
    smallest = np.array([d[0] for d in draws])
    middle = np.array([d[250] for d in draws])
    largest = np.array([d[-1] for d in draws])
    assert all(np.all(np.diff(d) >= 0) for d in draws[:20])
    # U(k) ~ Beta(k, n + 1 − k)
    for values, k in ((smallest, n - m + 1), (middle, n - m + 251), (largest, n)):
        assert stats.kstest(values, stats.beta(k, n + 1 - k).cdf).pvalue > 1e-3, k


@pytest.mark.parametrize("kept", [0.7, 0.1, 0.01])
def test_bottom_moments_match_closed_forms(kept: float) -> None:
    # v within a few binomial s.d. of its expected value, as a trial's smallest kept uniform
    n = 100_000
    m = int(kept * n)
    v0 = (n - m + 1) / (n + 1)
    sd = np.sqrt(v0 * (1 - v0) / n)
    v = v0 + sd * np.array([-5.0, -1.0, 0.0, 2.0, 5.0])
    # uniform values: E[U^k | U < v] = v^k / (k + 1)
    got = bottom_law(_uniform, n, m).moments(v)
    want = [v**k / (k + 1) for k in range(1, 5)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # logistic values: E[X | X < logit(v)] = (v log v + (1 − v) log(1 − v)) / v
    mean = (v * np.log(v) + (1 - v) * np.log1p(-v)) / v
    np.testing.assert_allclose(bottom_law(_logit, n, m).moments(v)[0], mean, rtol=1e-10)


def test_mean_and_variance_follow_the_full_samples_law() -> None:
    n, m, trials = 20_000, 2_000, 300
    law = bottom_law(_logit, n, m)
    rng = np.random.default_rng(2)
    top = [draw_top(rng, law, n, m) for _ in range(trials)]
    full = [np.sort(_logit(rng.random(n))) for _ in range(trials)]
    for got, want in (
        ([d.mean for d in top], [x.mean() for x in full]),
        ([d.var for d in top], [x.var() for x in full]),
        ([d.top[0] for d in top], [x[n - m] for x in full]),
        ([d.top.sum() for d in top], [x[n - m :].sum() for x in full]),
    ):
        assert stats.ks_2samp(got, want).pvalue > 1e-3
    # the logistic's variance is π²/3; the mean's s.e. is √(π²/3/n)
    means = np.array([d.mean for d in top])
    assert means.std() == pytest.approx(np.sqrt(np.pi**2 / 3 / n), rel=0.12)
    assert np.mean([d.var for d in top]) == pytest.approx(np.pi**2 / 3, rel=0.01)


class Study:
    """What the reference pair reads of a study."""

    rules: ClassVar[SimpleNamespace] = SimpleNamespace(xi_bar=0.1, headline_scale="logit")


def test_the_reference_pairs_quantile_is_its_sampler() -> None:
    pair = ReferencePair(Study, 0.10)
    assert isinstance(pair, operating.QuantileSampler)
    a = pair(np.random.default_rng(4), 0.05, (2, 1000))
    b = pair.quantile(0.05)(np.random.default_rng(4).random((2, 1000)))
    np.testing.assert_array_equal(a, b)


def test_large_samples_are_simulated_by_their_top(monkeypatch) -> None:
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return draw_top(*args, **kwargs)

    monkeypatch.setattr(operating, "draw_top", counted)
    monkeypatch.setattr(operating, "TOP_DRAW_PROMPTS", 4000)
    settings = GateSettings(
        delta_mu=0.25, delta_tvar=0.5, n_star=100, stability_delta=0.02, stability_tolerance=0.05
    )
    kw = dict(
        band=[0.95, 0.96], headline_q=0.95, band_rule="any", sample=ReferencePair(Study, 0.10),
        delta_xis=[0.0], trials=6, resamples=None, min_side_exceedances=50, seed=5,
    )  # fmt: skip
    operating.simulate_procedure(settings, n_prompts=3999, **kw)
    assert calls == []
    oc = operating.simulate_procedure(settings, n_prompts=4000, **kw)
    assert len(calls) == 12 and oc.scenarios[0].trials == 6  # condition A and one truth
