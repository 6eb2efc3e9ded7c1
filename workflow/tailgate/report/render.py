"""Assemble ``report.html`` (self-contained) and ``report.md`` from the stage outputs.

The answer comes first: the study's registered answer (:mod:`tailgate.prereg.answer`: H1 or the
criteria it names), the H1 verdict per scorer and scale when H1 is the answer (otherwise it opens
the protocol's sections), the verdict under the registered plan
(entry 0 of the lock) beside the amended one when amendments exist, and the deviations; then the
pair × gate matrix of every scorer and scale with, per band threshold, the value of every gate
behind each cell (collapsible; the headline threshold open), so that a PASS at any threshold can be
checked from the report. The amendments, the pre-registered criteria and the operating
characteristics of the registered procedure follow; then the per-condition cards, the protocol's
sections (:mod:`tailgate.report.sections.protocol`: the fits, the bounded support, the stability
and the effect sizes, the sensitivity, the design power and the diagnostics), each registered
analysis's section, and a glossary naming the papers and terms. Every figure has
a caption; references to the source papers are written as their citations
(:mod:`tailgate.report.glossary`). The HTML embeds every figure as a base64 PNG and its CSS inline:
it references nothing outside itself, and it holds no time of rendering, so identical inputs give
identical bytes. Each image carries ``data-content``, the digest of what it plots
(:mod:`tailgate.report.content`): the audit compares the report's text with the images replaced by
these digests, so another rasteriser's pixels are not mistaken for an edit.
"""

from __future__ import annotations

import dataclasses
import html
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tailgate.files.atomic import write_text
from tailgate.protocol.documents import (
    GATE_ORDER,
    FitsIndex,
    GatesFile,
    PowerGrid,
    RegisteredPlanVerdict,
    Verdict,
    qkey,
)

from . import procedure, tables
from .document import CSS, Document
from .glossary import PAPERS, TERMS, cite
from .model import check_report_inputs
from .sections import FigureBlock, Paragraph, section_of
from .sections.protocol import ordered_gates, protocol_sections

__all__ = ["RenderedReport", "render"]


@dataclass(frozen=True)
class RenderedReport:
    """Where the report was written and what it contains."""

    html_path: str
    md_path: str
    n_figures: int
    n_tables: int


def _decision_amendments(verdict: Verdict) -> list[Any]:
    """Amendments that changed a decision rule: each a deviation, with or without data."""
    return [a for a in verdict["amendments"] if "decision_rule" in a["classes"]]


def _h1_names_the_answer(verdict: Verdict) -> bool:
    answer = verdict.get("answer")  # type: ignore[union-attr]
    return verdict["h1"] is not None and (not answer or "H1" in answer["items"])


def _outcome_line(doc: Document, label: str, outcome: str, why: str) -> None:
    """``label: OUTCOME — why.`` in the answer's type."""
    doc.raw(
        f"<p class='answer'>{html.escape(label)}: "
        f"<span class='verdict-{html.escape(str(outcome))}'>{html.escape(outcome)}</span> — "
        f"{html.escape(why)}.</p>",
        f"{label}: **{outcome}** — {why}.\n",
    )


def _study_answer(doc: Document, verdict: Verdict) -> None:
    """The answer the study registered (tailgate.prereg.answer): its outcome and the criteria
    it names; the H1 verdict's own lines follow when H1 is (part of) the answer."""
    answer = verdict.get("answer")  # type: ignore[union-attr]
    if not answer:
        return
    how = "registered" if answer["registered"] else "derived from what is registered"
    label = f"The study's answer ({', '.join(answer['items'])}; {how})"
    _outcome_line(doc, label, answer["outcome"], answer["summary"])
    rows = [r for r in answer["criteria"] if r.get("analysis") != "protocol"]
    if rows:
        doc.table(
            dataclasses.replace(
                tables.criteria_table(rows), title="The criteria the study's answer names"
            )
        )


