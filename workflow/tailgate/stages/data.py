"""Data stages: prompt selection, generation shards, scoring shards and the merge (DESIGN, DAG).

Thin wrappers around the backends (:func:`tailgate.generate.generate_shard`,
:func:`tailgate.score.score_shard`) that refuse on a changed pre-registration and record every
file they write as a *data* artifact. The interfaces are the ones of workflow/README.md, so the
``transformers`` backend and the real scorers slot in without changing the DAG.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.data.score_files import token_losses_path
from tailgate.errors import InputError, RefusalError
from tailgate.files.parquet import read_parquet
from tailgate.generate import generate_shard
from tailgate.prereg.pins import pinned_files

from .common import StageContext, open_stage

__all__ = [
    "embed_stage",
    "generate_stage",
    "merge_scores",
    "prompts_stage",
    "score_stage",
    "scored_rows",
]


def prompts_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    options: dict[str, Any],
    plan: str = "head",
) -> str:
    """Select the registered prompts (``transformers`` backend); return the selection digest."""
    from tailgate.generate.prompts import select_prompts

    ctx = open_stage(prereg, results, plan)
    digest = select_prompts(ctx.study, out, options=options)
    sidecar = Path(out).with_name(Path(out).name.removesuffix(".parquet") + ".digest.json")
    ctx.record(out, kind="data", extra={"digest": digest})
    if sidecar.exists():
        ctx.record(sidecar, inputs=[out], kind="data")
    return digest


def generate_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    condition: str,
    shard: int,
    out: str | os.PathLike[str],
    *,
    options: dict[str, Any],
    prompts: str | os.PathLike[str] | None = None,
    plan: str = "head",
) -> None:
    """Generation shard ``shard`` of ``condition`` with the registered backend."""
    ctx = open_stage(prereg, results, plan)
    opts = dict(options)
    if prompts is not None:
        opts["prompts_path"] = str(prompts)
    generate_shard(ctx.study, condition, int(shard), out, options=opts)
    ctx.record(
        out,
        inputs=[*([prompts] if prompts is not None else []), *pinned_files(ctx.study)],
        kind="data",
        extra={"condition": condition, "shard": int(shard)},
    )


def score_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    condition: str,
    generations: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    options: dict[str, Any],
    plan: str = "head",
) -> None:
    """Score one generations shard with the registered ``scorer``."""
    from tailgate.score import dropped_rows_path, score_shard
    from tailgate.score.judge import unparseable_rows_path

    ctx = open_stage(prereg, results, plan)
    score_shard(ctx.study, scorer, condition, generations, out, options=options)
    # the scores, and the files a scorer may write beside them: per-token losses, the rows left
    # unscored (on_empty: drop) and a judge's unparseable replies (on_unparseable: drop)
    sides = (token_losses_path(out), dropped_rows_path(out), unparseable_rows_path(out))
    for path in (out, *(side for side in sides if side.exists())):
        ctx.record(path, inputs=[generations], kind="data", extra={"scorer": scorer})


def embed_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    model: str,
    shards: Sequence[tuple[str, str, str | os.PathLike[str], str | os.PathLike[str]]],
    *,
    options: dict[str, Any],
) -> None:
    """The embed job: refuse on a changed registration, then embed each generations shard of
    ``shards`` (plan, condition, generations, out) with ``model`` as the plan registers it,
    loaded once a plan, and record each file as data under its plan."""
    from tailgate.score.embedding import embed_shard

    contexts: dict[str, StageContext] = {}
    loaded: dict[str, dict[str, Any]] = {}
    for plan, condition, generations, out in shards:
        if plan not in contexts:
            contexts[plan], loaded[plan] = open_stage(prereg, results, plan), {}
        ctx = contexts[plan]
        embed_shard(
            ctx.study, model, condition, generations, out, options=options, loaded=loaded[plan]
        )
        ctx.record(
            Path(out),
            inputs=[generations, *pinned_files(ctx.study)],
            kind="data",
            extra={"model": model, "condition": condition},
        )


def merge_scores(shards: Sequence[str | os.PathLike[str]], *, condition: str) -> pa.Table:
    """Concatenate score shards (``prompt_id``, ``score``) by prompt id; refuse duplicates."""
    tables = []
    for path in shards:
        t = read_parquet(path)
        for col in ("prompt_id", "score"):
            if col not in t.column_names:
                raise InputError(
                    f"{path}: score shard of condition '{condition}' has no column '{col}'. "
                    "Fix: delete it and re-run the score stage."
                )
        tables.append(t.select(["prompt_id", "score"]))
    table = pa.concat_tables(tables).sort_by("prompt_id")
    ids = table.column("prompt_id").to_numpy()
    dup = np.flatnonzero(np.diff(ids) == 0)
    if dup.size:
        raise InputError(
            f"score shards of condition '{condition}' hold prompt_id {int(ids[dup[0]])} twice "
            f"({', '.join(str(s) for s in shards)}). Fix: the shards overlap; delete them and "
            "re-run generation and scoring."
        )
    return table


def scored_rows(
    study: Any, scorer: str, condition: str, shards: Sequence[str | os.PathLike[str]]
) -> pa.Table:
    """Every score shard of ``condition`` by prompt id (:func:`merge_scores`), refused when
    fewer rows than the registered ``conditions[].min_rows`` were scored."""
    table = merge_scores(shards, condition=condition)
    minimum = study.condition(condition).get("min_rows")
    if minimum is not None and table.num_rows < int(minimum):
        raise RefusalError(
            f"Refusing to analyse condition '{condition}' (scorer {scorer}): {table.num_rows:,} "
            f"scored rows, fewer than the registered minimum conditions[{condition}].min_rows = "
            f"{int(minimum):,} ({study.path}). The registered design was not realised: "
            "collect the missing data (import file, generation, on_empty drops), or record the "
            "smaller design with 'tailgate amend'."
        )
    return table
