"""The distinctness guard of the dominance tests: is F_i = F_j rejected at α′ = α/k²?

A win of the relative or absolute tests (:mod:`.statistics`) also needs the guard to reject,
because where two conditions share a distribution the violation ratio is 0/0 noise (the module
docstring of :mod:`.statistics`). The guard and the bound form an intersection–union test
(Berger 1982), so the guard may use any statistic whose test is exact at F_i = F_j; it should
have power where the ratios look.

The guard is one test at every sample size: a permutation test, exact for any ties, of two
statistics at once: the midrank Anderson–Darling A² (Scholz & Stephens 1987, Eq. 7) and the
squared Wasserstein-2 distance ∫(Q_y − Q_x)² of the two quantile functions — the denominator of
ε_W2 (Nitsure et al. (2024), Eq. 4), so the guard asks whether the ratio's denominator exceeds
what exchangeable labels give. A² weighs differences by their rank and finds shifts of the
whole distribution; W2 weighs them by their size on the scores' own scale and finds differences
confined to the upper tail, where A² has little power (methods note D8). The two are combined by
their minimum p-value, itself calibrated over the same permutations (the min-p combination of
Westfall & Young (1993)), so the combined test is exact in size.

- **Cells.** Where the pooled sample has more than 1,000 distinct values, both statistics are
  computed on at most 1,000 cells of pooled quantiles (tied values kept together, each cell
  valued at the mean of its pooled values). The cells depend on the pooled sample only, which a
  permutation of the labels leaves unchanged, so the test stays exact, and a draw costs O(1,000)
  whatever n: up to 1,000 values nothing is merged, just above it almost nothing, so power
  moves smoothly with n (the A² asymptotic p used above 1,000 values before lost the tail).
- **Early stop.** Draws come in chunks of 64, 128, … (one stream, so the draws are those of a
  single run of P). Every permuted labelling with A²* ≥ A² (or W2* ≥ W2) is at least as extreme
  as the observed one in the min-p order when A² (W2) gives the observed labelling its smaller
  p, so min(#A²* ≥ A², #W2* ≥ W2) bounds the min-p count from below; once it exceeds α′(P + 1),
  p > α′ is settled and the draws stop: the decision is the full P draws' (a curtailed test in
  the sense of Besag & Clifford (1991)), and p is then the min-p of the draws made, itself
  above α′. Equal or near-equal pairs stop after a few hundred draws; distinct ones run all P.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain

import numba
import numpy as np

from tailgate.seeds import child_sequence

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


def _weights(counts: np.ndarray) -> np.ndarray:
    """The weights of the midrank statistic over pooled levels of these counts."""
    big = float(counts.sum())
    b_mid = np.cumsum(counts) - counts / 2.0
    den = b_mid * (big - b_mid) - big * counts / 4.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0.0, (counts / big) / den, 0.0)


def _midrank_terms(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Level counts of the pooled sample and the weights of the midrank statistic."""
    levels, counts = np.unique(values, return_counts=True)
    return levels, counts, _weights(counts)


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
_FIRST_CHUNK = 64  # draws before the first look at whether the decision is settled
_MAX_LEVELS = 1000  # pooled levels above which the guard works on pooled-quantile cells
_PERM_TOL = 1e-9  # relative tolerance of "permuted statistic ≥ observed"


