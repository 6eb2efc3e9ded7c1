"""The papers and terms the report uses, so that no reference is left undefined.

The code and the analysis kinds cite the source papers by author and year ("Eq. 2 of Zhou
(2026)"); :func:`cite` also rewrites a reference by the paper's number in the project's list of
source papers ("Eq. 2 of 000") into the paper's short citation, and
:data:`PAPERS` and :data:`TERMS` make the glossary at the end of the report: each paper with its
title, and each term or numbered part of a paper ("Eq. 2", "Proposition 1", "App. E") with what it
means here.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["PAPERS", "TERMS", "Paper", "cite"]


class Paper(NamedTuple):
    """A source paper: its short citation, the full reference and what tailgate takes from it."""

    short: str
    reference: str
    takes: str


#: The source papers by their number in the seed list.
PAPERS: dict[str, Paper] = {
    "000": Paper(
        "Zhou 2026",
        "L. Zhou, Tail-Shape Estimation in LLM Evaluation Is Fragile: A Protocol for Diagnosing "
        "False Positives (2026, arXiv:2606.16511)",
        "the pre-registered protocol: gates G1–G5, pass criteria P1 and P2, the sample-size bound "
        "(Eq. 2), the logit transform for bounded scores (Proposition 1), the threshold band, the "
        "tolerance sensitivity (App. B) and the synthetic recovery (App. E)",
    ),
    "001": Paper(
        "Nitsure et al. 2024",
        "A. Nitsure, Y. Mroueh, M. Rigotti, K. Greenewald, B. Belgodere, M. Yurochkin, "
        "J. Navratil, I. Melnyk and J. Ross (IBM Research), Risk Assessment and Statistical "
        "Significance in the Age of Foundation Models",
        "first- and second-order stochastic dominance tests, mean–risk models and the metrics "
        "portfolio",
    ),
    "002": Paper(
        "ERRORQUAKE 2026",
        "ERRORQUAKE: Heavy-Tailed Error Severity Distributions in Open-Weight Large Language "
        "Models (2026, arXiv:2606.05170)",
        "the severity index b, its bootstrap CIs and the comparison of severity families",
    ),
    "003": Paper(
        "Guo et al. 2025",
        "H. Guo, S. Dennis, R. Patil and K. Shabahang, When Mean CE Fails: Median CE Can Better "
        "Track Language Model Quality",
        "percentile summaries of per-token cross-entropy and their concordance over checkpoints",
    ),
    "004": Paper(
        "Acharyya et al. 2025",
        "A. Acharyya, C. E. Priebe and H. S. Helm, Testing for LLM Response Differences: the Case "
        "of a Composite Null Consisting of Semantically Irrelevant Query Perturbations (2025, "
        "arXiv:2509.10963)",
        "the composite-null test under irrelevant query perturbations and its budget design",
    ),
}

#: a paper's internal number: after the word for the paper set, after "of" or "in" (a figure or
#: table of it), or before "'s" — a safety net for text that names a paper by that number
_SEED = re.compile(r"\bseeds? (00[0-4])\b|(?<=\b(?:of|in) )(00[0-4])\b|\b(00[0-4])(?='s\b)")


def cite(text: str) -> str:
    """``text`` with every reference to a source paper by its internal number (:data:`_SEED`)
    replaced by the paper's short citation (author, year)."""
    return _SEED.sub(lambda m: PAPERS[next(g for g in m.groups() if g)].short, text)


