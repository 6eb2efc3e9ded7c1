"""Composite-null test for LLM responses under semantically irrelevant perturbations (Acharyya et
al. (2025)).

Acharyya, Priebe & Helm (2025) tests whether a *test query*'s binary response rate p_t
lies in the interval [a, b] spanned by the response rates of a base query's semantically
irrelevant perturbations (its Eq. 2), rather than whether it equals the base query's rate (Eq. 1).
The copy of the paper lost its formulas; tailgate implements the restatement in the methods note
section A:

- the statistic T̂ = min_i |p̂_t − p̂_i| over m sampled null queries with n responses each, rejected
  when T̂ > τ with τ = (J + ½)/n (Eq. 3 of Acharyya et al. (2025); A5: T̂ is a multiple of 1/n, so
  the half step
  avoids float ties);
- :func:`rejection_probability`, :func:`exact_size` and :func:`average_power`: the exact
  finite-sample size and average power under the uniform model of Assumptions 2–3 (methods note A5),
  from the binomial–uniform mixture π_j = [I_b(j+1, n−j+1) − I_a(j+1, n−j+1)] / ((n+1)w)
  written with ``scipy.special.betainc``;
- :func:`ideal_size`, :func:`ideal_power`, :func:`ideal_average_power` (Lemmas 2–3, Theorem 4
  analogues, methods note A1/A4) and :func:`hoeffding_size_bound`,
  :func:`hoeffding_average_power_bound`
  (Theorems 2–3 analogues, methods note A2–A4), reported for comparison: at realistic n the
  Hoeffding
  size bound exceeds 1, so the design uses the exact A5 values;
- :func:`estimate_interval`: Algorithm B of Acharyya et al. (2025), [â, b̂] from a pilot of m0
  queries × n0
  responses (methods note A6: (i) the order-statistic/UMVU correction, conservative, the default;
  (ii)
  noise-deflated moments, anti-conservative);
- :func:`design`: Algorithm C of Acharyya et al. (2025) (methods note A7): for each m, n =
  ⌊B/(m+1)⌋ and the smallest J whose
  exact size is ≤ α, and the m of largest average power;
- :func:`composite_test` (the decision per test query) and :func:`two_proportion_test` (the
  classical test of Eq. 1 of Acharyya et al. (2025), which the composite test is meant to replace:
  shown beside it);
- :func:`energy_test`: the Székely–Rizzo energy-distance two-sample test with a permutation
  p-value for embedded responses (methods note A8; Section 1.1 of Acharyya et al. (2025) works with
  embeddings).

**Assumptions and failure modes.** The size guarantee of the ``uniform`` null model rests on the
null rates being uniform on [a, b] (Assumption 2 of Acharyya et al. (2025); methods note A1):
with heterogeneous null queries (rates bunched at one end) a uniform design rejects far above α.
The ``heterogeneous`` model (methods note A9) allows any rates in [a, b] and takes the worst case
over them, at a cost in power. The design plugs in the pilot's [â, b̂]; estimator (ii)
under-estimates the width about half the time, so its designs are anti-conservative. All counts
are integers, so the decision ``min |k_t − k_i| > J`` is exact (no float comparisons).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from tailgate.lazy import lazy_module
from tailgate.stats.gpd import Interval, SeedLike, seed_sequence_of

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")
distance = lazy_module("scipy.spatial.distance")

__all__ = [
    "MIN_NULL_QUERIES",
    "NULL_MODELS",
    "CompositeTest",
    "Design",
    "EnergyTest",
    "IntervalEstimate",
    "TwoProportionTest",
    "average_power",
    "composite_test",
    "design",
    "energy_statistic",
    "energy_test",
    "estimate_interval",
    "exact_size",
    "hoeffding_average_power_bound",
    "hoeffding_size_bound",
    "ideal_average_power",
    "ideal_power",
    "ideal_size",
    "null_mixture_pmf",
    "rejection_probability",
    "threshold",
    "two_proportion_test",
]

#: points of p_t in [a, b] (endpoints included) over which the exact size is maximised (A5)
SIZE_GRID = 17

IntervalMethod = Literal["order_statistics", "moments"]
#: what the null queries' rates may be (methods note A9): ``uniform`` on [a, b] (Assumption 2 of
#: Acharyya et al. (2025)) or ``heterogeneous``: any rates in [a, b], the size taken as the worst
#: case over that class
NULL_MODELS = ("uniform", "heterogeneous")
#: the smallest number of null queries a design uses unless the registration allows fewer
MIN_NULL_QUERIES = 2


def _check_interval(a: float, b: float) -> tuple[float, float]:
    a, b = float(a), float(b)
    if not (0.0 <= a < b <= 1.0):
        raise ValueError(f"the null interval needs 0 <= a < b <= 1, got [{a!r}, {b!r}]")
    return a, b


def threshold(J: int, n: int) -> float:
    """τ = (J + ½)/n: rejecting T̂ > τ is rejecting min |k_t − k_i| > J (methods note A5)."""
    return (int(J) + 0.5) / int(n)


# --- exact finite-sample size and power (methods note A5)
# ---------------------------------------------


def null_mixture_pmf(a: float, b: float, n: int) -> np.ndarray:
    """π_j, j = 0..n: the distribution of a null query's count k_i ~ Bin(n, p), p ~ U[a, b].

    ∫_a^b C(n,j) p^j (1−p)^{n−j} dp / w = [I_b(j+1, n−j+1) − I_a(j+1, n−j+1)] / ((n+1) w), with I
    the regularised incomplete beta function (methods note A5).
    """
    a, b = _check_interval(a, b)
    j = np.arange(int(n) + 1, dtype=np.float64)
    upper = special.betainc(j + 1.0, n - j + 1.0, b)
    lower = special.betainc(j + 1.0, n - j + 1.0, a)
    return (upper - lower) / ((n + 1) * (b - a))


def _acceptance_mass(pi: np.ndarray, J: int) -> np.ndarray:
    """q_k = Σ_{|j−k| ≤ J} π_j for k = 0..n (the chance one null count lies within J of k)."""
    n = pi.size - 1
    c = np.concatenate(([0.0], np.cumsum(pi)))
    k = np.arange(n + 1)
    hi = np.minimum(k + J, n) + 1
    lo = np.maximum(k - J, 0)
    return np.clip(c[hi] - c[lo], 0.0, 1.0)


def _window_mass(p: float, n: int, J: int) -> np.ndarray:
    """F_k = P(|Bin(n, p) − k| ≤ J) for k = 0..n."""
    c = np.concatenate(([0.0], stats.binom.cdf(np.arange(n + 1), n, p)))
    k = np.arange(n + 1)
    return np.clip(c[np.minimum(k + J, n) + 1] - c[np.maximum(k - J, 0)], 0.0, 1.0)


def rejection_probability(p_t, a: float, b: float, m: int, n: int, J: int) -> np.ndarray:
    """P(reject | p_t) = Σ_k Bin(k; n, p_t) (1 − q_k)^m, vectorised over ``p_t`` (methods note
    A5)."""
    p = np.atleast_1d(np.asarray(p_t, dtype=np.float64))
    k = np.arange(int(n) + 1)
    weights = stats.binom.pmf(k[None, :], int(n), p[:, None])
    out = weights @ _Evaluator(a, b, m, n).reject(J)
    return out if np.ndim(p_t) else out[0]


class _Evaluator:
    """Size and average power for fixed (a, b, m, n) as functions of J.

    The binomial weights of p_t are computed once per (a, b, m, n): at the two endpoints for the
    search (the sup is at an endpoint in every case checked, A5) and on the full
    :data:`SIZE_GRID` only to confirm a candidate design, so the answer never rests on that
    observation. Measured at B = 5·10⁴ (one core): 0.93 s with the full grid for every m, 0.38 s
    searching at the endpoints and confirming only the best candidates on the grid.
    """

    def __init__(self, a: float, b: float, m: int, n: int, null_model: str = "uniform") -> None:
        a, b = _check_interval(a, b)
        if null_model not in NULL_MODELS:
            raise ValueError(f"null_model must be one of {NULL_MODELS}, got {null_model!r}")
        self.a, self.b, self.m, self.n = a, b, int(m), int(n)
        self.null_model = null_model
        self.pi = null_mixture_pmf(a, b, n)
        k = np.arange(n + 1, dtype=np.float64)
        self._k = k
        self.endpoint_weights = stats.binom.pmf(k[None, :], n, np.array([a, b])[:, None])
        self._grid_weights: np.ndarray | None = None
        w = b - a
        if w < 1.0:
            ia = special.betainc(k + 1.0, n - k + 1.0, a)
            ib = special.betainc(k + 1.0, n - k + 1.0, b)
            self.power_weights = (ia + 1.0 - ib) / ((n + 1) * (1.0 - w))
        else:
            self.power_weights = np.full(n + 1, np.nan)

    @property
    def grid_weights(self) -> np.ndarray:
        """Bin(k; n, p_t) for p_t on :data:`SIZE_GRID` points of [a, b], endpoints first/last."""
        if self._grid_weights is None:
            grid = np.linspace(self.a, self.b, SIZE_GRID)
            self._grid_weights = stats.binom.pmf(self._k[None, :], self.n, grid[:, None])
        return self._grid_weights

    def reject(self, J: int) -> np.ndarray:
        """P(reject | k_t = k): (1 − q_k)^m with q_k the chance that one null count lies within
        J of k — under the uniform model the mixture's; under heterogeneous rates the smallest
        over null rates in [a, b], min(F_k(a), F_k(b)) (the window's binomial mass is unimodal
        in p, so its minimum over [a, b] is at an end): the worst case over the class."""
        if self.null_model == "uniform":
            return (1.0 - _acceptance_mass(self.pi, J)) ** self.m
        q = np.minimum(_window_mass(self.a, self.n, J), _window_mass(self.b, self.n, J))
        return (1.0 - q) ** self.m

    def attained_size(self, J: int) -> float:
        """The size of one configuration in the heterogeneous class: p_t at one end, every null
        rate at the other (the larger of the two); :meth:`sizes` bounds every configuration."""
        n, m = self.n, self.m
        k = np.arange(n + 1)
        at_a = stats.binom.pmf(k, n, self.a) @ (1.0 - _window_mass(self.b, n, J)) ** m
        at_b = stats.binom.pmf(k, n, self.b) @ (1.0 - _window_mass(self.a, n, J)) ** m
        return float(max(at_a, at_b))

    def sizes(self, J: int) -> np.ndarray:
        """P(reject | p_t) on the full grid of [a, b]."""
        return self.grid_weights @ self.reject(J)

    def average_power(self, J: int) -> float:
        """Average power with the null rates uniform on [a, b] under either null model (under
        heterogeneous rates the power depends on where they lie; the uniform spread is the
        planning assumption, the size is not)."""
        return float(self.power_weights @ (1.0 - _acceptance_mass(self.pi, J)) ** self.m)

    def smallest_valid_J(self, alpha: float) -> int:
        """The smallest J whose size at both endpoints is ≤ α (non-increasing in J; J = n never
        rejects)."""
        lo, hi = -1, self.n  # lo: a sentinel below every valid J; hi: valid
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (self.endpoint_weights @ self.reject(mid)).max() <= alpha:
                hi = mid
            else:
                lo = mid
        return hi

    def confirmed_J(self, J: int, alpha: float) -> int:
        """The smallest J' ≥ J whose size on the full grid is ≤ α."""
        while self.sizes(J).max() > alpha:
            J += 1
        return J


