"""Thresholds, TVaR and CI-inside-band equivalence (G1, G2 of Zhou (2026))."""

from __future__ import annotations

import numpy as np
import pytest
from tailgate.stats import risk
from tailgate.stats.equivalence import BulkEquivalence, bulk_equivalence, ci_inside_band
from tailgate.stats.gpd import _block_rng, seed_sequence_of
from tailgate.stats.risk import bulk_bootstrap, bulk_bootstrap_scales, exceedances, tvar


def test_threshold_and_exceedances_use_linear_quantile() -> None:
    x = np.arange(1.0, 101.0)
    ex = exceedances(x, 0.95)
    assert ex.u == pytest.approx(95.05)  # (N − 1)q = 94.05 → 95 + 0.05
    assert ex.n_exc == 5 and np.all(ex.y > 0) and ex.y[0] == pytest.approx(0.95)


def test_tvar_closed_form_for_exponential() -> None:
    # TVaR_q of Exp(1) is −log(1 − q) + 1
    x = np.random.default_rng(0).exponential(1.0, 400_000)
    assert tvar(x, 0.9) == pytest.approx(np.log(10) + 1, rel=5e-3)


def test_bulk_bootstrap_matches_direct_resampling() -> None:
    x = np.random.default_rng(1).normal(size=500)
    b = bulk_bootstrap(x, 70, seed=3)
    idx = _block_rng(seed_sequence_of(3), 1).integers(0, 500, size=(64, 500))
    for r in (0, 5):
        xr = x[idx[r]]
        assert b.mean[64 + r] == pytest.approx(xr.mean(), abs=1e-12)
        assert b.tvar[64 + r] == pytest.approx(tvar(xr, 0.9), abs=1e-12)