def _h1_block(doc: Document, verdict: Verdict) -> None:
    """The protocol's H1 verdict of the headline analysis and of every scorer and scale."""
    h = verdict["headline"]
    h1 = verdict["h1"]
    rule = verdict.get("band_rule")  # type: ignore[union-attr]
    label = (
        f"H1 ({h['scorer']}, {h['scale']} scale, headline q = {h['q']:g}"
        + (f", band rule '{rule}'" if rule else "")
        + ")"
    )
    reason = cite(h1["reason"])
    if rule and reason.startswith(f"band rule '{rule}': "):  # the label names the rule
        reason = reason[len(f"band rule '{rule}': ") :]
    _outcome_line(doc, label, h1["verdict"], reason)
    rows, classes = [], []
    for g in ordered_gates(verdict):
        rows.append(
            (
                g["scorer"],
                g["scale"],
                g["h1"]["verdict"],
                ", ".join(g["h1"]["passing_pairs"]) or "—",
                g["h1"]["reason"],
            )
        )
        classes.append(("", "", "pass" if g["h1"]["verdict"] == "PASS" else "fail", "", ""))
    doc.table(
        tables.Table(
            "H1 per scorer and scale",
            ("scorer", "scale", "H1", "passing pairs", "reason"),
            tuple(rows),
            "The first row is the headline analysis; the matrix below shows which gate stopped "
            "each pair.",
            tuple(classes),
        )
    )


def _answer_section(
    doc: Document, verdict: Verdict, registered: Sequence[RegisteredPlanVerdict]
) -> None:
    doc.heading("Answer")
    _study_answer(doc, verdict)
    plan = verdict.get("registered_plan") or {}  # type: ignore[union-attr]
    if plan.get("answer"):
        first = plan["answer"]
        _outcome_line(
            doc,
            f"Under the registered plan (entry 0 of the lock; {', '.join(first['items'])})",
            first["outcome"],
            first["summary"],
        )
    decision = _decision_amendments(verdict)
    reg_head = next((r for r in registered if r.get("headline")), None)
    if decision:
        seqs = ", ".join(str(a["seq"]) for a in decision)
        then = (
            f" Under the registered plan (entry 0 of the lock) H1 is {reg_head['h1']}."
            if reg_head and reg_head["h1"]
            else " The verdict under the registered plan could not be computed (see the table "
            "below)."
            if verdict["h1"] is not None
            else ""
        )
        doc.para(
            f"Deviation: the results below follow amendment(s) {seqs}, which changed decision "
            f"rules after the registration; they are not confirmatory results.{then}",
            "alert",
        )
    if _h1_names_the_answer(verdict):
        _h1_block(doc, verdict)
    if verdict["amendments"] and verdict["gates"]:
        doc.table(
            tables.registered_plan_table(
                ordered_gates(verdict), registered, int(verdict["amendments"][-1]["seq"])
            )
        )
    n_amend = len(verdict["amendments"])
    amend = (
        f" {n_amend} amendment(s) of the pre-registration are listed under 'Amendments'."
        if n_amend
        else " The pre-registration was never amended."
    )
    if verdict["deviations"]:
        doc.para(
            f"{len(verdict['deviations'])} deviation(s) from the registered plan.{amend}", "alert"
        )
        doc.table(tables.deviations_table(verdict["deviations"]))
    else:
        doc.para(f"No deviations: every result follows the registered plan.{amend}", "ok")


def _summary(gates: GatesFile, q: float) -> str:
    n_pass = n = 0
    for pair in gates["pairs"]:
        for at in pair["thresholds"]:
            if math.isclose(at["q"], q, abs_tol=1e-9):
                n += 1
                n_pass += bool(at["passed"])
    head = " (headline)" if qkey(q) == qkey(gates["headline_q"]) else ""
    return f"Gate values at q = {q:g}{head}: {n_pass} of {n} pairs pass every gate"


def _matrix_section(
    doc: Document, verdict: Verdict, registered: Sequence[RegisteredPlanVerdict]
) -> None:
    if verdict["h1"] is None:  # no protocol registered
        return
    if not _h1_names_the_answer(verdict):
        doc.heading("The tail-shape protocol (Zhou 2026): H1")
        doc.para(
            "The study registers the protocol beside its answer; its H1 verdict is reported "
            "here, after the answer, for the registered pairs only.",
            "note",
        )
        _h1_block(doc, verdict)
    doc.heading("Which gate stopped which pair")
    doc.para(
        "A pair passes at a threshold when every gate holds there: bulk equivalence G1 (mean) "
        "and G2 (TVaR), enough exceedances G3, GPD fit G4, threshold stability G5, separated ξ "
        "CIs P1 and an effect above the floor P2 (Section 3 of Zhou (2026); the glossary defines "
        "each). The matrix shows PASS or the first failing gate; the tables after it give the "
        "value of every gate behind each cell, one per band threshold."
    )
    by_key = {(r["scorer"], r["scale"]): r for r in registered}
    decision = bool(_decision_amendments(verdict))
    for gates in ordered_gates(verdict):
        doc.heading(
            f"{gates['scorer']}, {gates['scale']} scale: H1 {gates['h1']['verdict']}", level=3
        )
        doc.table(tables.pairwise_table(gates))
        for q in gates["band"]:
            doc.open_details(_summary(gates, q), qkey(q) == qkey(gates["headline_q"]))
            doc.table(tables.gate_values_table(gates, q))
            doc.close_details()
        r = by_key.get((gates["scorer"], gates["scale"]))
        if decision and r is not None and r.get("gates"):
            doc.open_details(
                f"Under the registered plan (entry 0): H1 {r['h1']}, "
                f"{gates['scorer']}, {gates['scale']} scale"
            )
            reg = r["gates"]
            doc.table(
                tables.pairwise_table(
                    reg,
                    title=f"Pairwise H1 matrix under the registered plan (entry 0), "
                    f"{reg['scorer']}, {reg['scale']} scale",
                )
            )
            doc.table(tables.gate_values_table(reg, reg["headline_q"]))
            doc.close_details()