def exact_size(a: float, b: float, m: int, n: int, J: int, null_model: str = "uniform") -> float:
    """sup over p_t ∈ [a, b] of P(reject | p_t), on :data:`SIZE_GRID` points (methods note A5;
    ``heterogeneous``: also the sup over the null rates in [a, b], methods note A9).

    The maximum lies at an endpoint in every case checked (A5); the grid makes that an observation
    rather than an assumption.
    """
    return float(_Evaluator(a, b, m, n, null_model).sizes(J).max())


def average_power(a: float, b: float, m: int, n: int, J: int) -> float:
    """Σ_k ω_k (1 − q_k)^m with p_t uniform on [0, a) ∪ (b, 1] (methods note A5)."""
    return _Evaluator(a, b, m, n).average_power(J)


# --- ideal test and Hoeffding bounds, for comparison (methods note A1–A4)
# -----------------------------


def ideal_size(m: int, tau: float, w: float) -> float:
    """sup size of the ideal test (true p's known): (1 − τ/w)₊^m (Lemma 2 of Acharyya et al.
    (2025), methods note A1)."""
    return max(0.0, 1.0 - tau / w) ** int(m)


def ideal_power(delta: float, m: int, tau: float, w: float) -> float:
    """Ideal power at p_t = b + Δ (or a − Δ): 1 if Δ > τ, else ((Δ + w − τ)₊/w)^m (Lemma 3, A4)."""
    if delta > tau:
        return 1.0
    return (max(0.0, delta + w - tau) / w) ** int(m)


