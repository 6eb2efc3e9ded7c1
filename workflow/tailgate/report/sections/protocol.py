"""The report's sections of the tail-shape protocol (Zhou 2026), beside the analysis kinds'.

An analysis kind's section draws what its analysis stored (:mod:`tailgate.report.sections`); the
protocol's draws what its stages stored: the per-condition fits (Tables 2–4 of Zhou (2026)), the
bounded-support diagnosis with its QQ plots (Section 6.2, Fig. 2; a collapsible grid), the
stability scans and the forest plot (Sections 6.3–6.4, Figs 3–4), the tolerance sensitivity
(Table 5), the synthetic-recovery power grid (App. E, Fig. 5), then the inference and threshold
diagnostics of :mod:`tailgate.report.procedure`. The answer, the H1 verdict and the pair × gate
matrix come first, in :mod:`tailgate.report.render`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tailgate.protocol.documents import (
    GATE_ORDER,
    FitsIndex,
    GatesFile,
    PowerGrid,
    Verdict,
    fit_at,
)
from tailgate.report import figures, procedure, tables
from tailgate.report.document import Document

__all__ = ["fishing_points", "forest_rows", "ordered_gates", "protocol_sections"]


def protocol_sections(doc: Document, verdict: Verdict, fits: FitsIndex, power: PowerGrid) -> None:
    """Add the protocol's sections, after the per-condition cards."""
    _fits(doc, verdict, fits)
    _bounded_support(doc, verdict, fits)
    _stability_and_effects(doc, verdict, fits)
    _sensitivity_and_power(doc, verdict, power)
    procedure.procedure_sections(doc, verdict, fits)


def ordered_gates(verdict: Verdict) -> list[GatesFile]:
    """The gates documents, the headline scorer and scale first, then in registration order."""
    head = verdict["headline"]
    key = (head["scorer"], head["scale"])
    first = [g for g in verdict["gates"] if (g["scorer"], g["scale"]) == key]
    return first + [g for g in verdict["gates"] if (g["scorer"], g["scale"]) != key]


def fishing_points(gates: GatesFile, fits: FitsIndex) -> list[figures.FishingPoint]:
    """Thresholds where a pair passed every gate except G5 (Section 6.3 of Zhou (2026))."""
    records = fits.get(gates["scorer"], {}).get(gates["scale"], {})
    points: list[figures.FishingPoint] = []
    for pair in gates["pairs"]:
        for at in pair["thresholds"]:
            outcomes = at["gates"]
            g5 = outcomes.get("G5")
            if g5 is None or g5["passed"] is not False:
                continue
            others = [outcomes.get(g) for g in GATE_ORDER if g != "G5"]
            if all(o is not None and o["passed"] for o in others):
                label = f"{pair['a']} vs {pair['b']}"
                for condition in (pair["a"], pair["b"]):
                    record = records.get(condition)
                    fit = None if record is None else fit_at(record, at["q"])
                    if fit is not None and fit["xi"] is not None:
                        points.append(
                            {"condition": condition, "q": at["q"], "xi": fit["xi"], "pair": label}
                        )
    return points


def forest_rows(gates: GatesFile, q: float) -> list[figures.ForestRow]:
    """Forest-plot rows at ``q``: admissible means G1–G4 passed (Fig. 4 of Zhou (2026))."""
    rows: list[figures.ForestRow] = []
    for pair in gates["pairs"]:
        at = next((t for t in pair["thresholds"] if math.isclose(t["q"], q, abs_tol=1e-9)), None)
        if at is None:
            continue
        admissible = all(
            (at["gates"].get(g) or {}).get("passed") is True for g in ("G1", "G2", "G3", "G4")
        )
        rows.append(
            {
                "label": f"{pair['a']} vs {pair['b']}",
                "delta_xi": at["delta_xi"],
                "ci": at["delta_xi_ci"],
                "admissible": admissible,
                "passed": bool(at["passed"]),
            }
        )
    return rows


def _reported_qs(verdict: Verdict, scorer: str, scale: str) -> list[float]:
    """The thresholds the fits tables show: the headline one and the band's highest."""
    for g in verdict["gates"]:
        if g["scorer"] == scorer and g["scale"] == scale:
            return list(dict.fromkeys([g["headline_q"], max(g["band"])]))
    return [verdict["headline"]["q"]]


