"""Mean–risk models, mean win rate, metrics portfolio and rank aggregation (Nitsure et al. (2024)).

All for larger-is-better outcomes (severities negated first):

- :func:`mean_risk` — Table 2 of Nitsure et al. (2024) (methods note D3), exact for the empirical
  distribution, whose
  integrated quantile Q₂(p) = ∫₀ᵖ Q is piecewise linear: standard deviation σ (reported, *not*
  SSD-consistent), absolute semi-deviation E(μ − X)₊, −TVaR(p) = −Q₂(p)/p, mean absolute
  deviation from the p-quantile μ − Q₂(p)/p, Gini tail Γ = 2∫₀¹(μp − Q₂(p))dp = μ − 2Σ x₍ᵢ₎wᵢ
  with wᵢ = (1/n)(1 − (2i − 1)/(2n)). Mean–risk scores are μ − r.
- :func:`mean_win_rate` — the leaderboard baseline the paper contrasts with: Eq. 15 (share of
  the other models whose mean is ≤ this one's) and, for prompt-aligned samples, Eq. 16 (share of
  prompts on which this model beats every other strictly).
- :func:`portfolio` — Eq. 9: R = Π_i F_i(m_i)^{λ_i}, each F_i the empirical CDF of metric i
  pooled over all models and rows, ties at mid-rank (F(v) = (#{< v} + ½#{= v})/N, never 0).
- :func:`aggregate_ranks` — D.2 of Nitsure et al. (2024) / methods note D5: ``borda`` (mean rank),
  ``kemeny`` (exact:
  dynamic programming over subsets, k ≤ 16) or ``footrule`` (exact Spearman footrule by
  assignment, ``scipy.optimize.linear_sum_assignment``). Nitsure et al. (2024) used RankAggreg (a
  stochastic
  cross-entropy search); these are deterministic. Ties go to registration order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "CONSISTENT_RISKS",
    "RISKS",
    "MeanRisk",
    "aggregate_ranks",
    "integrated_quantile",
    "mean_risk",
    "mean_win_rate",
    "portfolio",
    "ranks_of",
]

RISKS = ("sd", "semi_deviation", "neg_tvar", "mad_quantile", "gini_tail")
#: the risks that are 1-consistent with SSD (Table 2 of Nitsure et al. (2024)); σ is reported only
CONSISTENT_RISKS = RISKS[1:]


def integrated_quantile(sorted_x: np.ndarray, p: float) -> float:
    """Q₂(p) = ∫₀ᵖ F⁻¹(t) dt of the empirical distribution of ``sorted_x`` (exact)."""
    n = sorted_x.size
    m = int(np.floor(n * p))
    head = float(sorted_x[:m].sum())
    frac = n * p - m
    return (head + (frac * float(sorted_x[m]) if m < n and frac > 0 else 0.0)) / n


@dataclass(frozen=True)
class MeanRisk:
    """μ and the risks of Table 2 of Nitsure et al. (2024) at level p (module docstring)."""

    mean: float
    sd: float
    semi_deviation: float
    neg_tvar: float
    mad_quantile: float
    gini_tail: float
    p: float

    def risk(self, name: str) -> float:
        return float(getattr(self, name))

    def score(self, name: str) -> float:
        """The mean–risk score μ − r."""
        return self.mean - self.risk(name)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def mean_risk(x: np.ndarray, p: float) -> MeanRisk:
    """Table 2 of Nitsure et al. (2024) for the larger-is-better sample ``x`` at level ``p`` in (0,
    1]."""
    xs = np.sort(np.asarray(x, dtype=np.float64))
    n = xs.size
    mu = float(xs.mean())
    q2 = integrated_quantile(xs, p)
    i = np.arange(1, n + 1)
    w = (1.0 - (2 * i - 1) / (2.0 * n)) / n
    return MeanRisk(
        mean=mu,
        sd=float(xs.std()),
        semi_deviation=float(np.maximum(mu - xs, 0.0).mean()),
        neg_tvar=-q2 / p,
        mad_quantile=mu - q2 / p,
        # pairwise summation, not a BLAS dot: the dot's threads change its last bits
        gini_tail=mu - 2.0 * float(np.sum(xs * w)),
        p=float(p),
    )


def ranks_of(scores: Sequence[float], *, larger_is_better: bool = True) -> np.ndarray:
    """1-based ranks (best first; ties to the earlier index)."""
    s = np.asarray(scores, dtype=np.float64)
    key = -s if larger_is_better else s
    order = np.lexsort((np.arange(s.size), key))
    ranks = np.empty(s.size, dtype=np.int64)
    ranks[order] = np.arange(1, s.size + 1)
    return ranks


def mean_win_rate(
    samples: Sequence[np.ndarray], *, aligned: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """(Eq. 15, Eq. 16 or None) of Nitsure et al. (2024) for k larger-is-better samples."""
    means = np.array([float(np.mean(s)) for s in samples])
    k = means.size
    eq15 = np.array([(np.sum(means <= means[i]) - 1) / (k - 1) for i in range(k)])
    if not aligned:
        return eq15, None
    m = np.vstack([np.asarray(s, dtype=np.float64) for s in samples])
    eq16 = np.empty(k)
    for i in range(k):
        others = np.delete(m, i, axis=0).max(axis=0)
        eq16[i] = float(np.mean(m[i] > others))
    return eq15, eq16


def portfolio(
    metrics: Mapping[str, Sequence[np.ndarray]], weights: Mapping[str, float]
) -> list[np.ndarray]:
    """Eq. 9 of Nitsure et al. (2024): per model, R = Π_i F_i(m_i)^{λ_i} over rows aligned across
    metrics.

    ``metrics[name][model]`` are the larger-is-better values of one metric for one model, rows
    aligned (the same prompts in the same order) across metrics; ``weights`` are the λ_i
    (normalised to sum 1)."""
    names = list(metrics)
    total = float(sum(weights[n] for n in names))
    k = len(next(iter(metrics.values())))
    logs = [np.zeros(np.asarray(metrics[names[0]][a]).size) for a in range(k)]
    for name in names:
        pool = np.sort(np.concatenate([np.asarray(v, dtype=np.float64) for v in metrics[name]]))
        lam = float(weights[name]) / total
        for a, v in enumerate(metrics[name]):
            lo = np.searchsorted(pool, v, "left")
            hi = np.searchsorted(pool, v, "right")
            f = (lo + 0.5 * (hi - lo)) / pool.size
            logs[a] += lam * np.log(f)
    return [np.exp(x) for x in logs]


def _kemeny(rankings: np.ndarray) -> np.ndarray:
    k = rankings.shape[1]
    if k > 16:
        raise ValueError(f"exact Kemeny aggregation supports k <= 16, got {k}")
    # before[v, u]: how many rankings put v before u (a disagreement if u is placed first)
    before = (rankings[:, :, None] < rankings[:, None, :]).sum(axis=0)
    full = 1 << k
    best = np.full(full, np.inf)
    choice = np.full(full, -1, dtype=np.int64)
    cost_in = np.zeros((full, k))  # cost_in[S, v] = Σ_{u ∈ S} before[v, u]
    for s in range(1, full):
        low = (s & -s).bit_length() - 1
        cost_in[s] = cost_in[s & (s - 1)] + before[:, low]
    best[0] = 0.0
    for s in range(1, full):
        for v in range(k):
            if s >> v & 1:
                rest = s & ~(1 << v)
                c = best[rest] + cost_in[rest, v]
                if c < best[s]:
                    best[s], choice[s] = c, v
    order = []
    s = full - 1
    while s:
        v = int(choice[s])
        order.append(v)
        s &= ~(1 << v)
    ranks = np.empty(k, dtype=np.int64)
    ranks[order[::-1]] = np.arange(1, k + 1)
    return ranks


def aggregate_ranks(rankings: Sequence[Sequence[int]], method: str = "borda") -> np.ndarray:
    """One ranking from several (rows: rankings of the same k items, 1 = best)."""
    r = np.asarray(rankings, dtype=np.int64)
    if r.ndim != 2 or r.shape[0] == 0:
        raise ValueError("aggregate_ranks needs a non-empty list of rankings")
    if r.shape[0] == 1:
        return r[0].copy()
    if method == "borda":
        return ranks_of(r.mean(axis=0), larger_is_better=False)
    if method == "kemeny":
        return _kemeny(r)
    if method == "footrule":
        k = r.shape[1]
        positions = np.arange(1, k + 1)
        cost = np.abs(positions[None, :, None] - r.T[:, None, :]).sum(axis=2)
        from scipy.optimize import linear_sum_assignment  # loaded where a footrule is used

        rows, cols = linear_sum_assignment(cost)
        ranks = np.empty(k, dtype=np.int64)
        ranks[rows] = positions[cols]
        return ranks
    raise ValueError(f"unknown rank aggregation {method!r} (borda, kemeny, footrule)")