def ideal_average_power(m: int, tau: float, a: float, b: float) -> float:
    """Ideal power averaged over p_t uniform on [0, a) ∪ (b, 1] (Theorem 4 analogue, methods note
    A4).

    AP(τ) = [S(a) + S(1 − b)] / (1 − w), S(L) = (L − τ)₊ + w/(m+1)·[(min(w, w + L − τ)₊/w)^{m+1}
    − ((w − τ)₊/w)^{m+1}].
    """
    a, b = _check_interval(a, b)
    w = b - a

    def side(L: float) -> float:
        top = max(0.0, min(w, w + L - tau)) / w
        base = max(0.0, w - tau) / w
        return max(0.0, L - tau) + w / (m + 1) * (top ** (m + 1) - base ** (m + 1))

    return (side(a) + side(1.0 - b)) / (1.0 - w)


def _inf_over_delta(f, tau: float) -> float:
    """inf over 0 < δ < τ of a scalar function, on a fine grid (4,001 points)."""
    deltas = np.linspace(0.0, tau, 4003)[1:-1]
    return float(np.min(f(deltas)))


def hoeffding_size_bound(m: int, n: int, tau: float, w: float) -> float:
    """inf_δ [(1 − (τ − δ)/w)₊^m + 2 e^{−nδ²}] (Theorem 2 analogue, methods note A3); may exceed
    1."""
    return _inf_over_delta(
        lambda d: np.clip(1.0 - (tau - d) / w, 0.0, None) ** m + 2.0 * np.exp(-n * d * d), tau
    )