def _fits(doc: Document, verdict: Verdict, fits: FitsIndex) -> None:
    doc.heading("Per-condition fits")
    for scorer, scales in fits.items():
        for scale, records in scales.items():
            for q in _reported_qs(verdict, scorer, scale):
                doc.table(tables.fits_table(scorer, scale, records, q))


def _qq_figures(
    doc: Document, scorer: str, prob: Mapping[str, Any], logit: Mapping[str, Any]
) -> None:
    """The QQ plot of every condition (Fig. 2 of Zhou (2026)) in a collapsible two-column grid."""
    made = []
    for condition, prob_rec in prob.items():
        logit_rec = logit.get(condition)
        if logit_rec is None:
            continue
        common = sorted(set(prob_rec["qq"]) & set(logit_rec["qq"]), key=float)
        if common:
            made.append((condition, prob_rec, logit_rec, common[-1]))
    if not made:
        return
    doc.open_details(f"QQ plots of {len(made)} conditions, {scorer}: probability vs logit scale")
    doc.para(figures.CAPTIONS["qq"], "note")
    doc.raw("<div class='grid'>")
    for condition, prob_rec, logit_rec, key in made:
        fp = fit_at(prob_rec, float(key))
        fl = fit_at(logit_rec, float(key))
        fig = figures.qq_figure(
            prob_rec["qq"][key],
            logit_rec["qq"][key],
            condition=condition,
            ad_p_prob=fp["ad_p"] if fp else None,
            ad_p_logit=fl["ad_p"] if fl else None,
        )
        ad = (
            f" (AD p {tables.fmt(fp['ad_p'])} probability, {tables.fmt(fl['ad_p'])} logit)"
            if fp and fl
            else ""
        )
        doc.figure(
            fig,
            f"QQ plot of {condition}'s exceedances above q = {key}, probability scale (left) "
            f"and logit scale (right){ad}.",
            f"QQ {scorer} {condition} q={key}",
        )
    doc.raw("</div>")
    doc.close_details()


def _bounded_support(doc: Document, verdict: Verdict, fits: FitsIndex) -> None:
    pairs = [
        (scorer, scales["probability"], scales["logit"])
        for scorer, scales in fits.items()
        if "probability" in scales and "logit" in scales
    ]
    if not pairs:
        return
    doc.heading("Bounded support: probability vs logit scale")
    for scorer, prob, logit in pairs:
        for q in _reported_qs(verdict, scorer, "logit"):
            doc.table(tables.probability_vs_logit_table(scorer, prob, logit, q))
        _qq_figures(doc, scorer, prob, logit)


def _stability_and_effects(doc: Document, verdict: Verdict, fits: FitsIndex) -> None:
    doc.heading("Threshold stability and effect sizes")
    for gates in ordered_gates(verdict):
        records = fits.get(gates["scorer"], {}).get(gates["scale"], {})
        scans = {c: r["stability"] for c, r in records.items()}
        if scans:
            fig = figures.stability_figure(
                scans,
                band=gates["band"],
                fishing=fishing_points(gates, fits),
                title=f"{gates['scorer']}, {gates['scale']} scale",
            )
            doc.figure(
                fig,
                figures.CAPTIONS["stability"],
                f"stability {gates['scorer']} {gates['scale']}",
            )
        rows = forest_rows(gates, gates["headline_q"])
        if rows:
            fig = figures.forest_figure(
                rows,
                floor=gates["floor"],
                q=gates["headline_q"],
                title=f"{gates['scorer']}, {gates['scale']} scale",
            )
            doc.figure(
                fig, figures.CAPTIONS["forest"], f"forest {gates['scorer']} {gates['scale']}"
            )


def _sensitivity_and_power(doc: Document, verdict: Verdict, power: PowerGrid) -> None:
    if verdict["sensitivity"]:
        doc.heading("Sensitivity to the equivalence tolerances")
        for sens in verdict["sensitivity"]:
            doc.table(tables.sensitivity_table(sens))
    doc.heading("Design power: synthetic recovery")
    doc.table(tables.power_table(power))
    doc.figure(figures.power_figure(power), figures.CAPTIONS["power"], "power")
