"""Almost and relative stochastic dominance with bootstrap tests (Nitsure et al. (2024), the
methods note section D).

Larger outcomes are better throughout (001, Section 2): the analysis negates severities first.

- :func:`violation_ratio` — the exact empirical violation ratios ε_W2 (Eq. 4 of Nitsure et al.
  (2024), first
  order) and ε_IQ (Eq. 5, second order) of "x dominates y". Q = F⁻¹ is a step function and the
  integrated quantile Q₂(p) = ∫₀ᵖ Q is piecewise linear, so both integrals are sums over the
  merged breakpoints of the two step functions: ∫(Q_y − Q_x)² is Σ h·d², and ∫(Q₂,y − Q₂,x)² is
  Σ h(A² + AB + B²)/3 over segments from A to B; a segment that changes sign contributes
  h·A³/(3(A − B)) to the positive part from its positive end (methods note D1). No grid, any sizes.
  ε(x, y) + ε(y, x) = 1; two identical samples give 0.5 (the ratio 0/0, defined so).
- :func:`dominance_tests` — Algorithm 1 of Nitsure et al. (2024) for k samples: ε_ij for all
  ordered pairs, their
  bootstrap standard deviations σ_ij (B resamples; *paired*: the same prompt indices for every
  condition, *independent*: one resample per condition), the one-versus-all ratios
  ε_i = Σ_{j≠i} ε_ij/(k − 1) and Δε_ij = ε_i − ε_j (Eq. 8), and at α′ = α/k² (Bonferroni over
  the k² comparisons, Algorithm 1):
  the absolute ε₀-test "i dominates j" wins when ε_ij + z₁₋α′·σ_ij ≤ ε₀ (Eqs. 11–12), the
  relative test "i R-dominates j" wins when Δε_ij + z₁₋α′·σ^Δ_ij ≤ 0 (Eq. 13). σ is the bootstrap
  sd of the statistic itself, so it is *not* multiplied by √((m+n)/mn) (Eq. 11) or 1/√n
  (Algorithm 1, lines 38/41): that factor is right only for an sd of the √n-scaled statistic
  and would shrink the margin by √n (methods note D2; ``tests/analyses`` checks the size by
  simulation).
  **Distinctness guard** [D,V]. Where two conditions have the same distribution the ratio is
  0/0 noise: ε̂ spreads over [0, 1] (for ε_IQ almost 0 or 1), the bootstrap sd underestimates its
  spread (0.35 vs 0.48 at n = 400) and the normal-theory tests above reject "1 dominates 2"
  in 7.5 % (second order) and 12 % (first order) of samples at a nominal α/k² = 1.25 %. A win
  (relative or absolute) therefore also needs the guard (:mod:`.guard`) to reject F_i = F_j at
  α′; at F_i = F_j this bounds the size by α′ and elsewhere it only removes wins. It is a
  permutation test of the midrank Anderson–Darling statistic and the squared Wasserstein-2
  distance together at every sample size (exact for any ties: judge grades, pass/fail; above
  1,000 distinct pooled values on pooled-quantile cells, stopping once p > α′ is settled).
  ``tests/analyses`` checks the size by simulation. (For paired samples the test ignores the
  pairing, which makes it conservative under the usual positive dependence.)
  Ranks are Borda counts of the wins (most wins first; ties broken by the lower one-versus-all
  ratio ε_i, then registration order).
- **Calibration** (``calibration``, methods note D7). ``normal`` is the paper's bound above:
  ε̂ + z·σ̂ (Eqs. 11–12) and Δε̂ + z·σ̂^Δ (Eq. 13). At a null boundary with crossing distributions
  it rejects about twice as often as it should: ε̂ lives on [0, 1] and, second order, is far from
  normal, and its bootstrap sd is smallest exactly where the test rejects (low ε̂). The default
  ``logit_percentile`` is a bootstrap-percentile bound (Efron & Tibshirani 1993, Section 13.3)
  with a normal tail on the logit scale: from the median and the Φ(1) quantile of the B
  replicates ε*, on the logit scale m and u₈₄, the bound is expit(m + z·(u₈₄ − m)), the tail
  scale u₈₄ − m replaced in the absolute test by (u₉₅ − m)/z₀.₉₅ where the 95 % quantile u₉₅
  gives the wider one; the
  relative test uses the same map on (1 + Δε)/2 ∈ [0, 1], so its bound is 2·expit(…) − 1 and
  the win keeps its form (bound ≤ 0). A normal tail, not the empirical quantile: at
  α/k² = 0.05/144 a quantile at 1 − α/k² cannot be read off B = 1,000 replicates; the upper
  half, not the mean and sd of logit ε*, because replicates at exact dominance (ε* = 0) would
  send those to −∞. Post-processing of the same replicates: no extra resampling. It holds the
  level at the boundary where the normal bound exceeds it, possibly not all of it second order
  at n = 2,000, and is wider near exact dominance (``tests/benchmarks/size_table.py``, README).
  It is never below the Φ(z) percentile of the replicates themselves: on capped or graded
  scores they have atoms, and an atom over the median and the Φ(1) quantile left the tail
  scale 0 and the bound at the point estimate (methods note D9).

**Speed** (the hint of issue 11). A bootstrap resample of a sorted sample is a vector of
multinomial counts over the sorted values, so each replicate's quantile and integrated-quantile
functions follow from cumulative counts without sorting again: one numba kernel walks the two
count-weighted step functions of a pair in O(n + m), in parallel over replicates, with one
sequential sum per replicate, so results do not depend on the number of threads. k = 12,
n = 5,000, B = 1,000, both orders, every pair: ``tests/benchmarks/bench_dominance.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
from scipy.special import expit, logit, ndtr, ndtri

from .calibration import CALIBRATIONS, DEFAULT_CALIBRATION
from .guard import (
    ad_permutation,
    ad_two_sample,
    distinct_permutation,
    distinctness,
    guard_permutations,
)
from .quantiles import _pair

__all__ = [
    "CALIBRATIONS",
    "DEFAULT_CALIBRATION",
    "DominanceTests",
    "ad_permutation",
    "ad_two_sample",
    "bootstrap_ratios",
    "borda_ranks",
    "distinct_permutation",
    "distinctness",
    "dominance_from_replicates",
    "dominance_tests",
    "dominance_tests_orders",
    "guard_permutations",
    "logit_percentile_bound",
    "violation_ratio",
]

_LOGIT_CLIP = 1e-6
_UPPER_P = 0.95  # the second tail quantile of logit_percentile_bound (methods note D7)
_UPPER_Z = float(ndtri(_UPPER_P))

_CHUNK = 64  # bootstrap replicates per kernel call (bounds the index buffer: 64 × Σn int32)


@numba.njit(cache=True, parallel=True)
def _replicates(values, perm, off, group, goff, gsize, idx, out):  # pragma: no cover - compiled
    """ε of every ordered pair, both orders, for each replicate r of ``idx`` (r, Σ group sizes):
    out[r, 0, i, j] = ε_W2(X_i, X_j), out[r, 1, i, j] = ε_IQ(X_i, X_j). An all-(−1) row of
    ``idx`` means the original samples (every count 1)."""
    k = off.shape[0] - 1
    reps = idx.shape[0]
    for r in numba.prange(reps):
        cg = np.zeros(goff[-1], np.int64)
        if idx[r, 0] < 0:
            cg[:] = 1
        else:
            for g in range(gsize.shape[0]):
                for t in range(gsize[g]):
                    cg[goff[g] + idx[r, goff[g] + t]] += 1
        counts = np.empty(off[-1], np.int64)
        for c in range(k):
            base = goff[group[c]]
            for t in range(off[c], off[c + 1]):
                counts[t] = cg[base + perm[t]]
        acc = np.empty(4)
        for i in range(k):
            for j in range(i + 1, k):
                _pair(
                    values[off[i] : off[i + 1]],
                    counts[off[i] : off[i + 1]],
                    off[i + 1] - off[i],
                    values[off[j] : off[j + 1]],
                    counts[off[j] : off[j + 1]],
                    off[j + 1] - off[j],
                    acc,
                )
                for o in range(2):
                    den = acc[2 * o] + acc[2 * o + 1]
                    if den > 0.0:
                        e = acc[2 * o] / den
                        out[r, o, i, j] = e
                        out[r, o, j, i] = acc[2 * o + 1] / den
                    else:
                        out[r, o, i, j] = 0.5
                        out[r, o, j, i] = 0.5
            for o in range(2):
                out[r, o, i, i] = np.nan


@numba.njit(cache=True, fastmath={"reassoc"})
def _pair_equal(qi, qj, ci, cj):  # pragma: no cover - compiled
    """(Σd², Σd₊², ∫D², ∫D₊²) up to constant factors for two materialised quantile functions of
    equal size n (d = q_j − q_i per step of width 1/n; D = c_j − c_i, the running sums, at the
    knots). Branch-free so that the loop vectorises; ``reassoc`` lets the sums be vectorised,
    which fixes their order for a given machine, so results do not depend on threads."""
    t1 = 0.0
    p1 = 0.0
    t2 = 0.0
    p2 = 0.0
    for t in range(qi.shape[0]):
        d = qj[t] - qi[t]
        dd = d * d
        t1 += dd
        p1 += dd if d > 0.0 else 0.0
        a = cj[t] - ci[t]
        b = cj[t + 1] - ci[t + 1]
        full = a * a + a * b + b * b
        t2 += full
        den = a - b
        den = den if den != 0.0 else 1.0
        ap = a if a > 0.0 else 0.0
        bp = b if b > 0.0 else 0.0
        cross = (ap * ap * ap - bp * bp * bp) / den
        p2 += full if (a >= 0.0 and b >= 0.0) else cross
    return t1, p1, t2, p2


@numba.njit(cache=True, parallel=True)
def _replicates_equal(values, perm, n, group, gsize, idx, out, workers):  # pragma: no cover
    """:func:`_replicates` when every sample has size n. Each replicate's quantile functions
    are materialised once (k × n) from the counts, with their running sums, and each pair is
    then one pass over the n steps (h = 1/n cancels in the ratios). Segments that change sign
    contribute h·A³/(3(A − B)) (methods note D1), written as (A₊³ − B₊³)/(3(A − B)).

    Work is split into one block of replicates per thread with buffers allocated once per
    block (a fresh 0.5 MB array per replicate cost more than the arithmetic); each replicate is
    computed alone, so the result does not depend on the number of threads."""
    k = group.shape[0]
    reps = idx.shape[0]
    ng = gsize.shape[0]
    workers = max(1, min(workers, reps))
    for w in numba.prange(workers):
        cg = np.empty((ng, n), np.int32)
        q = np.empty((k, n))
        cs = np.empty((k, n + 1))
        mark = np.empty(n + 1, np.int64)
        for r in range(w, reps, workers):
            if idx[r, 0] < 0:
                cg[:, :] = 1
            else:
                cg[:, :] = 0
                for g in range(ng):
                    row = cg[g]
                    for t in range(n):
                        row[idx[r, g * n + t]] += 1
            for c in range(k):
                # mark[p]: the last sorted position whose copies start at output position p
                mark[:] = -1
                start = 0
                gc = cg[group[c]]
                for t in range(n):
                    mark[start] = t
                    start += gc[perm[c * n + t]]
                cur = 0
                acc = 0.0
                cs[c, 0] = 0.0
                for p in range(n):
                    m = mark[p]
                    cur = m if m >= 0 else cur
                    v = values[c * n + cur]
                    q[c, p] = v
                    acc += v
                    cs[c, p + 1] = acc
            for i in range(k):
                for j in range(i + 1, k):
                    t1, p1, t2, p2 = _pair_equal(q[i], q[j], cs[i], cs[j])
                    for o in range(2):
                        tot = t1 if o == 0 else t2
                        pos_part = p1 if o == 0 else p2
                        if tot > 0.0:
                            e = pos_part / tot
                            out[r, o, i, j] = e
                            out[r, o, j, i] = 1.0 - e
                        else:
                            out[r, o, i, j] = 0.5
                            out[r, o, j, i] = 0.5
                for o in range(2):
                    out[r, o, i, i] = np.nan


def _as_samples(samples: Sequence[np.ndarray]) -> list[np.ndarray]:
    out = [np.asarray(s, dtype=np.float64).ravel() for s in samples]
    for i, s in enumerate(out):
        if s.size == 0 or not np.all(np.isfinite(s)):
            raise ValueError(f"sample {i} is empty or not finite")
    return out


def violation_ratio(x: np.ndarray, y: np.ndarray, order: int) -> float:
    """ε_W2 (``order`` 1, Eq. 4 of Nitsure et al. (2024)) or ε_IQ (``order`` 2, Eq. 5): the
    violation of "x
    dominates y" for larger-is-better samples of any sizes, exact (module docstring)."""
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    xs, ys = (np.sort(s) for s in _as_samples([x, y]))
    acc = np.empty(4)
    _pair(xs, np.ones(xs.size, np.int64), xs.size, ys, np.ones(ys.size, np.int64), ys.size, acc)
    pos, neg = acc[2 * (order - 1)], acc[2 * (order - 1) + 1]
    return 0.5 if pos + neg <= 0.0 else float(pos / (pos + neg))


