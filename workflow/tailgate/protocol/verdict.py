"""Pairwise matrix across the threshold band and the H1 PASS/KILL rule (Sections 3, 6.3, 6.4).

Band rule. Zhou (2026) kills H1 "when no admissible pair satisfies both pass criteria across the
threshold robustness band", and treats a pass at a single threshold of the band as
threshold-fishing (Section 6.3). tailgate registers one of three rules (``protocol.band_rule``):

``"any"`` (the schema's default)
    H1 PASS iff at least one pair passes every gate (G1–G5) and P1 ∧ P2 at *some* threshold of
    the band. Section 6.3 of Zhou (2026) lets G5 reject the single-threshold pass at q = 0.97 that
    "a naive single-threshold report would have published", and Section 6.4 kills H1 because
    "no pair satisfies all gates at any of the five thresholds": a pass is some threshold of the
    band with every gate, G5 included.
``"all"`` (stricter; this function's default)
    H1 PASS iff at least one pair passes every gate (G1–G5) and P1 ∧ P2 at *every* threshold of
    the band.
``"headline"``
    H1 PASS iff some pair passes everything at the headline threshold; the other thresholds of
    the band are still evaluated and reported. (G5 is the only guard against fishing then.)

Multiplicity: Bonferroni over the m pairs of the registered family (Zhou (2026): the C(4, 2) = 6
model pairs, α = 0.05/6), applied to the gates :class:`GateSettings` lists. Only family pairs can
make H1 pass (``family``); pairs outside it (pilots under ``protocol.family: confirmatory``) are
evaluated and reported as exploratory. The thresholds of the band are *not* adjusted: under
``"all"`` that is conservative, under ``"any"`` the union over thresholds inflates the false-PASS
rate of the procedure, which :mod:`tailgate.protocol.operating` simulates and reports.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tailgate.protocol.gates import ConditionSummary, GateSettings, PairVerdict, evaluate_pair
from tailgate.stats.equivalence import BulkEquivalence

__all__ = ["BAND_RULES", "ProtocolVerdict", "h1_verdict", "pairwise_matrix"]

BAND_RULES = ("any", "all", "headline")


@dataclass(frozen=True)
class ProtocolVerdict:
    """H1 outcome with every pair's gates at every threshold of the band."""

    h1: str  # "PASS" or "KILL"
    band_rule: str
    headline_q: float
    thresholds: tuple[float, ...]
    pairs: tuple[PairVerdict, ...]
    passing_pairs: tuple[tuple[str, str], ...]
    settings: GateSettings

    def at(self, a: str, b: str, q: float) -> PairVerdict:
        for p in self.pairs:
            if {p.a, p.b} == {a, b} and math.isclose(p.q, q, abs_tol=1e-12):
                return p
        raise KeyError((a, b, q))

    def to_dict(self) -> dict[str, Any]:
        return {
            "h1": self.h1,
            "band_rule": self.band_rule,
            "headline_q": self.headline_q,
            "thresholds": list(self.thresholds),
            "pairs": [p.to_dict() for p in self.pairs],
            "passing_pairs": [list(p) for p in self.passing_pairs],
            "settings": self.settings.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProtocolVerdict:
        return cls(
            h1=d["h1"],
            band_rule=d["band_rule"],
            headline_q=float(d["headline_q"]),
            thresholds=tuple(float(q) for q in d["thresholds"]),
            pairs=tuple(PairVerdict.from_dict(p) for p in d["pairs"]),
            passing_pairs=tuple((a, b) for a, b in d["passing_pairs"]),
            settings=GateSettings.from_dict(d["settings"]),
        )


def pairwise_matrix(
    summaries: Mapping[float, Mapping[str, ConditionSummary]],
    bulk: Mapping[tuple[str, str], BulkEquivalence],
    settings: GateSettings,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> tuple[PairVerdict, ...]:
    """Evaluate every pair (A, B) at every threshold of ``summaries``.

    Parameters
    ----------
    summaries : Mapping[float, Mapping[str, ConditionSummary]]
        ``summaries[q][condition]``: the per-condition statistics.
    bulk : Mapping[tuple[str, str], BulkEquivalence]
        ``bulk[(A, B)]``: the difference CIs of the pair (A − B).
    settings : GateSettings
        The registered rules.
    pairs : Sequence[tuple[str, str]] or None, default None
        The registered pairs in registration order (None: every pair, A before B in sorted
        order).

    Returns
    -------
    tuple of PairVerdict
        Threshold by threshold in increasing q, the pairs in order within each.

    Raises
    ------
    KeyError
        If ``bulk`` holds no statistics for a pair.

    References
    ----------
    Zhou (2026), Section 3.
    """
    out = []
    for q in sorted(summaries):
        conds = sorted(summaries[q])
        todo = list(pairs) if pairs is not None else list(itertools.combinations(conds, 2))
        for a, b in todo:
            if (a, b) not in bulk:
                raise KeyError(f"no bulk-equivalence statistics stored for pair ({a}, {b})")
            out.append(evaluate_pair(summaries[q][a], summaries[q][b], bulk[(a, b)], settings))
    return tuple(out)


def h1_verdict(
    pairs: Sequence[PairVerdict],
    *,
    headline_q: float,
    band: Sequence[float],
    settings: GateSettings,
    band_rule: str = "all",
    family: Sequence[tuple[str, str]] | None = None,
) -> ProtocolVerdict:
    """H1 PASS/KILL of Zhou (2026) from the evaluated pairs under the registered band rule.

    Parameters
    ----------
    pairs : Sequence[PairVerdict]
        The evaluated pairs at the thresholds of the band (:func:`pairwise_matrix`).
    headline_q : float
        The headline threshold; it must be in ``band``.
    band : Sequence[float]
        The thresholds of the band.
    settings : GateSettings
        The registered rules (recorded in the verdict).
    band_rule : str, default "all"
        ``"any"``, ``"all"`` or ``"headline"`` (module docstring).
    family : Sequence[tuple[str, str]] or None, default None
        The pairs that may make H1 pass (None: every evaluated pair).

    Returns
    -------
    ProtocolVerdict
        PASS when a family pair passes under ``band_rule``, else KILL, with every pair and the
        passing pairs in sorted order.

    Raises
    ------
    ValueError
        If ``band_rule`` is unknown or ``headline_q`` is not in ``band``.

    References
    ----------
    Zhou (2026), Sections 3, 6.3 and 6.4.
    """
    if band_rule not in BAND_RULES:
        raise ValueError(f"band_rule must be one of {BAND_RULES}, got {band_rule!r}")
    thresholds = tuple(sorted(float(q) for q in band))
    if not any(math.isclose(headline_q, q, abs_tol=1e-12) for q in thresholds):
        raise ValueError(f"headline threshold {headline_q} is not in the band {thresholds}")
    by_pair: dict[tuple[str, str], dict[float, bool]] = {}
    for p in pairs:
        by_pair.setdefault((p.a, p.b), {})[p.q] = p.passed

    def passes(results: dict[float, bool]) -> bool:
        def at(q: float) -> bool:
            return any(math.isclose(q, k, abs_tol=1e-12) and v for k, v in results.items())

        if band_rule == "headline":
            return at(headline_q)
        if band_rule == "any":
            return any(at(q) for q in thresholds)
        return all(at(q) for q in thresholds)

    allowed = None if family is None else {tuple(p) for p in family}
    passing = tuple(
        sorted(k for k, v in by_pair.items() if (allowed is None or k in allowed) and passes(v))
    )
    return ProtocolVerdict(
        h1="PASS" if passing else "KILL",
        band_rule=band_rule,
        headline_q=float(headline_q),
        thresholds=thresholds,
        pairs=tuple(pairs),
        passing_pairs=passing,
        settings=settings,
    )
