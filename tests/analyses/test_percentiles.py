"""Percentile CE, concordance and selection of Guo et al. (2025) against the methods note section C
and references."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats
from tailgate.analyses.percentiles import statistics as P


def _summaries(values: dict[str, dict[str, float]]) -> dict[str, P.Summaries]:
    return {c: P.Summaries(v, {}, 1, 1, "ok") for c, v in values.items()}


def _tau_a_and_ties(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """Kendall's τ_a = (C − D)/N and T, the pairs tied in either ranking, by a plain loop."""
    c = d = t = 0
    for i, j in combinations(range(x.size), 2):
        s = np.sign(x[j] - x[i]) * np.sign(y[j] - y[i])
        if s > 0:
            c += 1
        elif s < 0:
            d += 1
        else:
            t += 1
    n = x.size * (x.size - 1) // 2
    return (c - d) / n, t


# --- concordance --------------------------------------------------------------------------------


def test_concordance_without_ties_is_one_plus_kendall_over_two() -> None:
    g = np.random.default_rng(0)
    for _ in range(20):
        x, y = g.normal(size=9), g.normal(size=9)
        summ = _summaries({f"c{i}": {"mean": x[i], "p50": y[i]} for i in range(9)})
        pi = P.concordance(summ, ("mean", "p50")).statistic
        tau_a, ties = _tau_a_and_ties(x, y)
        assert ties == 0
        assert pi == pytest.approx((1 + tau_a) / 2, abs=1e-12)
        assert pi == pytest.approx((1 + stats.kendalltau(x, y).statistic) / 2, abs=1e-12)


def test_concordance_with_ties_keeps_tied_pairs_in_the_denominator() -> None:
    s1 = np.array([1.0, 2.0, 2.0, 3.0])
    s2 = np.array([1.0, 3.0, 2.0, 2.0])
    summ = _summaries({f"c{i}": {"mean": s1[i], "p50": s2[i]} for i in range(4)})
    res = P.concordance(summ, ("mean", "p50"))
    tau_a, ties = _tau_a_and_ties(s1, s2)
    n = 6
    # by hand: C = 3, D = 1, T = 2 → τ_a = 1/3, π = 2/3 − 2/12 = 1/2
    assert (tau_a, ties) == (pytest.approx(1 / 3), 2)
    assert res.statistic == pytest.approx((1 + tau_a) / 2 - ties / (2 * n)) == 0.5
    assert (res.concordant, res.pairs) == (3, 6)
    assert set(res.disagreeing) == {("c1", "c2"), ("c1", "c3"), ("c2", "c3")}
    # Goodman–Kruskal γ (ties dropped) would give C/(C + D) = 3/4: not what methods note C registers
    assert res.statistic != 0.75


def test_concordance_of_three_summaries_needs_all_to_agree() -> None:
    summ = _summaries(
        {
            "a": {"mean": 1.0, "p50": 1.0, "p95": 1.0},
            "b": {"mean": 2.0, "p50": 2.0, "p95": 0.5},  # p95 disagrees on a–b
            "c": {"mean": 3.0, "p50": 3.0, "p95": 3.0},
        }
    )
    res = P.concordance(summ)
    assert res.summaries == ("mean", "p50", "p95")
    assert res.statistic == pytest.approx(2 / 3) and res.disagreeing == (("a", "b"),)


# --- summaries ----------------------------------------------------------------------------------