def _coarsened(
    levels: np.ndarray, counts: np.ndarray, f1: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pooled levels merged into at most ``_MAX_LEVELS`` cells of about equal pooled
    counts (cell c holds the levels whose midrank lies in the c-th of ``_MAX_LEVELS`` equal parts
    of the pooled sample; tied values stay together), each cell's value the mean of its pooled
    values, with the pooled and the smaller sample's counts over the cells. The cells are a
    function of the pooled sample alone, which a permutation of the labels leaves as it is, so
    the permutation test on the cells is exact as well."""
    mid = np.cumsum(counts) - counts / 2.0
    cell = np.floor(mid * _MAX_LEVELS / float(counts.sum())).astype(np.int64)
    starts = np.flatnonzero(np.diff(cell, prepend=-1))
    merged = np.add.reduceat(counts, starts)
    return np.add.reduceat(levels * counts, starts) / merged, merged, np.add.reduceat(f1, starts)


def _pooled(
    x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The pooled levels (pooled-quantile cells where there are more than ``_MAX_LEVELS``:
    :func:`_coarsened`), their counts and midrank weights, and the smaller sample's counts over
    them (the first given when sizes are equal), with the two sizes (smaller first): what a
    permutation of the pooled labels needs, the same whichever sample comes first."""
    x, y = np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()
    if y.size < x.size:
        x, y = y, x
    levels, counts = np.unique(np.concatenate([x, y]), return_counts=True)
    f1 = np.bincount(np.searchsorted(levels, x), minlength=levels.size)
    if levels.size > _MAX_LEVELS:
        levels, counts, f1 = _coarsened(levels, counts, f1)
    return levels, counts.astype(np.int64), _weights(counts), f1, x.size, y.size


def ad_permutation(
    x: np.ndarray, y: np.ndarray, permutations: int, seed: int | np.random.SeedSequence
) -> tuple[float, float]:
    """Midrank Anderson–Darling statistic of F_x = F_y and its permutation p-value
    (1 + #{A²* ≥ A² − tol}) / (P + 1), exact in size for any ties. A permutation of the pooled
    labels only moves counts between the samples within each pooled level, so the permuted
    counts of the smaller sample are one multivariate hypergeometric draw over the levels
    (O(L) per permutation, L distinct values). Drawn for the smaller sample (the first given
    when sizes are equal; the statistic is the same either way), so the result does not
    depend on which sample comes first; on more than 1,000 pooled levels, over their cells
    (module docstring)."""
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
    start, size = 0, _FIRST_CHUNK  # chunks of 64, 128, … draws (the stream is the same)
    while start < permutations:
        size = min(size, _PERM_CHUNK, permutations - start)
        yield rng.multivariate_hypergeometric(counts, n, size=size, method="marginals")
        start, size = start + size, 2 * size


@numba.njit(cache=True)
def _w2_of_counts(levels, draws, counts, n, m, out):  # pragma: no cover - compiled
    """∫(Q_y − Q_x)² for each row of ``draws`` (sample x's counts over ``levels``; sample y
    holds the rest of ``counts``). One thread: the draws cost far more (O(L) hypergeometric
    variates a row against one O(L) pass here), and threads started for every chunk of the
    early stop cost more than they save; the numbers are the same whatever ``--cores``."""
    for r in range(draws.shape[0]):
        acc = np.empty(4)
        _pair(levels, draws[r], n, levels, counts - draws[r], m, acc)
        out[r] = acc[0] + acc[1]


def _at_least_counts(values: np.ndarray) -> np.ndarray:
    """For each value, how many of ``values`` are at least it (less a relative tolerance)."""
    ordered = np.sort(values)
    floor = values - _PERM_TOL * np.maximum(1.0, np.abs(values))
    return values.size - np.searchsorted(ordered, floor, side="left")


def distinct_permutation(
    x: np.ndarray,
    y: np.ndarray,
    permutations: int,
    seed: int | np.random.SeedSequence,
    alpha: float | None = None,
) -> float:
    """The guard's permutation p-value of F_x = F_y (module docstring): the midrank A² and the
    squared Wasserstein-2 distance on the same ``permutations`` draws of :func:`ad_permutation`
    (the same stream, so A²'s own p is :func:`ad_permutation`'s), combined by their minimum
    p-value over the observed and permuted labels together: exact in size, symmetric in the
    samples. With ``alpha``, the draws stop once p > ``alpha`` is settled (module docstring),
    and p is then the combined p of the draws made, itself above ``alpha``."""
    levels, counts, w, f1, n, m = _pooled(x, y)
    a2, w2 = [], []
    settled = np.inf if alpha is None else alpha * (permutations + 1.0)
    hits = np.zeros(2, np.int64)  # labellings with A², W2 ≥ the observed one's
    # one chunk of draws at a time (P × L counts at once would not fit at α/k² of many pairs)
    for d in chain([f1[None, :]], _draws(counts, n, permutations, seed)):  # row 0: observed
        a2.append(_midrank_a2(d, counts, w, n, m))
        w2.append(np.empty(len(d)))
        _w2_of_counts(levels, np.ascontiguousarray(d, np.int64), counts, n, m, w2[-1])
        hits += [np.count_nonzero(a2[-1] >= a2[0][0]), np.count_nonzero(w2[-1] >= w2[0][0])]
        if hits.min() > settled:
            break
    # each labelling's smaller p, as counts of labellings at least as extreme (row 0: observed)
    least = np.minimum(_at_least_counts(np.concatenate(a2)), _at_least_counts(np.concatenate(w2)))
    return float(np.count_nonzero(least <= least[0]) / least.size)


def guard_permutations(alpha_pair: float) -> int:
    """Permutations of the guard at level α′: enough that p can fall to α′/20."""
    return max(999, int(np.ceil(20.0 / alpha_pair)))


def _pair_seed(seed: int | np.random.SeedSequence, i: int, j: int) -> np.random.SeedSequence:
    base = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return child_sequence(base, 0x6775617264, i, j)


def distinctness(
    samples: Sequence[np.ndarray],
    alpha_pair: float | None = None,
    seed: int | np.random.SeedSequence = 0,
) -> np.ndarray:
    """p-values of F_i = F_j for every pair (the guard; NaN on the diagonal): the permutation p
    of A² and W2 combined (:func:`distinct_permutation`, ``guard_permutations(α′)`` draws at
    most, stopping once p > α′ is settled, a stream per pair from ``seed``) at every sample size
    (module docstring). ``alpha_pair`` None: the midrank Anderson–Darling statistic's
    asymptotic p instead, for callers that only need a p of distinct distributions."""
    k = len(samples)
    out = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(i + 1, k):
            x, y = samples[i], samples[j]
            if alpha_pair is None:
                p = ad_two_sample(x, y)[1]
            else:
                perms = guard_permutations(alpha_pair)
                p = distinct_permutation(x, y, perms, _pair_seed(seed, i, j), alpha_pair)
            out[i, j] = out[j, i] = p
    return out