def bootstrap_ratios(
    samples: Sequence[np.ndarray],
    resamples: int,
    seed: int | np.random.SeedSequence,
    *,
    paired: bool = False,
    threads: int | None = None,
) -> np.ndarray:
    """ε of every ordered pair for the original samples (row 0) and ``resamples`` bootstrap
    replicates: array (B + 1, 2, k, k), ``[:, 0]`` first order, ``[:, 1]`` second, NaN on the
    diagonal. ``paired``: samples are aligned by prompt (equal sizes) and resampled jointly."""
    xs = _as_samples(samples)
    k = len(xs)
    if k < 2:
        raise ValueError("dominance needs at least two samples")
    sizes = np.array([s.size for s in xs])
    if paired and np.any(sizes != sizes[0]):
        raise ValueError(f"paired resampling needs equal sample sizes, got {sizes.tolist()}")
    orders = [np.argsort(s, kind="stable") for s in xs]
    values = np.concatenate([s[o] for s, o in zip(xs, orders, strict=True)])
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    if paired:
        perm = np.concatenate(orders).astype(np.int64)
        group = np.zeros(k, np.int64)
        gsize = sizes[:1].astype(np.int64)
    else:
        perm = np.concatenate([np.arange(n) for n in sizes]).astype(np.int64)
        group = np.arange(k, dtype=np.int64)
        gsize = sizes.astype(np.int64)
    goff = np.concatenate([[0], np.cumsum(gsize)]).astype(np.int64)
    out = np.empty((resamples + 1, 2, k, k))
    rng = np.random.Generator(np.random.PCG64(seed))
    old = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        equal = bool(np.all(sizes == sizes[0]))

        def kernel(idx: np.ndarray, dest: np.ndarray) -> None:
            if equal:
                _replicates_equal(
                    values, perm, int(sizes[0]), group, gsize, idx, dest, numba.get_num_threads()
                )
            else:
                _replicates(values, perm, off, group, goff, gsize, idx, dest)

        kernel(np.full((1, 1), -1, np.int32), out[:1])
        for start in range(0, resamples, _CHUNK):
            stop = min(start + _CHUNK, resamples)
            idx = np.empty((stop - start, int(goff[-1])), np.int32)
            for g, n in enumerate(gsize):
                idx[:, goff[g] : goff[g + 1]] = rng.integers(0, n, (stop - start, n), np.int32)
            kernel(idx, out[1 + start : 1 + stop])
    finally:
        numba.set_num_threads(old)
    return out


