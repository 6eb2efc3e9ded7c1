"""Report stage: ``report.html`` (self-contained) and ``report.md``, plus standalone figures.

Renders :func:`tailgate.report.render` from ``verdict.json``, every ``fits/…json``,
``power.json`` and ``operating.json``: the answer first (verdict, the pair × gate matrix with the
gate values at every band threshold, deviations, and after an amendment the outcome under the
registered plan beside the amended one, as ``verdict.json`` records it
(:mod:`tailgate.stages.registered_plan`), then tables like Tables 2–5 and figures like Figs 2–5 of
Zhou (2026). The standalone PNGs (``figures/``) are the entries of ``snakemake --report``; each
has a sidecar ``figures/<name>.json`` recording what it plots (:mod:`tailgate.report.content`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tailgate.plans.layout import FIGURES, LAYOUT, Layout
from tailgate.report import figures
from tailgate.report.raster import available_processes
from tailgate.report.render import render
from tailgate.report.sections.protocol import fishing_points
from tailgate.stages.analyses import read_analyses
from tailgate.stages.common import open_stage, read_json

__all__ = ["render_report", "report_inputs", "report_stage", "rerendered"]


@figures.rendered_once()  # the standalone figures are figures the report embeds
def render_report(
    verdict: str | os.PathLike[str],
    fits: Sequence[str | os.PathLike[str]],
    power: str | os.PathLike[str] | None,
    out_html: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    figure_paths: Mapping[str, str | os.PathLike[str]],
    analyses: Sequence[str | os.PathLike[str]] = (),
    study: Any = None,
) -> list[tuple[str | os.PathLike[str], list[str | os.PathLike[str]]]]:
    """Write the report and its figures from stored statistics; return (file, inputs) pairs.

    After an amendment the report shows the outcome under the registered plan beside the amended
    one, as ``verdict.json`` records it (``registered_plan``). The report stage records
    what this writes; ``tailgate audit`` calls it into a scratch folder and compares the content
    with the recorded report (:mod:`tailgate.audit.compare`: a report edited by hand cannot
    pass).
    """
    # the registered title and hypotheses, shown after the answer as inert text (the
    # pre-registration, which the lock pins, is the only other input; the statistics come
    # from the files read)
    registration = (
        None if study is None else {"title": study.title, "hypotheses": study.hypotheses()}
    )
    v = read_json(verdict, "verdict")
    plan = v.get("registered_plan") or {}
    index: dict[str, dict[str, dict[str, Any]]] = {}
    for f in fits:
        doc = read_json(f, "fits")
        index.setdefault(doc["scorer"], {}).setdefault(doc["scale"], {})[doc["condition"]] = doc
    docs = read_analyses(analyses)
    p = None  # the study registers no protocol: the answer and the analyses only
    if power is not None:
        p = read_json(power, "power")
        operating = Layout(Path(power).parent).file("operating")  # in power.json's folder
        p.update(read_json(operating, "operating characteristics"))
    render(
        v,
        index,
        p,
        out_html,
        out_md,
        analyses=docs,
        registered_plan=plan.get("h1", []) if power is not None else (),
        registered_criteria=plan.get("criteria", []),
        registration=registration,
    )
    if power is None:
        inputs = [verdict, *analyses]
        return [(out_html, inputs), (out_md, inputs)]
    inputs = [verdict, *fits, power, operating, *analyses]
    figures.write_power(figure_paths["power"], p)
    head = v["headline"]
    gates = next(
        g for g in v["gates"] if (g["scorer"], g["scale"]) == (head["scorer"], head["scale"])
    )
    scans = {c: r["stability"] for c, r in index[head["scorer"]][head["scale"]].items()}
    figures.write_stability(
        figure_paths["stability"],
        scans,
        band=gates["band"],
        fishing=fishing_points(gates, index),
        title=f"{head['scorer']}, {head['scale']} scale",
    )
    return [
        (out_html, inputs),
        (out_md, inputs),
        (figure_paths["power"], [power]),
        (figures.sidecar_path(figure_paths["power"]), [power]),
        (figure_paths["stability"], [verdict, *fits]),
        (figures.sidecar_path(figure_paths["stability"]), [verdict, *fits]),
    ]


def report_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    verdict: str | os.PathLike[str],
    fits: Sequence[str | os.PathLike[str]],
    power: str | os.PathLike[str] | None,
    out_html: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    figure_paths: Mapping[str, str | os.PathLike[str]],
    analyses: Sequence[str | os.PathLike[str]] = (),
    processes: int = 1,
) -> None:
    """Render the report; ``figure_paths`` maps ``power`` and ``stability`` to PNG paths;
    ``analyses``: every ``analyses/<name>/statistics.json``; ``power`` None (and no fits or
    figures) when the study registers no protocol. The figures are drawn by up to
    ``processes`` processes (at most the CPUs this job may use): the same bytes
    (:mod:`tailgate.report.raster`)."""
    ctx = open_stage(prereg, results)
    with figures.drawing_processes(min(processes, available_processes())):
        written = render_report(
            verdict, fits, power, out_html, out_md, figure_paths, analyses, study=ctx.study
        )
    for out, inputs in written:
        ctx.record(out, inputs=inputs, kind="report")


def report_inputs(results: Path, study: Any) -> dict[str, Any]:
    """The report rule's inputs inside ``results``, in the rule's order (rules/report.smk)."""
    from tailgate.plans.reads import scales_for

    layout = Layout(results)
    names = study.protocol_conditions()  # none without the protocol
    fits = [
        layout.fits(s["name"], scale, c)
        for s in study.scorers()
        for scale in scales_for(study, s["name"])
        for c in names
    ]
    return {
        "verdict": layout.file("verdict"),
        "fits": fits,
        "power": layout.file("power") if study.has_protocol else None,
        "analyses": [layout.analysis(name) for name in study.analyses()],
    }


def rerendered(study: Any) -> dict[str, str]:
    """What the report rule writes: the report and, with the protocol, the standalone figures
    and their sidecars, by role (paths relative to the results folder)."""
    names = {"html": LAYOUT["report"], "md": LAYOUT["report_md"]}
    for figure in FIGURES if study.has_protocol else ():
        names[figure] = LAYOUT["figure"].format(figure=figure)
        names[f"{figure} content"] = LAYOUT["figure_content"].format(figure=figure)
    return names
