"""Transform stage: merged scores → severities on one scale (Section 6.2 of seed 000).

``transform[scorer, scale]`` writes ``severities/<scorer>/<scale>/<condition>.parquet`` for every
condition and ``severities/<scorer>/<scale>/transform.json`` with, per condition, the registered ε
and how many scores were clipped at each end (a large count means ε is part of the result).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tailgate.atomic import write_json
from tailgate.transform import write_severities

from .common import open_stage

__all__ = ["transform_stage"]


def transform_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    scale: str,
    merged: Mapping[str, str | os.PathLike[str]],
    out: Mapping[str, str | os.PathLike[str]],
    summary: str | os.PathLike[str],
) -> dict[str, dict]:
    """Put every condition's merged scores on ``scale``; ``merged``/``out`` map condition → path."""
    ctx = open_stage(prereg, results)
    eps = float(ctx.study.data["transform"]["epsilon"])
    summaries = {}
    for condition in ctx.study.conditions():
        name = condition["name"]
        s = write_severities(merged[name], out[name], scale=scale, epsilon=eps)
        summaries[name] = s.to_dict()
        ctx.record(out[name], inputs=[merged[name]], extra={"scale": scale, **s.to_dict()})
    doc = {"scorer": scorer, "scale": scale, "epsilon": eps, "conditions": summaries}
    write_json(summary, doc)
    ctx.record(summary, inputs=[out[c["name"]] for c in ctx.study.conditions()])
    return summaries