def _registration_section(doc: Document, registration: Mapping[str, Any]) -> None:
    """The registered title and hypotheses: the researcher's own words, after the answer."""
    title = str(registration.get("title") or "")
    hypotheses = dict(registration.get("hypotheses") or {})
    if not (title or hypotheses):
        return
    doc.heading("The registered study")
    if title:
        doc.free("Title", title)
    for name, text in hypotheses.items():
        doc.free(f"Hypothesis {name}", str(text))


def _amendment_section(doc: Document, verdict: Verdict) -> None:
    if not verdict["amendments"]:
        return
    doc.heading("Amendments")
    decision = _decision_amendments(verdict)
    if decision:
        doc.para(
            "Amendments that changed decision rules after the registration make the results "
            "deviations from the registered plan, whether or not data existed when they were "
            "made (that is shown as information); the answer above gives the verdict under "
            "both.",
            "alert",
        )
    doc.table(tables.amendments_table(verdict["amendments"]))


def _procedure_companion(doc: Document, verdict: Verdict, power: PowerGrid) -> None:
    if "family_size" not in power and not power.get("operating_characteristics"):
        return
    doc.heading("The registered procedure: multiplicity and operating characteristics")
    procedure.verdict_companion(doc, power)


#: the glossary terms a report without the protocol uses (the others are the protocol's)
_GENERAL_TERMS = (
    "Table N, Fig. N, Section N, Algorithm N",
    "registered plan, entry 0, amendment",
    "deviation",
    "methods note",
)


def _glossary_section(doc: Document, protocol: bool = True) -> None:
    doc.heading("Glossary")
    doc.para(
        "The papers this report cites: tailgate implements the protocol of Zhou 2026 and, as "
        "registered analyses, methods of the other papers."
    )
    _definitions(doc, [(p.short, f"{p.reference}. Used for {p.takes}.") for p in PAPERS.values()])
    doc.para("Terms, in the order the report uses them:")
    _definitions(doc, [(t, text) for t, text in TERMS if protocol or t in _GENERAL_TERMS])


def _definitions(doc: Document, terms: Sequence[tuple[str, str]]) -> None:
    """A definition list: each term in bold with its text."""
    items = "".join(
        f"<dt>{html.escape(term)}</dt><dd>{html.escape(text)}</dd>" for term, text in terms
    )
    md = "".join(f"- **{term}**: {text}\n" for term, text in terms)
    doc.raw(f"<dl>{items}</dl>", md)


def _blocks(doc: Document, blocks: Sequence[Any]) -> None:
    """Add an analysis kind's report blocks (:mod:`tailgate.report.sections`)."""
    for b in blocks:
        if isinstance(b, Paragraph):
            doc.para(b.text, b.css)
        elif isinstance(b, FigureBlock):
            doc.figure(b.figure, b.caption, b.alt)
        else:
            doc.table(b)


def _criteria_section(doc: Document, verdict: Verdict, registered: Sequence[dict] = ()) -> None:
    rows = verdict.get("criteria")  # type: ignore[union-attr]
    if not rows:
        return
    doc.heading("Pre-registered criteria and outcomes")
    doc.table(tables.criteria_table(rows))
    if registered and verdict["amendments"]:
        doc.table(
            tables.registered_criteria_table(registered, int(verdict["amendments"][-1]["seq"]))
        )


