"""GPD MLE and bootstrap against tight scipy references and simulation with known truth."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.optimize as so
import scipy.stats as st
from tailgate.stats import draws, gpd, parts, profile, profile_sums
from tailgate.stats.gof import sample_gpd
from tailgate.stats.parts import row_parts


def _grid_negll(y: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """−ℓ at the profile's (ξ(θ), σ(θ)) for θ = expm1(η)/max(y) at every η of ``grid``, in closed
    form: ξ(θ) is the mean of log(1 + θy) and σ = ξ/θ, so Σ log(1 + θy) = nξ and
    −ℓ = n(log σ + 1 + ξ) (Grimshaw (1993)); the same values as scipy's log-density summed
    (to 10⁻¹³ relative over the cases below) at a tenth of its cost."""
    ymax = y.max()
    t = np.expm1(grid) / ymax
    xi = np.array([np.mean(np.log1p(v * y)) for v in t])
    near = np.abs(t * ymax) <= 1e-12  # θ → 0: the exponential limit, σ = mean(y)
    sigma = np.where(near, np.mean(y), xi / np.where(near, 1.0, t))
    return y.size * (np.log(sigma) + 1.0 + np.where(near, 0.0, xi))


def _reference_xi(y: np.ndarray) -> tuple[float, float, float]:
    """Tight bounded-Brent maximisation of scipy's GPD log-likelihood over θ = ξ/σ (profile),
    bracketed by the best point of a coarse grid in η = log(1 + θ max(y))."""
    ymax = y.max()

    def negll(eta: float) -> float:
        t = math.expm1(eta) / ymax
        xi = float(np.mean(np.log1p(t * y))) if abs(t) > 1e-300 else 0.0
        sigma = xi / t if abs(t * ymax) > 1e-12 else float(np.mean(y))
        return -float(np.sum(st.genpareto.logpdf(y, xi, 0.0, sigma)))

    grid = np.linspace(-10, 20, 301)
    vals = _grid_negll(y, grid)
    k = int(np.nanargmin(vals))
    res = so.minimize_scalar(
        negll,
        bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 300)]),
        method="bounded",
        options={"xatol": 1e-12},
    )
    t = math.expm1(res.x) / ymax
    xi = float(np.mean(np.log1p(t * y)))
    return xi, xi / t, -res.fun


CASES = [(xi, n) for xi in (-0.45, -0.2, 0.0, 0.1, 0.5, 1.0, 1.5) for n in (50, 1570, 30_000)]


@pytest.mark.parametrize(("xi", "n"), CASES)
def test_fit_matches_tight_reference_and_beats_scipy(xi: float, n: int) -> None:
    rng = np.random.default_rng([17, n, int(100 * xi) + 100])
    for _ in range(2 if n == 30_000 else 4):
        y = sample_gpd(rng, xi, 2.5, n)
        f = gpd.fit(y)
        assert f.status == "ok" and f.converged
        xi_ref, sigma_ref, ll_ref = _reference_xi(y)
        assert abs(f.xi - xi_ref) < 1e-6
        assert abs(f.sigma / sigma_ref - 1) < 1e-5
        assert f.loglik >= ll_ref - 1e-6 * abs(ll_ref)
        assert f.loglik == pytest.approx(
            np.sum(st.genpareto.logpdf(y, f.xi, 0, f.sigma)), rel=1e-10
        )
        c, _, s = st.genpareto.fit(y, floc=0)
        assert f.loglik >= np.sum(st.genpareto.logpdf(y, c, 0, s)) - 1e-9


def test_exponential_case_is_smooth_through_zero() -> None:
    # data with an MLE extremely close to ξ = 0 is fitted through the series branch
    rng = np.random.default_rng(5)
    y = rng.exponential(3.0, 4000)
    f = gpd.fit(y)
    xi_ref, sigma_ref, _ = _reference_xi(y)
    assert abs(f.xi - xi_ref) < 1e-6 and f.sigma == pytest.approx(sigma_ref, rel=1e-5)


def test_bounded_pile_up_is_a_boundary_fit() -> None:
    # Proposition 1 of Zhou (2026): an atom at the upper bound drives the MLE to ξ = −1
    rng = np.random.default_rng(3)
    y = np.concatenate([rng.uniform(0, 1, 400), np.full(150, 1.0)])
    f = gpd.fit(y)
    assert f.status == "boundary" and not f.converged and f.is_boundary
    assert f.xi == -1.0 and f.sigma == 1.0
    # scipy returns a number below −1 without any warning
    assert st.genpareto.fit(y, floc=0)[0] < -1


@pytest.mark.parametrize(
    ("y", "status"),
    [
        (np.arange(1.0, 6.0), "too_few"),
        (np.full(50, 2.0), "constant"),
        (np.r_[np.ones(20), np.nan], "non_finite"),
        (np.r_[np.arange(1.0, 21.0), np.inf], "non_finite"),
        (np.r_[np.arange(1.0, 21.0), -1.0], "non_positive"),
    ],
)
def test_degenerate_inputs_give_a_status(y: np.ndarray, status: str) -> None:
    f = gpd.fit(y)
    assert f.status == status and not f.converged and math.isnan(f.xi)
    assert gpd.GPDFit.from_dict(f.to_dict()).status == status
    b = gpd.bootstrap(y, 10, seed=0)
    assert b.n_failed == 10 and math.isnan(b.ci().low)


def test_fit_rows_equals_rowwise_fit() -> None:
    rng = np.random.default_rng(8)
    x = sample_gpd(rng, np.array([[-0.3], [0.0], [0.4], [1.2]]), 1.0, (4, 800))
    rows = gpd.fit_rows(x)
    for i in range(4):
        assert rows.xi[i] == pytest.approx(gpd.fit(x[i]).xi, abs=1e-8)


def test_bootstrap_is_deterministic_and_prefix_stable() -> None:
    y = sample_gpd(np.random.default_rng(1), 0.1, 1.0, 600)
    a = gpd.bootstrap(y, 300, seed=42, workers=1)
    b = gpd.bootstrap(y, 300, seed=42, workers=2)
    c = gpd.bootstrap(y, 150, seed=np.random.SeedSequence(42))
    d = gpd.bootstrap(y, 300, seed=43)
    np.testing.assert_array_equal(a.xi, b.xi)
    np.testing.assert_array_equal(a.xi[:150], c.xi)
    assert not np.array_equal(a.xi, d.xi)
    g1 = gpd.bootstrap(y, 50, seed=np.random.default_rng(9))
    g2 = gpd.bootstrap(y, 50, seed=np.random.default_rng(9))
    np.testing.assert_array_equal(g1.xi, g2.xi)


def test_chunked_rows_give_the_same_replicates_and_fits(monkeypatch) -> None:
    # a block's rows are refitted a few at a time (bounded memory): every replicate and row fit
    # must be the same bits as with the whole block at once, boundary rows included
    y = sample_gpd(np.random.default_rng(5), -0.9, 1.0, 60)
    x = sample_gpd(np.random.default_rng(6), np.linspace(-0.9, 1.0, 37)[:, None], 1.0, (37, 60))
    whole = gpd.bootstrap(y, 300, seed=3, workers=2), gpd.fit_rows(x)
    monkeypatch.setattr(parts, "PART_ELEMENTS", 7 * 60 - 1)
    in_parts = gpd.bootstrap(y, 300, seed=3, workers=2), gpd.fit_rows(x)
    assert whole[0].n_boundary > 0 and np.count_nonzero(whole[1].status != 0) > 0
    for a, b in zip(whole, in_parts, strict=True):
        for k in ("xi", "sigma", "status"):
            np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


def test_bootstrap_replicates_equal_scalar_fits_of_the_same_resamples() -> None:
    y = sample_gpd(np.random.default_rng(2), -0.2, 1.0, 300)
    b = gpd.bootstrap(y, 40, seed=7)
    idx = gpd._block_rng(gpd.seed_sequence_of(7), 0).integers(0, y.size, size=(gpd.BLOCK, y.size))
    for r in range(0, 40, 7):
        assert b.xi[r] == pytest.approx(gpd.fit(y[idx[r]]).xi, abs=1e-8)


@pytest.mark.parametrize("xi", [-0.4, 0.0, 0.3, 1.0])
def test_bootstrap_replicates_are_their_resamples_mle_to_1e_10(xi: float) -> None:
    # each replicate starts from its sums at the full-sample fit, gathered with its draws, and
    # takes Halley steps: the answer is its resample's maximum (the tight bounded-Brent
    # reference, refined by Newton on the profile) to 1e-10, as with Newton steps from a pass
    y = sample_gpd(np.random.default_rng([3, int(10 * xi) + 10]), xi, 1.0, 2000)
    b = gpd.bootstrap(y, 12, seed=5)
    idx = gpd._block_rng(gpd.seed_sequence_of(5), 0).integers(0, y.size, size=(gpd.BLOCK, y.size))
    x = y[idx[:12]]
    ref = profile.newton_rows(x, np.full(12, b.fit.theta), tol=1e-16, max_iter=300)
    assert np.all(ref.status == 0) and np.all(b.status == 0)
    np.testing.assert_allclose(b.xi, ref.xi, rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.sigma, _sigmas(x, ref), rtol=1e-8)
    assert abs(b.xi[0] - _reference_xi(x[0])[0]) < 1e-6


def _sigmas(x: np.ndarray, res: profile.NewtonResult) -> np.ndarray:
    near = np.abs(res.t) * x.max(axis=1) < 1e-8
    return np.where(near, x.mean(axis=1), res.xi / np.where(near, 1.0, res.t))


def test_gathered_sums_are_the_sums_of_the_drawn_rows() -> None:
    y = sample_gpd(np.random.default_rng(4), 0.2, 1.0, 501)
    table = np.column_stack([y, np.log1p(0.3 * y), -np.sqrt(y)])
    a = draws.IndexStream(np.random.default_rng(6), y.size)
    x, sums, largest = a.take_sums(table, 5)
    idx = np.random.default_rng(6).integers(0, y.size, size=(5, y.size), dtype=np.int32)
    np.testing.assert_array_equal(x, y[idx])
    drawn = table[idx]
    want = [drawn[..., 1].sum(axis=1)] + [(drawn[..., 2] ** k).sum(axis=1) for k in (1, 2, 3)]
    np.testing.assert_allclose(sums, np.stack(want, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(largest, x.max(axis=1))


def test_profile_sums_are_the_c_librarys_log1p_summed_in_four_lanes_of_the_rows_asked() -> None:
    x = sample_gpd(np.random.default_rng(8), -0.3, 1.0, (3, 11))
    t = np.array([0.7, -0.2, 0.7, 1e-3])
    rows = np.array([2, 0, 0, 1])
    got = profile_sums.row_sums(x, t, rows)
    for i, (r, tr) in enumerate(zip(rows, t, strict=True)):
        a = [v * tr for v in x[r]]
        cols = [
            [math.log1p(v) for v in a],
            [v / (1.0 + p) for v, p in zip(x[r], a, strict=True)],
        ]
        cols += [[b * b for b in cols[1]], [b * b * b for b in cols[1]]]
        for k, col in enumerate(cols):
            lanes = [0.0, 0.0, 0.0, 0.0]
            for j, v in enumerate(col[:8]):
                lanes[j % 4] += v
            for v in col[8:]:
                lanes[0] += v
            assert got[i, k] == (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    np.testing.assert_array_equal(profile_sums.row_sums(x[rows], t), got)


def test_profile_third_derivative_is_the_second_derivatives_slope() -> None:
    y = sample_gpd(np.random.default_rng(9), 0.2, 1.0, (1, 3000))
    ymax = y.max(axis=1)
    for t in (0.4, 0.05, -0.5 / ymax[0]):
        h = 1e-5
        d2 = [profile._evaluate(y, np.array([t + e]), ymax)[3][0] for e in (h, -h)]
        d3 = profile._evaluate(y, np.array([t]), ymax)[5][0]
        assert d3 == pytest.approx((d2[0] - d2[1]) / (2 * h), rel=1e-5)


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_bootstrap_ci_covers_truth_at_nominal_rate() -> None:
    # 200 samples of n = 1500 at ξ = 0.2, 90 % percentile CIs from 200 resamples. The percentile
    # method inherits the MLE's O(1/n) bias twice (≈ −0.005 here, sd 0.033), so its expected
    # coverage is ≈ 0.885 rather than 0.90; the band allows that plus ±3 binomial MC sd (0.021).
    rng = np.random.default_rng(2024)
    hits = 0
    trials = 200
    for k in range(trials):
        y = sample_gpd(rng, 0.2, 1.0, 1500)
        lo, hi = gpd.bootstrap(y, 200, seed=k).ci(0.90)
        hits += lo <= 0.2 <= hi
    assert 0.885 - 0.065 < hits / trials < 0.90 + 0.065


def test_boundary_replicates_enter_the_ci_at_minus_one() -> None:
    rng = np.random.default_rng(11)
    y = np.concatenate([rng.uniform(0, 1, 300), np.full(40, 1.0)])
    b = gpd.bootstrap(y, 200, seed=1)
    assert b.n_boundary > 0
    assert np.all(b.xi[b.status == 1] == -1.0)
    assert b.ci(0.95).low == -1.0


@pytest.mark.parametrize(
    ("rows", "size", "multiple"), [(17, 8, 4), (9, 8, 4), (203, 34, 4), (5, 2, 1)]
)
def test_row_parts_cover_the_rows_in_blas_groups(rows, size, multiple) -> None:
    cut = row_parts(rows, size, multiple)
    assert cut[0][0] == 0 and cut[-1][1] == rows
    assert all(a[1] == b[0] for a, b in itertools.pairwise(cut))
    # every part starts on a group boundary; only the last holds the rows left over
    assert all(a % multiple == 0 for a, _ in cut)
    assert all((b - a) % multiple == 0 for a, b in cut[:-1])
    assert cut[-1][1] - cut[-1][0] >= min(multiple, rows)
