"""The distinctness guard of the dominance tests: is F_i = F_j rejected at α′ = α/k²?

A win of the relative or absolute tests (:mod:`.statistics`) also needs the guard to reject,
because where two conditions share a distribution the violation ratio is 0/0 noise (the module
docstring of :mod:`.statistics`). The guard and the bound form an intersection–union test
(Berger 1982), so the guard may use any statistic whose test is exact at F_i = F_j; it should
have power where the ratios look.

- On tied or small samples (pooled ties, or at most 1,000 pooled values) the guard is a
  permutation test, exact for any ties, of two statistics at once: the midrank
  Anderson–Darling A² (Scholz & Stephens 1987, Eq. 7) and the squared Wasserstein-2 distance
  ∫(Q_y − Q_x)² of the two quantile functions — the denominator of ε_W2 (Nitsure et al. (2024),
  Eq. 4), so the guard asks whether the ratio's denominator exceeds what exchangeable labels
  give. A² weighs differences by their rank and finds shifts of the whole distribution; W2
  weighs them by their size on the scores' own scale and finds differences confined to the
  upper tail, where A² has little power (methods note D8). The two are combined by their
  minimum p-value, itself calibrated over the same permutations (the min-p combination of
  Westfall & Young (1993)), so the combined test is exact in size.
- On larger samples without ties, A² alone with its asymptotic p-value (distribution-free
  there; a permutation p at α/k² would cost thousands of draws a pair).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

import numba
import numpy as np

from .quantiles import _pair

__all__ = [
    "ad_permutation",
    "ad_two_sample",
    "distinct_permutation",
    "distinctness",
    "guard_permutations",
]


def _adinf_sf(z: float) -> float:
    """P(A∞ > z) for the asymptotic Anderson–Darling distribution: Marsaglia & Marsaglia
    (2004), "Evaluating the Anderson–Darling distribution", J. Stat. Softw. 9(2), ``ADinf``
    (absolute error < 2·10⁻⁶; the upper tail written with expm1 so small p keep their digits).
    scipy has no p-value for the asymptotic distribution (``anderson_ksamp`` floors its
    interpolated p at 0.001, above the α/k² of k ≥ 8 conditions)."""
    if z <= 0.0:
        return 1.0
    if z < 2.0:
        poly = (
            2.00012
            + (0.247105 - (0.0649821 - (0.0347962 - (0.011672 - 0.00168691 * z) * z) * z) * z) * z
        )
        return 1.0 - np.exp(-1.2337141 / z) / np.sqrt(z) * poly
    g = 1.0776 - (2.30695 - (0.43424 - (0.082433 - (0.008056 - 0.0003146 * z) * z) * z) * z) * z
    return float(-np.expm1(-np.exp(g)))


def _midrank_terms(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Level counts of the pooled sample and the weights of the midrank statistic."""
    levels, counts = np.unique(values, return_counts=True)
    big = float(values.size)
    b_mid = np.cumsum(counts) - counts / 2.0
    den = b_mid * (big - b_mid) - big * counts / 4.0
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(den > 0.0, (counts / big) / den, 0.0)
    return levels, counts, w


def _midrank_a2(f1: np.ndarray, counts: np.ndarray, w: np.ndarray, n1: int, n2: int) -> np.ndarray:
    """Scholz & Stephens (1987), Eq. 7 (A²akN, midranks) for k = 2 from the counts ``f1``
    (…, L) of sample 1 on the L pooled levels; the two samples' terms are equal, hence the
    factor 1/n₁ + 1/n₂ and the symmetry in the samples."""
    big = n1 + n2
    b_mid = np.cumsum(counts) - counts / 2.0
    m_mid = np.cumsum(f1, axis=-1) - f1 / 2.0
    dev = big * m_mid - n1 * b_mid
    return (big - 1) / big * (1.0 / n1 + 1.0 / n2) * np.sum(w * dev * dev, axis=-1)


