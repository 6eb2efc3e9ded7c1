"""Transform stage: score shards → severities on one scale (Section 6.2 of Zhou 2026).

``transform[scorer, scale]`` reads every score shard of every condition (no merged copy of the
scores is kept: :func:`tailgate.stages.data.scored_rows`, which also applies a registered
``min_rows``) and writes ``severities/<scorer>/<scale>/<condition>.parquet`` for every
condition (the scores oriented by the scorer's ``worse``, so that larger is worse: the bad tail
is the upper one) and ``severities/<scorer>/<scale>/transform.json`` with, per condition, the
registered ε, the orientation and how many scores were clipped at each end (a large count means
ε is part of the result).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from tailgate.data.transform import write_severities
from tailgate.files.atomic import write_json
from tailgate.prereg.study import worse_of

from .common import open_stage
from .data import scored_rows

__all__ = ["transform_stage"]


def transform_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    scale: str,
    scores: Mapping[str, Sequence[str | os.PathLike[str]]],
    out: Mapping[str, str | os.PathLike[str]],
    summary: str | os.PathLike[str],
    *,
    plan: str = "head",
) -> dict[str, dict]:
    """Put every condition's scores on ``scale``; ``scores`` maps condition → its score shards,
    ``out`` condition → severities path."""
    ctx = open_stage(prereg, results, plan)
    eps = ctx.study.epsilon
    worse = worse_of(ctx.study.scorer(scorer))  # the bad tail: severities larger is worse
    summaries = {}
    for condition in ctx.study.conditions():
        name = condition["name"]
        shards = list(scores[name])
        table = scored_rows(ctx.study, scorer, name, shards)
        source = f"scores/{scorer}/{name}/shard-*.parquet"
        s = write_severities(
            table, out[name], scale=scale, epsilon=eps, source=source, worse=worse or "higher"
        )
        summaries[name] = s.to_dict()
        ctx.record(out[name], inputs=shards, extra={"scale": scale, **s.to_dict()})
    doc = {"scorer": scorer, "scale": scale, "epsilon": eps, "conditions": summaries}
    write_json(summary, doc)
    ctx.record(summary, inputs=[out[c["name"]] for c in ctx.study.conditions()])
    return summaries
