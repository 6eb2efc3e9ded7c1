"""Transform stage: score shards → severities on one scale (Section 6.2 of Zhou 2026).

``transform[scorer, scale, condition]`` reads the condition's score shards (no merged copy of
the scores is kept: :func:`tailgate.stages.data.scored_rows`, which also applies a registered
``min_rows``) and writes ``severities/<scorer>/<scale>/<condition>.parquet`` (the scores
oriented by the scorer's ``worse``, so that larger is worse: the bad tail is the upper one).
``transform_summary[scorer, scale]`` writes ``severities/<scorer>/<scale>/transform.json`` with,
per condition, the registered ε, the orientation and how many scores were clipped at each end
(a large count means ε is part of the result): the same transform of the same scores, counted
(:func:`condition_summary`), so that each condition's job writes one file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.data.transform import TransformSummary, transform_scores, write_severities
from tailgate.files.atomic import write_json
from tailgate.prereg.study import worse_of

from .common import open_stage
from .data import scored_rows

__all__ = ["condition_summary", "transform_stage", "transform_summary_stage"]


def _transform_options(study: Any, scorer: str, condition: str) -> dict[str, Any]:
    """The registered ε, the scores' name in messages and the scorer's bad tail: what the
    transform of ``condition``'s ``scorer`` scores is given, written or only summarised."""
    return {
        "epsilon": study.epsilon,
        "source": f"scores/{scorer}/{condition}/shard-*.parquet",
        "worse": worse_of(study.scorer(scorer)) or "higher",
    }


def transform_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    scale: str,
    condition: str,
    scores: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    plan: str = "head",
) -> dict[str, Any]:
    """Put ``condition``'s scores (its shards ``scores``) on ``scale`` and write its severities
    to ``out``; the transform's summary of the condition is recorded with the file."""
    ctx = open_stage(prereg, results, plan)
    shards = list(scores)
    table = scored_rows(ctx.study, scorer, condition, shards)
    s = write_severities(
        table, out, scale=scale, **_transform_options(ctx.study, scorer, condition)
    )
    ctx.record(out, inputs=shards, extra={"scale": scale, **s.to_dict()})
    return s.to_dict()


def condition_summary(
    study: Any, scorer: str, scale: str, condition: str, shards: Sequence[str | os.PathLike[str]]
) -> TransformSummary:
    """The summary :func:`transform_stage` records for ``condition``: its scores (as
    :func:`tailgate.stages.data.scored_rows` checks and orders them) transformed the same way,
    the severities not kept."""
    table = scored_rows(study, scorer, condition, shards)
    values = table.column("score").to_numpy(zero_copy_only=False).astype(np.float64)
    return transform_scores(values, scale, **_transform_options(study, scorer, condition)).summary


def transform_summary_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    scale: str,
    scores: Mapping[str, Sequence[str | os.PathLike[str]]],
    summary: str | os.PathLike[str],
    *,
    plan: str = "head",
) -> dict[str, dict]:
    """Write the transform's summary of every condition (``scores``: condition → its score
    shards) to ``summary``."""
    ctx = open_stage(prereg, results, plan)
    summaries = {
        name: condition_summary(ctx.study, scorer, scale, name, scores[name]).to_dict()
        for name in (c["name"] for c in ctx.study.conditions())
    }
    doc = {"scorer": scorer, "scale": scale, "epsilon": ctx.study.epsilon, "conditions": summaries}
    write_json(summary, doc)
    ctx.record(summary, inputs=[str(f) for name in summaries for f in scores[name]])
    return summaries
