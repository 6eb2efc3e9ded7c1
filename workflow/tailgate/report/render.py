"""Assemble ``report.html`` (self-contained) and ``report.md`` from the stage outputs.

Order follows the pre-registration contract (DESIGN: "Amendments"): deviations and amendments
first, then the H1 verdict, per-condition fits (Tables 2–4 of seed 000), the bounded-support
diagnosis with QQ plots (Section 6.2, Fig. 2), stability scans with fishing points (Section 6.3,
Fig. 3), the pairwise matrix and forest plot (Section 6.4, Fig. 4), the tolerance sensitivity
(Table 5) and the synthetic-recovery power grid (App. E, Fig. 5). The HTML embeds every figure
as a base64 PNG and its CSS inline: it references nothing outside itself.
"""

from __future__ import annotations

import base64
import html
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tailgate.atomic import write_text

from . import figures, procedure, tables
from .model import (
    GATE_ORDER,
    ConditionFits,
    FitsIndex,
    GatesFile,
    PowerGrid,
    Verdict,
    check_report_inputs,
)

__all__ = ["RenderedReport", "fishing_points", "forest_rows", "render"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:1em 0;font-size:.85em}
caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.note{font-size:.85em;color:#555;margin-top:-.6em}
.alert{border-left:4px solid #d62728;background:#fdecea;padding:.5em 1em}
.ok{border-left:4px solid #2ca02c;background:#eaf7ea;padding:.5em 1em}
figure{margin:1em 0}figure img{max-width:100%}figcaption{font-size:.85em;color:#555}
.verdict-PASS{color:#2ca02c;font-weight:700}.verdict-KILL{color:#d62728;font-weight:700}
"""


@dataclass(frozen=True)
class RenderedReport:
    """Where the report was written and what it contains."""

    html_path: str
    md_path: str
    n_figures: int
    n_tables: int


class _Doc:
    """Parallel HTML and Markdown bodies."""

    def __init__(self) -> None:
        self.html: list[str] = []
        self.md: list[str] = []
        self.n_figures = 0
        self.n_tables = 0

    def heading(self, text: str, level: int = 2) -> None:
        self.html.append(f"<h{level}>{html.escape(text)}</h{level}>")
        self.md.append(f"{'#' * level} {text}\n")

    def para(self, text: str, css: str | None = None) -> None:
        cls = f" class='{css}'" if css else ""
        self.html.append(f"<p{cls}>{html.escape(text)}</p>")
        self.md.append(f"{'> ' if css == 'alert' else ''}{text}\n")

    def table(self, table: tables.Table) -> None:
        self.html.append(table.html())
        self.md.append(table.markdown())
        self.n_tables += 1

    def figure(self, fig: Any, caption: str, alt: str) -> None:
        data = base64.b64encode(figures.png_bytes(fig)).decode("ascii")
        self.html.append(
            f"<figure><img alt='{html.escape(alt, quote=True)}' "
            f"src='data:image/png;base64,{data}'/>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
        self.md.append(f"*Figure ({alt}), embedded in report.html: {caption}*\n")
        self.n_figures += 1


def _fit_xi(record: ConditionFits | None, q: float) -> float | None:
    if record is None:
        return None
    fit = tables.fit_at(record, q)
    return None if fit is None else fit["xi"]


def fishing_points(gates: GatesFile, fits: FitsIndex) -> list[figures.FishingPoint]:
    """Thresholds where a pair passed every gate except G5 (Section 6.3 of seed 000)."""
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
                    xi = _fit_xi(records.get(condition), at["q"])
                    if xi is not None:
                        points.append(
                            {"condition": condition, "q": at["q"], "xi": xi, "pair": label}
                        )
    return points


def forest_rows(gates: GatesFile, q: float) -> list[figures.ForestRow]:
    """Forest-plot rows at ``q``: admissible means G1–G4 passed (Fig. 4 of seed 000)."""
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


def _amendment_section(doc: _Doc, verdict: Verdict) -> None:
    doc.heading("Deviations and amendments")
    decision = [
        a for a in verdict["amendments"] if "decision_rule" in a["classes"] and a["data_existed"]
    ]
    if decision:
        seqs = ", ".join(str(a["seq"]) for a in decision)
        doc.para(
            f"Results below follow amendment(s) {seqs}, which changed decision rules after data "
            f"existed: they are deviations from the registered plan, not confirmatory results.",
            "alert",
        )
    elif verdict["amendments"] or verdict["deviations"]:
        doc.para("The pre-registration was amended; see the entries below.", "alert")
    else:
        doc.para("No amendments and no deviations: every result follows the registered plan.", "ok")
    doc.table(tables.deviations_table(verdict["deviations"]))
    doc.table(tables.amendments_table(verdict["amendments"]))


def _verdict_section(doc: _Doc, verdict: Verdict) -> None:
    doc.heading("Verdict")
    h = verdict["headline"]
    h1 = verdict["h1"]
    doc.html.append(
        f"<p>H1 (headline: {html.escape(h['scorer'])}, {html.escape(h['scale'])} scale, "
        f"q = {h['q']:g}): <span class='verdict-{html.escape(h1['verdict'])}'>"
        f"{html.escape(h1['verdict'])}</span>. {html.escape(h1['reason'])}</p>"
    )
    doc.md.append(
        f"H1 (headline: {h['scorer']}, {h['scale']} scale, q = {h['q']:g}): "
        f"**{h1['verdict']}**. {h1['reason']}\n"
    )
    rows = tuple(
        (
            g["scorer"],
            g["scale"],
            g["h1"]["verdict"],
            ", ".join(g["h1"]["passing_pairs"]) or "—",
            g["h1"]["reason"],
        )
        for g in verdict["gates"]
    )
    doc.table(
        tables.Table(
            "H1 per scorer and scale",
            ("scorer", "scale", "H1", "passing pairs", "reason"),
            rows,
        )
    )


def _band(verdict: Verdict, scorer: str, scale: str) -> tuple[float, list[float]]:
    for g in verdict["gates"]:
        if g["scorer"] == scorer and g["scale"] == scale:
            return g["headline_q"], list(g["band"])
    return verdict["headline"]["q"], [verdict["headline"]["q"]]


def _fits_section(doc: _Doc, verdict: Verdict, fits: FitsIndex) -> None:
    doc.heading("Per-condition fits")
    for scorer, scales in fits.items():
        for scale, records in scales.items():
            headline, band = _band(verdict, scorer, scale)
            for q in dict.fromkeys([headline, max(band)]):
                doc.table(tables.fits_table(scorer, scale, records, q))


def _bounded_section(doc: _Doc, verdict: Verdict, fits: FitsIndex) -> None:
    pairs = [
        (scorer, scales["probability"], scales["logit"])
        for scorer, scales in fits.items()
        if "probability" in scales and "logit" in scales
    ]
    if not pairs:
        return
    doc.heading("Bounded support: probability vs logit scale")
    for scorer, prob, logit in pairs:
        headline, band = _band(verdict, scorer, "logit")
        for q in dict.fromkeys([headline, max(band)]):
            doc.table(tables.probability_vs_logit_table(scorer, prob, logit, q))
        for condition, prob_rec in prob.items():
            logit_rec = logit.get(condition)
            if logit_rec is None:
                continue
            common = sorted(set(prob_rec["qq"]) & set(logit_rec["qq"]), key=float)
            if not common:
                continue
            key = common[-1]
            fp = tables.fit_at(prob_rec, float(key))
            fl = tables.fit_at(logit_rec, float(key))
            fig = figures.qq_figure(
                prob_rec["qq"][key],
                logit_rec["qq"][key],
                condition=condition,
                ad_p_prob=fp["ad_p"] if fp else None,
                ad_p_logit=fl["ad_p"] if fl else None,
            )
            doc.figure(fig, figures.CAPTIONS["qq"], f"QQ {scorer} {condition} q={key}")


def _stability_and_pairs(doc: _Doc, verdict: Verdict, fits: FitsIndex) -> None:
    doc.heading("Threshold stability and the pairwise matrix")
    for gates in verdict["gates"]:
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
        doc.table(tables.pairwise_table(gates))
        doc.table(tables.gate_detail_table(gates, gates["headline_q"]))
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


def _sensitivity_and_power(doc: _Doc, verdict: Verdict, power: PowerGrid) -> None:
    if verdict["sensitivity"]:
        doc.heading("Sensitivity to the equivalence tolerances")
        for sens in verdict["sensitivity"]:
            doc.table(tables.sensitivity_table(sens))
    doc.heading("Design power: synthetic recovery")
    doc.table(tables.power_table(power))
    doc.figure(figures.power_figure(power), figures.CAPTIONS["power"], "power")


def _blocks(doc: _Doc, blocks: Sequence[Any]) -> None:
    """Add an analysis kind's report blocks (tailgate.analyses.base)."""
    from tailgate.analyses.base import FigureBlock, Paragraph

    for b in blocks:
        if isinstance(b, Paragraph):
            doc.para(b.text, b.css)
        elif isinstance(b, FigureBlock):
            doc.figure(b.figure, b.caption, b.alt)
        else:
            doc.table(b)


def _criteria_section(doc: _Doc, verdict: Verdict) -> None:
    rows = verdict.get("criteria")  # type: ignore[union-attr]
    if not rows:
        return
    doc.heading("Pre-registered criteria and outcomes")
    doc.table(tables.criteria_table(rows))


def _cards_section(doc: _Doc, verdict: Verdict, fits: FitsIndex, analyses: Sequence[Any]) -> None:
    from tailgate.analyses.registry import KINDS

    head = verdict["headline"]
    records = fits.get(head["scorer"], {}).get(head["scale"], {})
    columns: dict[str, dict[str, str]] = {}
    for a in analyses:
        kind = KINDS.get(str(a.get("kind")))
        if kind is not None:
            columns.update(kind.card_columns(a["analysis"], a["spec"], a["statistics"]))
    doc.heading("Per-condition cards")
    doc.table(tables.cards_table(head["scorer"], head["scale"], head["q"], records, columns))


def _analyses_sections(doc: _Doc, analyses: Sequence[Any]) -> None:
    from tailgate.analyses.registry import KINDS

    for a in analyses:
        kind = KINDS.get(str(a.get("kind")))
        if kind is None:
            continue
        doc.heading(f"Analysis {a['analysis']}: {kind.title}")
        _blocks(doc, kind.report_section(a["analysis"], a["spec"], a["statistics"]))


def render(
    verdict: Verdict | dict[str, Any],
    fits: FitsIndex | dict[str, Any],
    power: PowerGrid | dict[str, Any],
    out_html: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    analyses: Sequence[Any] = (),
) -> RenderedReport:
    """Write the study report as self-contained HTML and as Markdown (both atomically).

    Inputs are the structures of :mod:`tailgate.report.model`; they are checked first and a
    missing field raises :class:`tailgate.report.model.ReportInputError` before any file is
    written.
    """
    check_report_inputs(verdict, fits, power)
    doc = _Doc()
    _amendment_section(doc, verdict)  # type: ignore[arg-type]
    _verdict_section(doc, verdict)  # type: ignore[arg-type]
    procedure.verdict_companion(doc, power)
    _criteria_section(doc, verdict)  # type: ignore[arg-type]
    _cards_section(doc, verdict, fits, analyses)  # type: ignore[arg-type]
    _fits_section(doc, verdict, fits)  # type: ignore[arg-type]
    _bounded_section(doc, verdict, fits)  # type: ignore[arg-type]
    _stability_and_pairs(doc, verdict, fits)  # type: ignore[arg-type]
    _sensitivity_and_power(doc, verdict, power)  # type: ignore[arg-type]
    procedure.procedure_sections(doc, verdict, fits)
    _analyses_sections(doc, analyses)
    title = f"tailgate report: {verdict['study']}"
    header = (
        f"Pre-registration hash {verdict['prereg_hash']}. Gates G1–G5, P1, P2 as in Section 3 "
        f"of seed 000 (first failing gate in the order {', '.join(GATE_ORDER)})."
    )
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(header)}</p>"
        + "\n".join(doc.html)
        + "</body></html>\n"
    )
    markdown = f"# {title}\n\n{header}\n\n" + "\n".join(doc.md)
    write_text(out_html, page)
    write_text(out_md, markdown)
    return RenderedReport(str(out_html), str(out_md), doc.n_figures, doc.n_tables)