def hoeffding_average_power_bound(m: int, n: int, tau: float, a: float, b: float) -> float:
    """sup_δ [AP_ideal(τ + δ) − 2m e^{−nδ²}] (Theorems 3–4 analogues, methods note A4); may be <
    0."""
    deltas = np.linspace(0.0, 1.0, 4003)[1:-1]
    values = [ideal_average_power(m, tau + d, a, b) - 2 * m * math.exp(-n * d * d) for d in deltas]
    return float(max(values))


# --- Algorithm B: the null interval from a pilot (methods note A6)
# ------------------------------------


@dataclass(frozen=True)
class IntervalEstimate:
    """[â, b̂] from a pilot of ``m0`` queries × ``n0`` responses (Algorithm B of Acharyya et al.
    (2025), methods note A6).

    ``clipped`` says that an endpoint was moved into [0, 1].
    """

    low: float
    high: float
    method: str
    m0: int
    n0: int
    clipped: bool

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def interval(self) -> Interval:
        return Interval(self.low, self.high)


def estimate_interval(
    p_hat, n0: int, method: IntervalMethod = "order_statistics"
) -> IntervalEstimate:
    """Estimate the null interval from pilot rates ``p_hat`` (methods note A6).

    ``order_statistics`` (i, default): â = p̂₍1₎ − R/(m0−1), b̂ = p̂₍m0₎ + R/(m0−1), R the range
    (the UMVU estimator of uniform endpoints; ignores binomial noise, so too wide: conservative).
    ``moments`` (ii): c ± ŵ/2 with c = mean p̂ and ŵ = √(12·max(0, s² − mean(p̂(1−p̂))/(n0−1)))
    (unbiased for w², under-estimates w about half the time: anti-conservative).
    """
    p = np.asarray(p_hat, dtype=np.float64)
    m0 = p.size
    if m0 < 2:
        raise ValueError(f"the pilot needs at least 2 queries, got {m0}")
    if n0 < 2:
        raise ValueError(f"the pilot needs at least 2 responses per query, got {n0}")
    if method == "order_statistics":
        lo, hi = float(p.min()), float(p.max())
        r = hi - lo
        low, high = lo - r / (m0 - 1), hi + r / (m0 - 1)
    elif method == "moments":
        centre = float(p.mean())
        excess = float(p.var(ddof=1)) - float(np.mean(p * (1.0 - p))) / (n0 - 1)
        half = math.sqrt(12.0 * max(0.0, excess)) / 2.0
        low, high = centre - half, centre + half
    else:
        raise ValueError(f"unknown interval method {method!r} (order_statistics, moments)")
    clipped_low, clipped_high = min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)
    clipped = (clipped_low, clipped_high) != (low, high)
    return IntervalEstimate(clipped_low, clipped_high, method, m0, int(n0), clipped)


