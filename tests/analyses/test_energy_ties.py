"""The energy test of Acharyya et al. (2025) (methods note A8) on repeated responses: with
one-hot embeddings of a few answer categories many relabellings give exactly the observed
statistic, and the permutation p-value must count them. The reference computes every relabelled
statistic exactly, in rational arithmetic from the category counts, and replays the same
permutations; the p-values must agree exactly, and the size must hold."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from tailgate.analyses.perturbation import statistics as P
from tailgate.stats.gpd import seed_sequence_of


def _one_hot(categories: np.ndarray, k: int) -> np.ndarray:
    return np.eye(k)[categories]


def _exact_kernel(cx: np.ndarray, cy: np.ndarray) -> Fraction:
    """E/(√2·n1·n2/(n1 + n2)) exactly: one-hot rows are √2 apart across categories, 0 within."""
    n1, n2 = int(cx.sum()), int(cy.sum())
    xy = n1 * n2 - int(cx @ cy)
    xx = n1 * n1 - int(cx @ cx)
    yy = n2 * n2 - int(cy @ cy)
    return Fraction(2 * xy, n1 * n2) - Fraction(xx, n1 * n1) - Fraction(yy, n2 * n2)


def _exact_pvalue(cat: np.ndarray, n1: int, k: int, resamples: int, seed: int) -> float:
    """Replays the permutations of :func:`energy_test` and compares exactly."""
    N = len(cat)
    observed = _exact_kernel(np.bincount(cat[:n1], minlength=k), np.bincount(cat[n1:], minlength=k))
    gen = np.random.Generator(np.random.PCG64(seed_sequence_of(seed)))
    exceed = done = 0
    while done < resamples:
        size = min(P.PERMUTATION_CHUNK, resamples - done)
        order = gen.permuted(np.tile(np.arange(N), (size, 1)), axis=1)
        for row in order:
            inside = np.zeros(N, dtype=bool)
            inside[row[:n1]] = True
            cx = np.bincount(cat[inside], minlength=k)
            cy = np.bincount(cat[~inside], minlength=k)
            exceed += _exact_kernel(cx, cy) >= observed
        done += size
    return (1 + exceed) / (resamples + 1)


def test_energy_pvalue_counts_tied_relabellings_exactly() -> None:
    rng = np.random.default_rng(20261124)
    k, n1, n2, resamples = 3, 25, 35, 199
    for trial in range(12):
        cat = rng.integers(0, k, n1 + n2)
        emb = _one_hot(cat, k)
        res = P.energy_test(emb[:n1], emb[n1:], resamples, seed=trial)
        assert res.pvalue == _exact_pvalue(cat, n1, k, resamples, trial), trial


def test_energy_test_holds_its_size_on_one_hot_responses() -> None:
    rng = np.random.default_rng(7)
    k, n, resamples, alpha, M = 3, 20, 99, 0.10, 400
    rejections = 0
    for trial in range(M):
        cat = rng.choice(k, size=2 * n, p=[0.6, 0.3, 0.1])
        emb = _one_hot(cat, k)
        rejections += P.energy_test(emb[:n], emb[n:], resamples, seed=trial).pvalue <= alpha
    rate = rejections / M
    # a permutation p-value with ties counted is valid: P(p ≤ α) ≤ α; 2 MC s.e. of slack
    assert rate <= alpha + 2.0 * np.sqrt(alpha * (1 - alpha) / M), rate


def all_pairs_energy_test(x: np.ndarray, y: np.ndarray, resamples: int, seed: int):
    """The energy test over all N² distances with 0/1 labels, relabelling by relabelling: what
    :func:`energy_test` computed before it saw each distinct response once."""
    from scipy.spatial import distance

    pooled = np.vstack([x, y]).astype(np.float64)
    n1, N = len(x), len(pooled)
    D = distance.cdist(pooled, pooled)
    r = D.sum(axis=1)

    def stat(U: np.ndarray) -> np.ndarray:
        return P._energy_from_labels(D, r, U, n1, N - n1, r.sum())

    identity = np.zeros((N, 1))
    identity[:n1, 0] = 1.0
    observed = float(stat(identity)[0])
    threshold = observed - P.ENERGY_TIE_TOLERANCE * max(1.0, abs(observed))
    gen = np.random.Generator(np.random.PCG64(seed_sequence_of(seed)))
    exceed = done = 0
    while done < resamples:
        size = min(P.PERMUTATION_CHUNK, resamples - done)
        order = gen.permuted(np.tile(np.arange(N), (size, 1)), axis=1)
        U = np.zeros((N, size))
        U[order[:, :n1].T, np.arange(size)[None, :]] = 1.0
        exceed += int(np.count_nonzero(stat(U) >= threshold))
        done += size
    return observed, (1 + exceed) / (resamples + 1)


def test_energy_test_on_distinct_responses_gives_the_all_pairs_bits() -> None:
    """Repeated responses (a few distinct embeddings, as binary answers give) and all-distinct
    ones: the statistic's bits and the p-value are those of the all-pairs computation."""
    rng = np.random.default_rng(20261129)
    for trial, (k, d, n1, n2) in enumerate(
        [(2, 16, 60, 340), (5, 3, 45, 45), (40, 384, 70, 90), (None, 8, 50, 70)]
    ):
        if k is None:
            emb = rng.normal(size=(n1 + n2, d))
        else:
            emb = (rng.normal(size=(k, d)) * 3.0)[rng.integers(0, k, n1 + n2)]
            emb[: n1 // 2] += 0.5 * (trial % 2)  # a shift in some of the first sample
        emb = emb.astype(np.float32)  # the stored embeddings' precision
        res = P.energy_test(emb[:n1], emb[n1:], 299, seed=trial)
        observed, pvalue = all_pairs_energy_test(emb[:n1], emb[n1:], 299, trial)
        assert res.statistic.hex() == observed.hex(), trial
        assert res.pvalue == pvalue, trial


def test_energy_relabellings_sum_over_the_distinct_responses(monkeypatch) -> None:
    """500 + 8,000 responses of two texts: each relabelling is a sum over 2 × 2 distances."""
    seen: list[tuple[int, ...]] = []
    plain = P._energy_from_labels

    def spy(D: np.ndarray, *args: object) -> np.ndarray:
        seen.append(D.shape)
        return plain(D, *args)

    monkeypatch.setattr(P, "_energy_from_labels", spy)
    rng = np.random.default_rng(5)
    two = rng.normal(size=(2, 16))
    x, y = two[rng.integers(0, 2, 500)], two[rng.integers(0, 2, 8000)]
    P.energy_test(x, y, 999, seed=1)
    assert seen == [(8500, 8500)] + [(2, 2)] * 4  # the observed E, then 4 chunks of 256
