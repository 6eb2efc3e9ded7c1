"""The bulk bootstrap of a large sample from its top block's draws (methods note P12).

Checked three ways: each replicate against an explicit computation from the block's documented
stream (its top draws, its normal deviates and the Cornish–Fisher bottom sum); the replicates'
law against the full draw's (two-sample Kolmogorov–Smirnov) and the mean's against its closed
form; and the paths a replicate can take (the quantile below the block, paired resampling).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from tailgate.stats import bulk_top, risk
from tailgate.stats.gpd import _block_rng, seed_sequence_of
from tailgate.stats.risk import bulk_bootstrap, bulk_bootstrap_scales, tvar

N = 120_000


def _scores(n: int = N, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """A bounded score (probability) and its logit: the registered scales of a skewed sample."""
    latent = np.random.default_rng(seed).logistic(-4.0, 1.0, n)
    return 1.0 / (1.0 + np.exp(-latent)), latent


def _window(n: int, level: float) -> tuple[int, int, int, float]:
    h = (n - 1) * level
    k0 = int(np.floor(h))
    spread = np.sqrt(n * level * (1.0 - level)) + 1.0
    return max(0, int(k0 - risk.WINDOW_SDS * spread)), k0, min(k0 + 1, n - 1), h - k0


def test_each_replicate_is_its_top_draws_and_the_bottom_sums_law() -> None:
    p, logit = _scores()
    level, n_boot, seed = 0.9, 70, 5
    got = bulk_bootstrap_scales({"p": p, "l": logit}, n_boot, seed, tvar_level=level)
    xs = np.stack([np.sort(p), np.sort(logit)])
    lo, _, _, _ = _window(N, level)
    k = N - lo
    low = xs[:, :lo]
    mu, sd = low.mean(axis=1), low.std(axis=1)
    skew = stats.skew(low, axis=1, bias=True)
    chol = np.linalg.cholesky(np.corrcoef(low))
    for b, rows in ((0, 64), (1, n_boot - 64)):
        rng = _block_rng(seed_sequence_of(seed), b)
        n_top = rng.binomial(N, k / N, size=risk.BLOCK)[:rows]  # drawn for the whole block
        z = rng.standard_normal((risk.BLOCK, 2))[:rows] @ chol.T
        idx = rng.integers(0, k, size=int(n_top.sum()), dtype=np.int32)
        starts = np.concatenate([[0], np.cumsum(n_top)])
        for r in (0, 1, rows - 1):
            drawn = idx[starts[r] : starts[r + 1]]
            m = N - n_top[r]
            for s, name in enumerate(("p", "l")):
                top = xs[s, lo + drawn]
                replicate = np.concatenate([np.full(m, xs[s, 0]), top])  # bottom: below u
                want = tvar(replicate, level)
                assert got[name].tvar[64 * b + r] == pytest.approx(want, abs=1e-12)
                cf = z[r, s] + skew[s] / (6 * np.sqrt(m)) * (z[r, s] ** 2 - 1)
                bottom = m * mu[s] + np.sqrt(m) * sd[s] * cf
                assert got[name].mean[64 * b + r] == pytest.approx(
                    (top.sum() + bottom) / N, rel=1e-12
                )


def test_replicates_follow_the_full_draws_law() -> None:
    p, logit = _scores(seed=9)
    n_boot = 1500
    top = bulk_bootstrap_scales({"p": p, "l": logit}, n_boot, 21)
    full = bulk_bootstrap_scales({"p": p, "l": logit}, n_boot, 22, paired=True)
    for name, x in (("p", p), ("l", logit)):
        for what in ("mean", "tvar"):
            a, b = getattr(top[name], what), getattr(full[name], what)
            assert stats.ks_2samp(a, b).pvalue > 1e-3, (name, what)
        # the bootstrap law of the mean: centred at the sample mean with variance var(x)/n
        se = x.std() / np.sqrt(N)
        assert abs(top[name].mean.mean() - x.mean()) < 4 * se / np.sqrt(n_boot)
        assert top[name].mean.std() == pytest.approx(se, rel=0.08)
    # the scales' means move together as the full draw's do
    r_top = np.corrcoef(top["p"].mean, top["l"].mean)[0, 1]
    r_full = np.corrcoef(full["p"].mean, full["l"].mean)[0, 1]
    assert abs(r_top - r_full) < 0.1


def test_a_quantile_below_the_block_draws_every_prompt(monkeypatch) -> None:
    # a zero-width window puts the quantile below the block in about half the replicates; those
    # draw their bottom prompts too, and the law is unchanged
    monkeypatch.setattr(risk, "WINDOW_SDS", 0.0)
    x = np.random.default_rng(3).gamma(2.0, size=N)
    a = bulk_bootstrap(x, 400, seed=8)
    again = bulk_bootstrap(x, 400, seed=8)
    np.testing.assert_array_equal(a.mean, again.mean)
    np.testing.assert_array_equal(a.tvar, again.tvar)
    full = bulk_bootstrap(x, 400, seed=12, paired=True)
    assert stats.ks_2samp(a.tvar, full.tvar).pvalue > 1e-3
    assert stats.ks_2samp(a.mean, full.mean).pvalue > 1e-3


def test_paired_and_small_samples_keep_every_draw(monkeypatch) -> None:
    x = np.random.default_rng(6).normal(size=N)
    paired = bulk_bootstrap(x, 64, seed=2, paired=True)
    monkeypatch.setattr(risk, "TOP_BLOCK_PROMPTS", N + 1)
    every = bulk_bootstrap(x, 64, seed=2)
    np.testing.assert_array_equal(paired.mean, every.mean)
    np.testing.assert_array_equal(paired.tvar, every.tvar)
    monkeypatch.setattr(risk, "TOP_BLOCK_PROMPTS", N)
    assert not np.array_equal(bulk_bootstrap(x, 64, seed=2).mean, every.mean)


def test_top_block_replicates_are_prefix_stable() -> None:
    x = np.random.default_rng(2).exponential(size=N)
    short, longer = bulk_bootstrap(x, 70, seed=1), bulk_bootstrap(x, 130, seed=1)
    np.testing.assert_array_equal(short.mean, longer.mean[:70])
    np.testing.assert_array_equal(short.tvar, longer.tvar[:70])


def test_bottom_moments_and_their_correlation_factor() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=(3, 5000))
    xs = np.sort(np.stack([base[0], base[0] + 0.5 * base[1], np.exp(base[2])]), axis=1)
    bottom = bulk_top.bottom_of(xs, 4000)
    low = xs[:, :4000]
    np.testing.assert_allclose(bottom.mean, low.mean(axis=1), rtol=1e-13)
    np.testing.assert_allclose(bottom.sd, low.std(axis=1), rtol=1e-12)
    np.testing.assert_allclose(bottom.skew, stats.skew(low, axis=1), rtol=1e-10)
    np.testing.assert_allclose(bottom.chol, np.linalg.cholesky(np.corrcoef(low)), atol=1e-12)
    # two scales perfectly correlated (a linear transform): the factor has a zero column
    same = bulk_top.bottom_of(np.stack([xs[0], 2.0 * xs[0] + 1.0]), 4000)
    np.testing.assert_allclose(same.chol, [[1.0, 0.0], [1.0, 0.0]], atol=1e-7)