def ad_two_sample(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Two-sample Anderson–Darling statistic with midranks for ties (Scholz & Stephens 1987,
    Eq. 7, A²akN, k = 2; Pettitt 1976 without ties) and its asymptotic p-value (A² → A∞ under
    F = G for continuous data). Symmetric in x and y."""
    x, y = np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()
    levels, counts, w = _midrank_terms(np.concatenate([x, y]))
    f1 = np.bincount(np.searchsorted(levels, x), minlength=levels.size)
    a2 = float(_midrank_a2(f1, counts, w, x.size, y.size))
    return a2, _adinf_sf(a2)


_PERM_CHUNK = 4096
_ASYMPTOTIC_FROM = 1000  # pooled size above which continuous data use the A∞ p-value
_PERM_TOL = 1e-9  # relative tolerance of "permuted statistic ≥ observed"


def _pooled(
    x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The pooled levels, their counts and midrank weights, and the smaller sample's counts
    over them (the first given when sizes are equal), with the two sizes (smaller first): what
    a permutation of the pooled labels needs, the same whichever sample comes first."""
    x, y = np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()
    if y.size < x.size:
        x, y = y, x
    levels, counts, w = _midrank_terms(np.concatenate([x, y]))
    f1 = np.bincount(np.searchsorted(levels, x), minlength=levels.size)
    return levels, counts.astype(np.int64), w, f1, x.size, y.size


def ad_permutation(
    x: np.ndarray, y: np.ndarray, permutations: int, seed: int | np.random.SeedSequence
) -> tuple[float, float]:
    """Midrank Anderson–Darling statistic of F_x = F_y and its permutation p-value
    (1 + #{A²* ≥ A² − tol}) / (P + 1), exact in size for any ties. A permutation of the pooled
    labels only moves counts between the samples within each pooled level, so the permuted
    counts of the smaller sample are one multivariate hypergeometric draw over the levels
    (O(L) per permutation, L distinct values). Drawn for the smaller sample (the first given
    when sizes are equal; the statistic is the same either way), so the result does not
    depend on which sample comes first."""
    _, counts, w, f1, n, m = _pooled(x, y)
    obs = float(_midrank_a2(f1, counts, w, n, m))
    tol = _PERM_TOL * max(1.0, abs(obs))
    hits = 0
    for draws in _draws(counts, n, permutations, seed):
        hits += int(np.count_nonzero(_midrank_a2(draws, counts, w, n, m) >= obs - tol))
    return obs, (1.0 + hits) / (permutations + 1.0)


def _draws(
    counts: np.ndarray, n: int, permutations: int, seed: int | np.random.SeedSequence
) -> Iterator[np.ndarray]:
    """The permuted counts of a sample of ``n`` over the pooled levels' ``counts``, in chunks:
    one multivariate hypergeometric draw a permutation, from one stream of ``seed``."""
    rng = np.random.Generator(np.random.PCG64(seed))
    for start in range(0, permutations, _PERM_CHUNK):
        size = min(_PERM_CHUNK, permutations - start)
        yield rng.multivariate_hypergeometric(counts, n, size=size, method="marginals")


@numba.njit(cache=True, parallel=True)
def _w2_of_counts(levels, draws, counts, n, m, out):  # pragma: no cover - compiled
    """∫(Q_y − Q_x)² for each row of ``draws`` (sample x's counts over ``levels``; sample y
    holds the rest of ``counts``): one independent pass a row, so any thread count gives the
    same numbers."""
    for r in numba.prange(draws.shape[0]):
        acc = np.empty(4)
        _pair(levels, draws[r], n, levels, counts - draws[r], m, acc)
        out[r] = acc[0] + acc[1]


def _at_least_counts(values: np.ndarray) -> np.ndarray:
    """For each value, how many of ``values`` are at least it (less a relative tolerance)."""
    ordered = np.sort(values)
    floor = values - _PERM_TOL * np.maximum(1.0, np.abs(values))
    return values.size - np.searchsorted(ordered, floor, side="left")


def distinct_permutation(
    x: np.ndarray, y: np.ndarray, permutations: int, seed: int | np.random.SeedSequence
) -> float:
    """The guard's permutation p-value of F_x = F_y (module docstring): the midrank A² and the
    squared Wasserstein-2 distance on the same ``permutations`` draws of :func:`ad_permutation`
    (the same stream, so A²'s own p is :func:`ad_permutation`'s), combined by their minimum
    p-value over the observed and permuted labels together: exact in size, symmetric in the
    samples."""
    levels, counts, w, f1, n, m = _pooled(x, y)
    a2, w2 = [], []
    # one chunk of draws at a time (P × L counts at once would not fit at α/k² of many pairs)
    for d in chain([f1[None, :]], _draws(counts, n, permutations, seed)):  # row 0: observed
        a2.append(_midrank_a2(d, counts, w, n, m))
        w2.append(np.empty(len(d)))
        _w2_of_counts(levels, np.ascontiguousarray(d, np.int64), counts, n, m, w2[-1])
    # each labelling's smaller p, as counts of labellings at least as extreme (row 0: observed)
    least = np.minimum(_at_least_counts(np.concatenate(a2)), _at_least_counts(np.concatenate(w2)))
    return float(np.count_nonzero(least <= least[0]) / least.size)


def guard_permutations(alpha_pair: float) -> int:
    """Permutations of the guard at level α′: enough that p can fall to α′/20."""
    return max(999, int(np.ceil(20.0 / alpha_pair)))


def _pair_seed(seed: int | np.random.SeedSequence, i: int, j: int) -> np.random.SeedSequence:
    base = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, 0x6775617264, i, j))


def distinctness(
    samples: Sequence[np.ndarray],
    alpha_pair: float | None = None,
    seed: int | np.random.SeedSequence = 0,
) -> np.ndarray:
    """p-values of F_i = F_j for every pair (the guard; NaN on the diagonal): where the pair's
    pooled sample has ties or at most 1,000 values, the permutation p of A² and W2 combined
    (:func:`distinct_permutation`, ``guard_permutations(α′)`` draws, a stream per pair from
    ``seed``); for larger samples without ties the midrank Anderson–Darling statistic's
    asymptotic p (module docstring). ``alpha_pair`` None: the asymptotic p always."""
    k = len(samples)
    out = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(i + 1, k):
            x, y = samples[i], samples[j]
            pooled = np.concatenate([x, y])
            exact = np.unique(pooled).size < pooled.size or pooled.size <= _ASYMPTOTIC_FROM
            if exact and alpha_pair is not None:
                p = distinct_permutation(
                    x, y, guard_permutations(alpha_pair), _pair_seed(seed, i, j)
                )
            else:
                p = ad_two_sample(x, y)[1]
            out[i, j] = out[j, i] = p
    return out