# --- Algorithm C: the design (methods note A7)
# --------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """(m, n, τ) for budget B = (m + 1)·n at level α under the null interval [a, b] (methods note
    A7).

    ``size`` is the exact sup size (A5), ``size_at_a``/``size_at_b`` its endpoint values,
    ``average_power`` the exact average power; ``ideal_size`` and ``hoeffding_size_bound`` are the
    A1 and A3 values at the same (m, n, τ), for comparison.
    """

    m: int
    n: int
    J: int
    tau: float
    size: float
    size_at_a: float
    size_at_b: float
    average_power: float
    ideal_size: float
    hoeffding_size_bound: float
    a: float
    b: float
    budget: int
    alpha: float
    null_model: str = "uniform"
    min_m: int = MIN_NULL_QUERIES
    #: heterogeneous: the size of p_t at one end with every null rate at the other
    size_attained: float | None = None


def design(
    a: float,
    b: float,
    budget: int,
    alpha: float,
    *,
    null_model: str = "uniform",
    min_m: int = MIN_NULL_QUERIES,
) -> Design:
    """Algorithm C of Acharyya et al. (2025) (methods note A7): the (m, n, τ) of largest exact
    average power at size ≤ α.

    For each m ≥ ``min_m`` with m(m + 1) ≤ B (n ≥ m; the optimum has n ~ m², A7), n = ⌊B/(m+1)⌋
    and J is the smallest integer whose exact sup size (A5; under ``heterogeneous`` null rates
    the worst case over rates in [a, b], A9) is ≤ α, found by bisection (size is non-increasing
    in J); ties in average power go to the smaller m. The pilot is not part of B. m = 1 (one
    null query, the classical test in disguise) only when ``min_m`` = 1 is registered.
    """
    a, b = _check_interval(a, b)
    if b - a >= 1.0:
        raise ValueError("the null interval [0, 1] leaves no alternative: average power undefined")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    budget = int(budget)
    min_m = int(min_m)
    if min_m < 1:
        raise ValueError(f"min_m must be >= 1, got {min_m}")
    if budget < 2 or (min_m > 1 and min_m * (min_m + 1) > budget):
        raise ValueError(
            f"the budget {budget} does not allow {min_m} null queries of at least {min_m} "
            "responses each and a test query"
        )
    # search every m at the endpoints; the endpoint J gives an upper bound on that m's power
    candidates: list[tuple[float, int, int, _Evaluator]] = []
    m = min_m
    while m == min_m or m * (m + 1) <= budget:
        ev = _Evaluator(a, b, m, budget // (m + 1), null_model)
        J = ev.smallest_valid_J(alpha)
        candidates.append((ev.average_power(J), m, J, ev))
        m += 1
    # confirm on the full grid in order of the bound, until no unconfirmed bound can win
    candidates.sort(key=lambda c: (-c[0], c[1]))
    best: tuple[float, int, int, int, _Evaluator] | None = None
    for bound, m, J, ev in candidates:
        if best is not None and (bound < best[0] or (bound == best[0] and m > best[1])):
            break
        J = ev.confirmed_J(J, alpha)
        power = ev.average_power(J)
        if best is None or (power, -m) > (best[0], -best[1]):
            best = (power, m, ev.n, J, ev)
    assert best is not None
    power, m, n, J, ev = best
    sizes = ev.sizes(J)
    tau = threshold(J, n)
    w = b - a
    return Design(
        m=m,
        n=n,
        J=J,
        tau=tau,
        size=float(sizes.max()),
        size_at_a=float(sizes[0]),
        size_at_b=float(sizes[-1]),
        average_power=power,
        ideal_size=ideal_size(m, tau, w),
        hoeffding_size_bound=hoeffding_size_bound(m, n, tau, w),
        a=a,
        b=b,
        budget=budget,
        alpha=float(alpha),
        null_model=null_model,
        min_m=min_m,
        size_attained=ev.attained_size(J) if null_model == "heterogeneous" else None,
    )


# --- the decisions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompositeTest:
    """The composite-null decision for one test query (Eq. 3 of Acharyya et al. (2025), methods
    note A5).

    ``statistic`` is T̂ = min_i |p̂_t − p̂_i|; ``reject`` is T̂ > ``threshold``. ``pvalue`` is the
    plug-in p-value under the uniform model on [a, b]: the exact sup size of the test that rejects
    at the observed distance (1 when T̂ = 0). ``nearest`` indexes the closest null query.
    """

    statistic: float
    threshold: float
    reject: bool
    pvalue: float
    p_test: float
    nearest: int
    distance_counts: int
    J: int


def composite_test(
    test_count: int,
    null_counts,
    n: int,
    J: int,
    a: float,
    b: float,
    null_model: str = "uniform",
) -> CompositeTest:
    """Test H0: p_t ∈ [a, b] from ``test_count`` and ``null_counts`` successes out of ``n`` each;
    the p-value under the registered ``null_model``."""
    k = np.asarray(null_counts, dtype=np.int64)
    if k.ndim != 1 or k.size == 0:
        raise ValueError("the composite test needs at least one null query")
    if np.any((k < 0) | (k > n)) or not 0 <= int(test_count) <= n:
        raise ValueError(f"counts must lie in 0..{n}")
    dist = np.abs(k - int(test_count))
    nearest = int(np.argmin(dist))
    d = int(dist[nearest])
    pvalue = 1.0 if d == 0 else exact_size(a, b, k.size, n, d - 1, null_model)
    return CompositeTest(
        statistic=d / n,
        threshold=threshold(J, n),
        reject=d > J,
        pvalue=pvalue,
        p_test=int(test_count) / n,
        nearest=nearest,
        distance_counts=d,
        J=int(J),
    )


@dataclass(frozen=True)
class TwoProportionTest:
    """The classical pooled two-proportion z-test of p_t = p_0 (Eq. 1 of Acharyya et al. (2025),
    two-sided)."""

    statistic: float
    pvalue: float
    p_test: float
    p_base: float


def two_proportion_test(k_test: int, n_test: int, k_base: int, n_base: int) -> TwoProportionTest:
    """z = (p̂_t − p̂_0)/√(p̄(1−p̄)(1/n_t + 1/n_0)), p = 2Φ(−|z|); z = 0, p = 1 when p̄ ∈ {0, 1}."""
    pt, p0 = k_test / n_test, k_base / n_base
    pooled = (k_test + k_base) / (n_test + n_base)
    var = pooled * (1.0 - pooled) * (1.0 / n_test + 1.0 / n_base)
    if var <= 0.0:
        return TwoProportionTest(0.0, 1.0, pt, p0)
    z = (pt - p0) / math.sqrt(var)
    return TwoProportionTest(z, float(2.0 * stats.norm.sf(abs(z))), pt, p0)


# --- energy-distance test for embedded responses (methods note A8)
# ------------------------------------

#: permutations evaluated per matrix product
PERMUTATION_CHUNK = 256


@dataclass(frozen=True)
class EnergyTest:
    """Energy-distance two-sample test (Székely–Rizzo; methods note A8).

    ``statistic`` is E = n1·n2/(n1+n2)·ε̂ with ε̂ the V-statistic energy distance; ``pvalue`` =
    (1 + #{E* ≥ E})/(R + 1) over ``resamples`` label permutations.
    """

    statistic: float
    pvalue: float
    resamples: int
    n1: int
    n2: int


def _energy_from_labels(
    D: np.ndarray, row_sums: np.ndarray, U: np.ndarray, n1: int, n2: int, total: float
) -> np.ndarray:
    """E for each column of U, from the distances D between the pooled sample's distinct rows.

    U counts, per column, how many copies of each distinct row the first sample holds (with all
    rows distinct: the 0/1 labels, 1 = first sample); r holds the pooled distance matrix's row
    sums of each distinct row and S their total over the pooled sample. Then S_xx = uᵀDu,
    S_xy = uᵀr − S_xx, S_yy = S − 2uᵀr + S_xx.
    """
    s_xx = np.einsum("ij,ij->j", U, D @ U)
    s_xr = row_sums @ U
    s_xy = s_xr - s_xx
    s_yy = total - 2.0 * s_xr + s_xx
    eps = 2.0 * s_xy / (n1 * n2) - s_xx / n1**2 - s_yy / n2**2
    return n1 * n2 / (n1 + n2) * eps


def energy_statistic(x, y) -> float:
    """E = n1·n2/(n1+n2)·[2/(n1n2)·Σ‖x−y‖ − 1/n1²·Σ‖x−x'‖ − 1/n2²·Σ‖y−y'‖] (methods note A8)."""
    x2, y2 = np.atleast_2d(x).astype(np.float64), np.atleast_2d(y).astype(np.float64)
    n1, n2 = x2.shape[0], y2.shape[0]
    eps = (
        2.0 * distance.cdist(x2, y2).mean()
        - distance.cdist(x2, x2).mean()
        - distance.cdist(y2, y2).mean()
    )
    return float(n1 * n2 / (n1 + n2) * eps)


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group of bitwise-equal rows, numbered in order of first appearance, and the
    first row of each group (all rows distinct: ``arange(N)`` twice)."""
    n, width = rows.shape
    if width == 0:
        return np.zeros(n, dtype=np.intp), np.zeros(min(n, 1), dtype=np.intp)
    keys = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.itemsize * width))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first)
    rank = np.empty(len(first), dtype=np.intp)
    rank[by_appearance] = np.arange(len(first))
    return rank[inverse.ravel()], first[by_appearance]


