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