def _direct_replicates(x: np.ndarray, n_boot: int, seed: int, level: float = 0.9):
    """Reference: resample explicitly (the documented block streams) and use tvar() per row."""
    n = x.size
    means, tvars = [], []
    for b in range(-(-n_boot // risk.BLOCK)):
        idx = _block_rng(seed_sequence_of(seed), b).integers(0, n, size=(risk.BLOCK, n))
        for row in idx[: n_boot - b * risk.BLOCK]:
            means.append(x[row].mean())
            tvars.append(tvar(x[row], level))
    return np.array(means), np.array(tvars)


@pytest.mark.parametrize("window_sds", [risk.WINDOW_SDS, 0.0])
def test_every_replicate_matches_direct_resampling_with_ties(monkeypatch, window_sds) -> None:
    # ties at the quantile (values on a grid of 40), an odd n, a partial last block; with a
    # zero-width TVaR window most blocks take the all-ranks path, which must agree as well
    monkeypatch.setattr(risk, "WINDOW_SDS", window_sds)
    x = np.round(np.random.default_rng(7).gamma(2.0, size=333) * 4.0) / 4.0
    assert np.unique(x).size < 60
    b = bulk_bootstrap(x, 150, seed=11, tvar_level=0.8)
    mean, tv = _direct_replicates(x, 150, 11, 0.8)
    np.testing.assert_allclose(b.mean, mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.tvar, tv, rtol=0, atol=1e-12)
    assert b.estimate_mean == pytest.approx(x.mean()) and b.estimate_tvar == tvar(x, 0.8)


def test_scales_share_resamples_and_equal_single_scale_runs() -> None:
    p = np.random.default_rng(2).beta(0.5, 4.0, size=2_001)
    logit = np.log(p) - np.log1p(-p)
    both = bulk_bootstrap_scales({"probability": p, "logit": logit}, 200, seed=5)
    for name, x in (("probability", p), ("logit", logit)):
        alone = bulk_bootstrap(x, 200, seed=5)
        np.testing.assert_array_equal(both[name].mean, alone.mean)
        np.testing.assert_array_equal(both[name].tvar, alone.tvar)


def test_same_seed_resamples_aligned_conditions_paired() -> None:
    x = np.random.default_rng(3).normal(size=1_000)
    a = bulk_bootstrap(x, 128, seed=9)
    shifted = bulk_bootstrap(x + 0.25, 128, seed=9)
    other = bulk_bootstrap(x + 0.25, 128, seed=10)
    np.testing.assert_allclose(shifted.mean - a.mean, 0.25, atol=1e-12)
    np.testing.assert_allclose(shifted.tvar - a.tvar, 0.25, atol=1e-12)
    assert np.std(other.mean - a.mean) > 0.01


def test_bulk_bootstrap_is_reproducible_and_prefix_stable() -> None:
    x = np.random.default_rng(4).exponential(size=5_000)
    a = bulk_bootstrap(x, 200, seed=1)
    b = bulk_bootstrap(x, 200, seed=1)
    longer = bulk_bootstrap(x, 300, seed=1)
    np.testing.assert_array_equal(a.mean, b.mean)
    np.testing.assert_array_equal(a.tvar, b.tvar)
    # replicate r depends only on (seed, r), not on n_boot (complete blocks compare exactly)
    np.testing.assert_array_equal(a.mean[:192], longer.mean[:192])
    np.testing.assert_array_equal(a.tvar[:192], longer.tvar[:192])


@pytest.mark.parametrize("n_boot", [3, 9, 17, 130])
def test_replicates_do_not_depend_on_the_run_length_or_blas_threads(n_boot) -> None:
    # replicate r is fixed by (seed, r): a run cut inside a block gives the first replicates
    # of a longer run bit for bit, whatever BLAS's thread count (the sums are the kernel's own)
    from threadpoolctl import threadpool_limits

    x = np.random.default_rng(12).logistic(size=30_001)
    with threadpool_limits(limits=1, user_api="blas"):
        short = bulk_bootstrap(x, n_boot, seed=2)
    with threadpool_limits(limits=2, user_api="blas"):
        longer = bulk_bootstrap(x, 200, seed=2)
    np.testing.assert_array_equal(short.mean, longer.mean[:n_boot])
    np.testing.assert_array_equal(short.tvar, longer.tvar[:n_boot])


@pytest.mark.parametrize(
    ("scales", "n_boot", "match"),
    [
        ({"a": np.arange(5.0), "b": np.arange(5.0)[::-1]}, 10, "not a monotone transform"),
        ({"a": np.arange(5.0), "b": np.arange(6.0)}, 10, "same prompts"),
        ({"a": np.array([1.0, np.nan, 2.0])}, 10, "NaN or infinite"),
        ({"a": np.arange(5.0)}, 0, "n_boot must be >= 1"),
        ({}, 10, "at least one scale"),
    ],
)
def test_bulk_bootstrap_scales_rejects_bad_input(scales, n_boot, match) -> None:
    with pytest.raises(ValueError, match=match):
        bulk_bootstrap_scales(scales, n_boot, seed=0)


def test_ci_inside_band_decision() -> None:
    reps = np.linspace(-0.05, 0.05, 1001)
    assert ci_inside_band(reps, 0.0, 0.1, 0.95).equivalent
    assert not ci_inside_band(reps + 0.07, 0.07, 0.1, 0.95).equivalent


def test_equivalence_detects_shift_and_paired_is_tighter() -> None:
    rng = np.random.default_rng(4)
    base = rng.normal(size=3000)
    a = base + rng.normal(scale=0.2, size=3000)
    b = base + rng.normal(scale=0.2, size=3000)
    ind = bulk_equivalence(a, b, margin_mean=0.1, margin_tvar=0.2, n_boot=800, seed=1)
    par = bulk_equivalence(a, b, margin_mean=0.1, margin_tvar=0.2, n_boot=800, seed=1, paired=True)
    assert par.mean.equivalent and par.tvar.equivalent
    width = lambda r: r.ci_high - r.ci_low  # noqa: E731
    assert width(par.mean) < 0.5 * width(ind.mean)
    shifted = bulk_equivalence(
        a + 0.3, b, margin_mean=0.1, margin_tvar=0.2, n_boot=400, seed=1, paired=True
    )
    assert not shifted.mean.equivalent and not shifted.tvar.equivalent
    assert BulkEquivalence.from_dict(par.to_dict()) == par
    again = bulk_equivalence(a, b, margin_mean=0.1, margin_tvar=0.2, n_boot=800, seed=1)
    assert again == ind


def test_paired_needs_aligned_arrays() -> None:
    with pytest.raises(ValueError, match="aligned by prompt"):
        bulk_equivalence(np.ones(10), np.ones(11), margin_mean=0.1, margin_tvar=0.2, paired=True)


def test_bad_input_messages() -> None:
    with pytest.raises(ValueError, match="NaN or infinite"):
        exceedances(np.array([1.0, np.nan]), 0.9)
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        tvar(np.ones(5), 1.0)


@pytest.mark.parametrize("n", [1, 2, 7, 500, 1_000_000, 1_610_612_736, 2**31 - 1])
def test_drawn_indices_are_numpys_bounded_integers(n) -> None:
    # the replicates count the indices numpy's Generator.integers draws from the same stream;
    # n = 1.5·2³⁰ rejects a quarter of the draws (Lemire's method), a range of one draws none
    from tailgate.stats.draws import draw_indices

    k = 20_000
    words = np.random.Generator(np.random.PCG64(7)).bit_generator.random_raw(k)
    out = np.empty(k, dtype=np.int32)
    end = draw_indices(words, 0, out, n)
    assert end == 0 if n == 1 else end >= k  # one half a draw, more where draws are rejected
    expected = np.random.Generator(np.random.PCG64(7)).integers(0, n, size=k, dtype=np.int32)
    np.testing.assert_array_equal(out, expected)
    assert draw_indices(words[:10], 0, out, n) == (-1 if n > 1 else 0)  # words run out


def test_a_prompt_drawn_more_than_255_times_is_counted_in_full() -> None:
    # an all-zero stream draws prompt 0 every time (n a power of two: nothing is rejected),
    # past the one-byte counts: the replicate is recounted in a wide buffer
    from tailgate.stats.bulk_replicates import Sample, _replicate_rows

    n = 512
    x = np.stack([np.linspace(-1.0, 1.0, n), np.linspace(0.0, 5.0, n)])
    order = np.arange(n)
    means, tvars = np.empty((2, 1)), np.empty((2, 1))
    words = np.zeros(n, dtype=np.uint64)
    sample = Sample(x, x, order, 0, 459, 460, 0.9)
    done, _ = _replicate_rows(words, 0, 0, sample, np.empty(n, np.uint8), means, tvars)
    assert done == 1
    np.testing.assert_array_equal(means[:, 0], x[:, 0])
    np.testing.assert_array_equal(tvars[:, 0], x[:, 0])