#: (term, definition), in the order the report first uses them.
TERMS: tuple[tuple[str, str], ...] = (
    (
        "H1",
        "The study's hypothesis (Zhou 2026): some registered pair of conditions is practically "
        "equivalent in mean and TVaR but differs in tail shape ξ by more than the effect-size "
        "floor. PASS when a pair of the multiplicity family passes every gate under the band rule; "
        "otherwise KILL.",
    ),
    (
        "PASS, KILL",
        "The two outcomes of H1 and of a pair: PASS when every gate holds, KILL when one fails. "
        "A cell of the pair × gate matrix shows PASS or the first failing gate.",
    ),
    (
        "POT-GPD",
        "Peaks over threshold: the scores above a high threshold u are fitted by a generalised "
        "Pareto distribution with shape ξ and scale σ.",
    ),
    (
        "ξ (tail shape), Δξ̂",
        "The GPD shape: ξ > 0 a heavy (power-law) tail, ξ = 0 an exponential one, ξ < 0 a bounded "
        "one. Δξ̂ = ξ̂_A − ξ̂_B is the estimated difference of a pair; its CI combines the two "
        "conditions' CIs in quadrature.",
    ),
    (
        "q, threshold band, headline threshold",
        "The threshold u is the q-quantile of the scores. The band is the registered set of q at "
        "which every gate is evaluated; the headline q is the one quoted first.",
    ),
    (
        "band rule",
        "How H1 reads the band: 'any' passes when a pair passes every gate at some threshold of "
        "the band, 'all' at every threshold, 'headline' at the headline threshold.",
    ),
    ("n_exc", "The number of exceedances (scores above the threshold) of a condition."),
    (
        "TVaR",
        "Tail value at risk at level p: the mean of the scores above their p-quantile (p = 0.9 in "
        "Zhou 2026).",
    ),
    (
        "G1, G2",
        "Bulk equivalence: the CI of the difference of means (G1) or of TVaRs (G2) lies inside the "
        "registered tolerance ±δμ or ±δTVaR (two one-sided tests, TOST).",
    ),
    ("G3", "Sample size: both conditions have at least N* exceedances (see Eq. 2)."),
    (
        "G4",
        "Goodness of fit: the Anderson–Darling (AD) test does not reject the GPD for either "
        "condition (p above the registered α).",
    ),
    (
        "G5",
        "Threshold stability: ξ̂ at q − δ and q + δ stays within the registered tolerance of ξ̂ at "
        "q for both conditions; guards against threshold fishing.",
    ),
    ("P1", "Separation: the two conditions' ξ CIs do not overlap (or the registered P1 test)."),
    ("P2", "Effect size: |Δξ̂| exceeds the registered effect-size floor."),
    (
        "admissible",
        "A pair whose comparison is well-posed: G1–G4 pass.",
    ),
    (
        "threshold fishing",
        "Reporting a pass found at one threshold that nearby thresholds do not support; G5 and "
        "the band rule guard against it (Section 6.3 of Zhou 2026).",
    ),
    (
        "Bonferroni, family",
        "The multiplicity correction: each adjusted gate is held at α/m over the m pairs of the "
        "registered family.",
    ),
    (
        "Eq. 2",
        "The sample-size bound of Zhou 2026: n_exc ≥ 2 (z_α/2 + z_β)² (1 + ξ̄)² / Δξ², the "
        "exceedances a two-sample z-test needs to detect Δξ with power 1 − β.",
    ),
    (
        "Proposition 1",
        "Zhou 2026: on a score bounded above (a probability), exceedances that pile up near the "
        "bound drive the GPD fit to ξ̂ → −1 and the AD test to reject; the logit transform "
        "removes the bound (bounded-support contamination).",
    ),
    (
        "App. B",
        "Zhou 2026's sensitivity analysis: the H1 verdict re-evaluated with the equivalence "
        "tolerances halved and doubled (Table 5 there).",
    ),
    (
        "App. E",
        "Zhou 2026's synthetic recovery: simulated GPD pairs with known Δξ show how often P1 ∧ P2 "
        "pass at each n_exc (Fig. 5 there).",
    ),
    (
        "Table N, Fig. N, Section N, Algorithm N",
        "The numbered table, figure, section or algorithm of the cited paper that a table or "
        "figure of this report reproduces or follows.",
    ),
    (
        "registered plan, entry 0, amendment",
        "The lock's entry 0 is the pre-registration as frozen; each later entry is an amendment "
        "with its reason. Every decision-rule amendment is a deviation, before data or after: the "
        "report then shows the verdict under the registered plan beside the amended one.",
    ),
    (
        "deviation",
        "A departure from the registered plan: a decision-rule amendment (with or without data), "
        "or a realised design (rows, bootstrap sizes) other than the registered one.",
    ),
    (
        "operating characteristics",
        "How often the registered procedure passes a pair with a known true Δξ, by simulation: "
        "the false-PASS rate below the floor, the power above it.",
    ),
    (
        "multiverse",
        "The H1 verdict under every alternative analysis another analyst could have run from the "
        "same stored statistics (threshold rule, tolerances, G5 rule, P1 method).",
    ),
    (
        "profile CI, LR test",
        "The profile-likelihood CI of ξ and the two-sample likelihood-ratio test of ξ_A = ξ_B, "
        "reported beside the registered bootstrap percentile CIs.",
    ),
    (
        "methods note",
        "workflow/docs/methods.md in the tailgate repository: the method choices the papers leave "
        "open, numbered by analysis (P the protocol, A the composite-null test, B the severity "
        "index, C percentiles, D dominance), e.g. methods note A5 for the exact size of the "
        "composite-null test.",
    ),
)