def _cards_section(
    doc: Document, verdict: Verdict, fits: FitsIndex, analyses: Sequence[Any]
) -> None:
    columns: dict[str, dict[str, str]] = {}
    for a in analyses:
        section = section_of(str(a.get("kind")))
        if section is not None:
            columns.update(section.card_columns(a["analysis"], a["spec"], a["statistics"]))
    head = verdict["headline"]
    if head is None and not columns:
        return
    doc.heading("Per-condition cards")
    if head is None:  # no protocol: the analyses' columns alone
        names = list(dict.fromkeys(c for col in columns.values() for c in col))
        doc.table(
            tables.Table(
                "Per-condition cards",
                ("condition", *columns),
                tuple((c, *(col.get(c, "") for col in columns.values())) for c in names),
            )
        )
        return
    records = fits.get(head["scorer"], {}).get(head["scale"], {})
    doc.table(tables.cards_table(head["scorer"], head["scale"], head["q"], records, columns))


def _analyses_sections(doc: Document, analyses: Sequence[Any]) -> None:
    for a in analyses:
        section = section_of(str(a.get("kind")))
        if section is None:
            continue
        doc.heading(f"Analysis {a['analysis']}: {section.title}")
        _blocks(doc, section.blocks(a["analysis"], a["spec"], a["statistics"]))


def render(
    verdict: Verdict | dict[str, Any],
    fits: FitsIndex | dict[str, Any],
    power: PowerGrid | dict[str, Any],
    out_html: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    analyses: Sequence[Any] = (),
    registered_plan: Sequence[RegisteredPlanVerdict | dict[str, Any]] = (),
    registered_criteria: Sequence[dict[str, Any]] = (),
    registration: Mapping[str, Any] | None = None,
) -> RenderedReport:
    """Write the study report as self-contained HTML and as Markdown (both atomically).

    Inputs are the structures of :mod:`tailgate.protocol.documents`; they are checked first and a
    missing field raises :class:`tailgate.report.model.ReportInputError` before any file is
    written. ``registered_plan``: the verdict under the registered plan (entry 0 of
    the lock), one per scorer and scale of either plan, when the pre-registration was amended
    (:mod:`tailgate.stages.registered_plan`); ``registered_criteria``: each analysis criterion
    under the registered plan beside its amended outcome (the same module); ``registration``:
    the registered ``title`` and ``hypotheses``, free text shown after the answer, inert in
    either format (:meth:`Document.free`): no registered text comes before the answer.
    """
    check_report_inputs(verdict, fits, power)
    v: Verdict = verdict  # type: ignore[assignment]
    reg: Sequence[RegisteredPlanVerdict] = registered_plan  # type: ignore[assignment]
    doc = Document()
    protocol = v["h1"] is not None  # the study registers the tail-shape protocol
    _answer_section(doc, v, reg)
    _registration_section(doc, registration or {})
    _matrix_section(doc, v, reg)
    _amendment_section(doc, v)
    _criteria_section(doc, v, registered_criteria)
    if protocol:
        _procedure_companion(doc, v, power)  # type: ignore[arg-type]
    _cards_section(doc, v, fits, analyses)  # type: ignore[arg-type]
    if protocol:
        protocol_sections(doc, v, fits, power)  # type: ignore[arg-type]
    _analyses_sections(doc, analyses)
    _glossary_section(doc, protocol)
    doc.draw_figures()
    title = f"tailgate report: {v['study']}"
    header = (
        f"Study {v['study']}, pre-registration hash {v['prereg_hash']}. "
        + (
            "The protocol is that of Zhou 2026: admissibility and stability gates G1–G5 and pass "
            "criteria P1, P2, evaluated for every registered pair at every threshold of the band "
            f"(first failing gate in the order {', '.join(GATE_ORDER)}). "
            if protocol
            else "The study registers no tail-shape protocol: its answer is its analyses' "
            "pre-registered criteria. "
        )
        + "Papers and terms are defined in the glossary at the end."
    )
    toc_html = " · ".join(f"<a href='#{a}'>{html.escape(t)}</a>" for a, t in doc.sections)
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(header)}</p>"
        f"<p class='toc'>Contents: {toc_html}</p>" + "\n".join(doc.html) + "</body></html>\n"
    )
    markdown = f"# {title}\n\n{header}\n\n" + "\n".join(doc.md)
    write_text(out_html, page)
    write_text(out_md, markdown)
    return RenderedReport(str(out_html), str(out_md), doc.n_figures, doc.n_tables)
