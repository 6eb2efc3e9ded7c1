"""Report stage: ``report.html`` (self-contained) and ``report.md``, plus standalone figures.

Renders :func:`tailgate.report.render` from ``verdict.json``, every ``fits/…json`` and
``power.json``: deviations and amendments first, then tables like Tables 2–5 and figures like
Figs 2–5 of seed 000. The standalone PNGs (``figures/``) are the entries of ``snakemake --report``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from tailgate.report import figures, render
from tailgate.report.render import fishing_points

from .common import open_stage, read_json

__all__ = ["report_stage"]


def report_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    verdict: str | os.PathLike[str],
    fits: Sequence[str | os.PathLike[str]],
    power: str | os.PathLike[str],
    out_html: str | os.PathLike[str],
    out_md: str | os.PathLike[str],
    figure_paths: Mapping[str, str | os.PathLike[str]],
) -> Any:
    """Render the report; ``figure_paths`` maps ``power`` and ``stability`` to PNG paths."""
    ctx = open_stage(prereg, results)
    v = read_json(verdict, "verdict")
    index: dict[str, dict[str, dict[str, Any]]] = {}
    for f in fits:
        doc = read_json(f, "fits")
        index.setdefault(doc["scorer"], {}).setdefault(doc["scale"], {})[doc["condition"]] = doc
    p = read_json(power, "power")
    rendered = render(v, index, p, out_html, out_md)
    inputs = [verdict, *fits, power]
    ctx.record(out_html, inputs=inputs, kind="report")
    ctx.record(out_md, inputs=inputs, kind="report")
    figures.write_power(figure_paths["power"], p)
    ctx.record(figure_paths["power"], inputs=[power], kind="report")
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
    ctx.record(figure_paths["stability"], inputs=[verdict, *fits], kind="report")
    return rendered
