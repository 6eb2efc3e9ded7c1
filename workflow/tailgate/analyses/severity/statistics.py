"""Severity index b, distribution families and the deployment table (ERRORQUAKE (2026), ERRORQUAKE).

ERRORQUAKE (2026) scores each response on a severity grid (0 = correct, then 0.5, 1.0, …, 4.0) and
summarises the errors by the Gutenberg–Richter slope b of log₁₀ N(M ≥ m) = a − b(m − m_min)
(Section 2, "severity distribution index (b) estimation"). tailgate implements the methods note
section B:

- :func:`estimate_b`: the **finite-grid MLE** (primary, methods note B1 [D]) of the truncated
  geometric
  P(k) = q^k(1−q)/(1−q^{K+1}), q = 10^{−bδ}, on the tail levels m_c + kδ (k = 0..K), beside the
  Aki–Utsu estimator that ERRORQUAKE (2026) uses (biased ≈ −9 % at δ = 0.5, b = 1) and the exact
  unbounded
  discrete estimator, with Aki and Shi–Bolt standard errors;
- :func:`select_mc`: m_c by the Kolmogorov–Smirnov distance over grid values with ≥ 30 events and
  ≥ 3 grid levels (Section 2 of ERRORQUAKE (2026); methods note B2: with two levels the fit is
  exact and would win);
- :func:`bootstrap_b`: percentile CIs from multinomial resamples of the condition's count vector
  (every response, so ε is resampled too), re-selecting m_c in each resample or at a fixed m_c
  (methods note B3);
- :func:`wilson_interval`: error rates and per-million rates (methods note B6);
- :func:`matched_pairs`, :func:`delta_b_test` and :func:`disjoint_pair_count`: matched-accuracy
  pairs (|Δε| < tolerance), disjoint-CI counts, the Δb bootstrap test at a shared m_c (ERRORQUAKE
  (2026), App. O)
  and the headline count with its own resampling CI (ERRORQUAKE (2026), Section 4.1);
- :func:`compare_families`: power law, truncated power law, exponential, stretched exponential
  and lognormal on the positive grid with BIC, Vuong tests for non-nested pairs and likelihood
  ratios (with the boundary χ² mixture) for nested pairs (methods note B4; the ``powerlaw`` package
  is
  not used for fitting: it discretises the families inconsistently and has an off-by-one on
  bounded grids, methods note B5);
- :func:`deployment_table`: events per million queries at severity thresholds with Wilson CIs and
  the empirical tail ratio P(M ≥ 3)/P(M ≥ 1) (ERRORQUAKE (2026), App. Q and Section 4.1), no fit.

Everything works on **count vectors** over the grid: a resample of a condition is a multinomial
count vector, so the bootstrap costs O(levels) per replicate, not O(rows).
"""

from __future__ import annotations

from .b import (
    BEstimate,
    BootstrapB,
    DeltaBTest,
    McSelection,
    PairComparison,
    PairCount,
    SeverityFit,
    analyse_condition,
    bootstrap_b,
    counts_on_grid,
    delta_b_test,
    disjoint_pair_count,
    estimate_b,
    finite_grid_b,
    make_grid,
    matched_pairs,
    select_mc,
)
from .deployment import DeploymentRow, WilsonInterval, deployment_table, wilson_interval
from .families import (
    DECISIVE_RULES,
    FAMILIES,
    FamilyComparison,
    FamilyFit,
    VuongTest,
    compare_families,
    favours,
    fit_family,
    nested_pair,
    vuong_test,
)

__all__ = [
    "DECISIVE_RULES",
    "FAMILIES",
    "BEstimate",
    "BootstrapB",
    "DeltaBTest",
    "DeploymentRow",
    "FamilyComparison",
    "FamilyFit",
    "McSelection",
    "PairComparison",
    "PairCount",
    "SeverityFit",
    "VuongTest",
    "WilsonInterval",
    "analyse_condition",
    "bootstrap_b",
    "compare_families",
    "counts_on_grid",
    "delta_b_test",
    "deployment_table",
    "disjoint_pair_count",
    "estimate_b",
    "favours",
    "finite_grid_b",
    "fit_family",
    "make_grid",
    "matched_pairs",
    "nested_pair",
    "select_mc",
    "vuong_test",
    "wilson_interval",
]