def test_standardized_percentiles_use_numpy_linear_percentiles() -> None:
    g = np.random.default_rng(1)
    x = g.gamma(0.7, 2.0, size=1001).astype(np.float32)
    data = P.TokenLosses(x, np.arange(x.size) // 10)
    s = P.summarise(data)
    x64 = x.astype(np.float64)
    q = {k: np.percentile(x64, k, method="linear") for k in (25, 50, 75, 95)}
    assert s.values["p95"] == q[95] and s.values["mean"] == pytest.approx(x64.mean())
    assert s.standardized["p95"] == pytest.approx((q[95] - q[50]) / (q[75] - q[25]))
    assert s.standardized["p50"] == 0.0
    assert s.sequences == 101 and s.status == "ok"


def test_standardized_percentiles_refuse_a_zero_iqr_with_a_status() -> None:
    x = np.array([1.0] * 90 + [5.0] * 10)
    s = P.summarise(P.TokenLosses(x, np.arange(100)))
    assert s.status == "iqr_zero" and s.standardized == {}
    assert math.isnan(P.profile_distance(s, s))


# --- sequence-level bootstrap -------------------------------------------------------------------


def _sequences(g: np.random.Generator, n_seq: int, sd_seq: float, lengths=(20, 80)):
    """Losses exp(μ_s + ε): sequence effects μ_s ~ N(0, sd_seq²), ε ~ N(0, 1); the population
    median is exp(0) = 1 for every sd_seq (symmetric lognormal mixture on the log scale)."""
    lengths = g.integers(*lengths, size=n_seq)
    seq = np.repeat(np.arange(n_seq), lengths)
    mu = np.repeat(g.normal(0, sd_seq, n_seq), lengths)
    return P.TokenLosses(np.exp(mu + g.normal(size=seq.size)).astype(np.float32), seq)


def test_bootstrap_replicates_equal_explicit_resampling() -> None:
    g = np.random.default_rng(2)
    data = _sequences(g, 60, 0.5, lengths=(5, 200))
    boot = P.bootstrap_summaries({"a": data}, 200, seeds=7)
    W = P._sequence_weights(60, 200, 7)
    x = data.losses.astype(np.float64)
    for r in range(200):
        tokens = np.repeat(x, W[r][data.sequence].astype(int))
        ref = [tokens.mean(), *np.percentile(tokens, P.DEFAULT_PERCENTILES)]
        assert np.allclose(boot.replicates["a"][r], ref, rtol=0, atol=1e-12)


def test_bootstrap_window_fallback_is_exact(monkeypatch) -> None:
    g = np.random.default_rng(3)
    data = _sequences(g, 40, 1.0)
    reference = P.bootstrap_summaries({"a": data}, 100, seeds=1).replicates["a"]
    monkeypatch.setattr(P, "WINDOW_SDS", 0.05)  # almost every replicate leaves the window
    narrow = P.bootstrap_summaries({"a": data}, 100, seeds=1).replicates["a"]
    assert np.array_equal(reference, narrow)


@pytest.mark.slow  # a size or coverage simulation: the whole suite runs it
def test_sequence_bootstrap_ci_covers_a_known_percentile_at_the_nominal_rate() -> None:
    """The median of exp(μ_s + ε) is 1. With strong sequence effects the sequence bootstrap covers
    at about 95 % (0.953 over 300 data sets; the band 0.95 ± 0.048 excludes a token bootstrap's
    0.4 by (0.902 − 0.4)/√(0.4·0.6/300) = 18 s.e.) and a token bootstrap (every token its own
    sequence) does not (0.397 over 300 data sets, 0.367 over the first 60). The token
    bootstrap resamples 4,000 tokens where the sequence bootstrap resamples 80 sequences (12
    times the cost), and its rate has only to fall below 0.8: it runs on the first 60 data
    sets, where 0.8 is (0.8 − 0.4)/√(0.4·0.6/60) = 6.3 s.e. above a rate of 0.4, and a rate of
    0.95 (sequence effects too weak for the comparison to mean anything) would be
    (0.95 − 0.8)/√(0.95·0.05/60) = 5.3 s.e. above it."""
    g = np.random.default_rng(4)
    sims, token_sims, covered, covered_tokens = 300, 60, 0, 0
    for r in range(sims):
        data = _sequences(g, 80, 0.8)
        boot = P.bootstrap_summaries({"a": data}, 300, seeds=r, percentiles=(50,))
        lo, hi = boot.confidence_interval("a", "p50")
        covered += lo <= 1.0 <= hi
        if r < token_sims:  # the same data sets: the token bootstrap draws nothing from g
            tokens = P.TokenLosses(data.losses, np.arange(data.losses.size))
            boot = P.bootstrap_summaries({"a": tokens}, 300, seeds=r, percentiles=(50,))
            lo, hi = boot.confidence_interval("a", "p50")
            covered_tokens += lo <= 1.0 <= hi
    rate = covered / sims
    assert abs(rate - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / sims) + 0.01
    assert covered_tokens / token_sims < 0.8


def test_paired_bootstrap_needs_the_same_sequences() -> None:
    g = np.random.default_rng(5)
    a = _sequences(g, 30, 0.3)
    b = P.TokenLosses(a.losses, a.sequence + 1000)
    with pytest.raises(ValueError, match="same sequence ids"):
        P.bootstrap_summaries({"a": a, "b": b}, 10, seeds=1)
    independent = P.bootstrap_summaries({"a": a, "b": b}, 10, seeds={"a": 1, "b": 2})
    assert not independent.paired


# --- selection ----------------------------------------------------------------------------------


def test_selection_argmin_and_rank_correlations() -> None:
    g = np.random.default_rng(6)
    data = {f"step{i}": _sequences(g, 40, 0.3) for i in range(5)}
    summ = {c: P.summarise(d) for c, d in data.items()}
    metric = {c: float(v) for c, v in zip(data, g.normal(size=5), strict=True)}
    boot = P.bootstrap_summaries(data, 100, seeds={c: i for i, c in enumerate(data)})
    sel = P.selection(summ, ("mean", "p50"), metric, boot)
    means = [summ[c].values["mean"] for c in data]
    assert sel.selected["mean"] == list(data)[int(np.argmin(means))]
    m = np.array(list(metric.values()))
    rc = sel.correlations[0]
    assert rc.spearman == pytest.approx(stats.spearmanr(means, m).statistic)
    assert rc.kendall == pytest.approx(stats.kendalltau(means, m).statistic)
    assert rc.spearman_ci.low <= rc.spearman_ci.high


def test_concordance_bootstrap_ci_is_deterministic() -> None:
    g = np.random.default_rng(7)
    seqs = _sequences(g, 50, 0.3)
    data = {
        f"c{i}": P.TokenLosses((seqs.losses * (1 + 0.05 * i)).astype(np.float32), seqs.sequence)
        for i in range(4)
    }
    summ = {c: P.summarise(d) for c, d in data.items()}
    boot = P.bootstrap_summaries(data, 200, seeds=3)
    res = P.concordance(summ, boot=boot)
    assert res.statistic == 1.0  # every summary rises with the scale
    assert res.confidence_interval == P.concordance(summ, boot=boot).confidence_interval