def borda_ranks(wins: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """1-based ranks by Borda count (row sums of ``wins``, most first); ties by the lower
    ``tiebreak``, then by index (Algorithm 1 of Nitsure et al. (2024), last lines)."""
    score = wins.sum(axis=1)
    order = np.lexsort((np.arange(score.size), tiebreak, -score))
    ranks = np.empty(score.size, dtype=np.int64)
    ranks[order] = np.arange(1, score.size + 1)
    return ranks


@dataclass(frozen=True)
class DominanceTests:
    """Algorithm 1 of Nitsure et al. (2024) for one order (larger is better; "i dominates j").

    ``eps[i, j]``: ε(X_i, X_j); ``sigma``: its bootstrap sd; ``eps_ucb``: ε + z·σ;
    ``one_vs_all[i]``: ε_i; ``delta[i, j]``: ε_i − ε_j; ``delta_sigma``, ``delta_ucb``: its sd
    and upper bound; ``wins[i, j]``: the relative test "i R-dominates j" rejects at α/k²;
    ``ranks``: Borda ranks of ``wins``; ``eps0``, ``abs_wins[e]``, ``abs_ranks[e]``: the
    absolute ε₀-tests; ``distinct_p``: the p-values of the distinctness guard (a win needs
    p ≤ α/k²); ``calibration``: how ``eps_ucb`` and ``delta_ucb`` are formed (``normal``:
    ε̂ + z·σ̂, Eqs. 11–13; ``logit_percentile``: :func:`logit_percentile_bound`). NaN on
    diagonals.
    """

    order: int
    calibration: str
    alpha: float
    alpha_pair: float
    z: float
    resamples: int
    paired: bool
    eps: np.ndarray
    sigma: np.ndarray
    eps_ucb: np.ndarray
    one_vs_all: np.ndarray
    delta: np.ndarray
    delta_sigma: np.ndarray
    delta_ucb: np.ndarray
    wins: np.ndarray
    ranks: np.ndarray
    eps0: tuple[float, ...]
    abs_wins: np.ndarray
    abs_ranks: np.ndarray
    distinct_p: np.ndarray

    @property
    def statistic(self) -> np.ndarray:
        """The relative statistics Δε (Eq. 8), like ``scipy.stats`` results' ``statistic``."""
        return self.delta


def logit_percentile_bound(replicates: np.ndarray, z: float, wider: bool = True) -> np.ndarray:
    """Upper bound max(expit(m + z·s), u), s = max(u₈₄ − m, (u₉₅ − m)/z₀.₉₅), from the
    bootstrap ``replicates`` (axis 0, values in [0, 1]): m, u₈₄ and u₉₅ are the logits of their
    median, Φ(1) and 95 % quantiles (clipped to [10⁻⁶, 1 − 10⁻⁶]), u their Φ(z) quantile. The
    percentile bound at Φ(z) (Efron & Tibshirani 1993, Section 13.3), its upper tail
    extrapolated as normal on the logit scale from the upper half of the replicates, which an
    atom at exact dominance (ε* = 0) leaves alone; the wider of the two tail scales, because the
    Φ(1) quantile alone let the second-order test reject slightly too often at its boundary
    (module docstring, methods note D7). ``wider`` False: the Φ(1) scale alone (the relative
    test's bound, which holds its level with it).

    The bound is never below u, the percentile bound read off the replicates themselves: the
    normal tail extends the replicates where B cannot resolve Φ(z), it must not cut off the mass
    they do show. On capped or graded scores the replicates have atoms (Δε* ∈ {−½, ½} where
    two conditions tie), an atom can cover the median and the Φ(1) quantile alike, s is then 0
    and the extrapolated bound is the atom itself, the point estimate, however much of the
    bootstrap mass lies above it (methods note D7)."""
    q = np.quantile(replicates, [0.5, ndtr(1.0), _UPPER_P, ndtr(z)], axis=0)
    mid, hi, top = logit(np.clip(q[:3], _LOGIT_CLIP, 1.0 - _LOGIT_CLIP))
    scale = np.maximum(hi - mid, (top - mid) / _UPPER_Z) if wider else hi - mid
    return np.maximum(expit(mid + z * scale), q[3])


def dominance_from_replicates(
    reps: np.ndarray,
    order: int,
    alpha: float,
    eps0: Sequence[float],
    paired: bool,
    distinct_p: np.ndarray,
    calibration: str = DEFAULT_CALIBRATION,
) -> DominanceTests:
    """The tests of one ``order`` (Algorithm 1 of Nitsure et al. (2024)) from the replicates of
    :func:`bootstrap_ratios` and the guard's p-values of :func:`distinctness`, the bounds formed
    as ``calibration`` says: several calibrations or levels from one set of replicates."""
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    k = reps.shape[-1]
    alpha_pair = alpha / k**2
    z = float(ndtri(1.0 - alpha_pair))
    eps_b = reps[:, order - 1]
    offdiag = ~np.eye(k, dtype=bool)
    eps = eps_b[0]
    sigma = np.where(offdiag, eps_b[1:].std(axis=0, ddof=1) if len(eps_b) > 2 else np.nan, np.nan)
    one_b = np.nansum(eps_b, axis=2) / (k - 1)  # (B + 1, k)
    delta_b = one_b[:, :, None] - one_b[:, None, :]
    delta = np.where(offdiag, delta_b[0], np.nan)
    dsig = np.where(offdiag, delta_b[1:].std(axis=0, ddof=1) if len(eps_b) > 2 else np.nan, np.nan)
    if calibration == "normal":
        eps_ucb = eps + z * sigma  # Eqs. 11-12 (σ unscaled, methods note D2)
        delta_ucb = delta + z * dsig  # Eq. 13
    else:
        eps_ucb = np.where(offdiag, logit_percentile_bound(eps_b[1:], z), np.nan)
        half = logit_percentile_bound((1.0 + delta_b[1:]) / 2.0, z, wider=False)
        delta_ucb = np.where(offdiag, 2.0 * half - 1.0, np.nan)
    with np.errstate(invalid="ignore"):
        distinct = offdiag & (distinct_p <= alpha_pair)
        wins = np.where(distinct, delta_ucb <= 0.0, False)
        abs_wins = np.array([np.where(distinct, eps_ucb <= e, False) for e in eps0], dtype=bool)
    one = one_b[0]
    abs_ranks = np.array([borda_ranks(w, one) for w in abs_wins], dtype=np.int64)
    return DominanceTests(
        order=order,
        calibration=calibration,
        alpha=alpha,
        alpha_pair=alpha_pair,
        z=z,
        resamples=reps.shape[0] - 1,
        paired=paired,
        eps=eps,
        sigma=sigma,
        eps_ucb=eps_ucb,
        one_vs_all=one,
        delta=delta,
        delta_sigma=dsig,
        delta_ucb=delta_ucb,
        wins=wins,
        ranks=borda_ranks(wins, one),
        eps0=tuple(float(e) for e in eps0),
        abs_wins=abs_wins.reshape(len(eps0), k, k),
        abs_ranks=abs_ranks.reshape(len(eps0), k),
        distinct_p=distinct_p,
    )


def dominance_tests_orders(
    samples: Sequence[np.ndarray],
    orders: Sequence[int] = (1, 2),
    resamples: int = 1000,
    alpha: float = 0.05,
    eps0: Sequence[float] = (),
    seed: int | np.random.SeedSequence = 0,
    *,
    paired: bool = False,
    threads: int | None = None,
    calibration: str = DEFAULT_CALIBRATION,
) -> dict[int, DominanceTests]:
    """:func:`dominance_tests` for several orders from one set of bootstrap replicates."""
    if calibration not in CALIBRATIONS:  # before any resampling
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    reps = bootstrap_ratios(samples, resamples, seed, paired=paired, threads=threads)
    xs = _as_samples(samples)
    guard = distinctness(xs, alpha / len(xs) ** 2, seed)
    return {
        o: dominance_from_replicates(reps, o, alpha, eps0, paired, guard, calibration)
        for o in orders
    }


def dominance_tests(
    samples: Sequence[np.ndarray],
    order: int,
    resamples: int,
    alpha: float,
    eps0: Sequence[float],
    seed: int | np.random.SeedSequence,
    *,
    paired: bool = False,
    threads: int | None = None,
    calibration: str = DEFAULT_CALIBRATION,
) -> DominanceTests:
    """Algorithm 1 of Nitsure et al. (2024) for ``order`` (1: ε-FSD/R-FSD, 2: ε-SSD/R-SSD) on k
    larger-is-better samples, the bounds calibrated as ``calibration`` says (module docstring)."""
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    return dominance_tests_orders(
        samples,
        (order,),
        resamples,
        alpha,
        eps0,
        seed,
        paired=paired,
        threads=threads,
        calibration=calibration,
    )[order]