#: relative tolerance of the comparison E* ≥ E (:func:`energy_test`): far above the rounding of
#: the statistic (sums of N² distances, ~1e-13 relative at N = 2,000) and far below any
#: difference between two distinct values of it
ENERGY_TIE_TOLERANCE = 1e-9


def energy_test(x, y, resamples: int, seed: SeedLike) -> EnergyTest:
    """Permutation energy test of equal distributions of the rows of ``x`` and ``y`` (methods note
    A8).

    The pooled distance matrix is computed once, and the observed statistic from it with the
    identity labelling. Each chunk of label permutations is one matrix product over the k
    distinct responses, weighted by their counts in the relabelled first sample: binary or short
    answers repeat (the 8,500 pooled responses of
    ``preregistrations/perturbation-energy-example.yaml`` are two texts: 2² terms a relabelling
    instead of 8,500²), and with every response distinct the counts are the 0/1 labels and the
    expression is the observed one's. The comparison E* ≥ E counts relabellings within
    :data:`ENERGY_TIE_TOLERANCE` of E as ties (p = (1 + #{E* ≥ E})/(R + 1)), far above the
    rounding by which two orders of summation differ.
    ``dcor.homogeneity.energy_test`` gives the same statistic (tests) but is not used: 1.58 s
    against 0.031 s here for R = 1,000 on 200 + 200 responses of dimension 384
    (``tests/benchmarks/bench_perturbation.py``), and it would bring numba into every job.
    """
    x2, y2 = np.atleast_2d(x).astype(np.float64), np.atleast_2d(y).astype(np.float64)
    if x2.shape[1] != y2.shape[1]:
        raise ValueError(f"embeddings differ in dimension: {x2.shape[1]} vs {y2.shape[1]}")
    n1, n2 = x2.shape[0], y2.shape[0]
    if n1 < 1 or n2 < 1:
        raise ValueError("the energy test needs at least one response in each sample")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    pooled = np.vstack([x2, y2])
    N = n1 + n2
    # equal rows have equal distances to every row (the same bits: each distance is computed
    # from the two rows alone), so the distances of the k distinct rows make all N² of them
    group, first = _distinct_rows(pooled)
    k = len(first)
    if k == N:
        D = D_k = distance.cdist(pooled, pooled)
    else:
        D_k = distance.cdist(pooled[first], pooled[first])
        D = D_k.take(group, axis=1).take(group, axis=0)
    r = D.sum(axis=1)
    total = r.sum()
    r_k = r[first]
    identity = np.zeros((N, 1))
    identity[:n1, 0] = 1.0
    observed = float(_energy_from_labels(D, r, identity, n1, n2, total)[0])
    del D
    # the relabellings see each distinct row once, with its count in the relabelled first
    # sample: k² terms a relabelling instead of N²
    # E* ≥ E up to rounding: repeated responses make many relabellings give E* = E exactly, but
    # the matrix products sum in another order and land a few ulps either side; without the
    # tolerance those ties are lost and the p-value is understated
    threshold = observed - ENERGY_TIE_TOLERANCE * max(1.0, abs(observed))
    gen = np.random.Generator(np.random.PCG64(seed_sequence_of(seed)))
    exceed = 0
    done = 0
    while done < resamples:
        size = min(PERMUTATION_CHUNK, resamples - done)
        order = gen.permuted(np.tile(np.arange(N), (size, 1)), axis=1)
        cells = (group[order[:, :n1]] * size + np.arange(size)[:, None]).ravel()
        U = np.bincount(cells, minlength=k * size).reshape(k, size).astype(np.float64)
        E = _energy_from_labels(D_k, r_k, U, n1, n2, total)
        exceed += int(np.count_nonzero(E >= threshold))
        done += size
    return EnergyTest(observed, (1 + exceed) / (resamples + 1), int(resamples), n1, n2)
