"""tailgate.score: scorers that turn completions into per-row severities.

:func:`score_shard` is the one entry point the workflow calls. Kinds (Sec. 5 and App. C of
Zhou (2026)): ``detoxify`` (Detoxify head on the completion only), ``profanity``
(alt-profanity-check), ``token_nll`` (a judge model's mean NLL of the completion given the
prompt; also writes per-token losses), ``column`` (scores already in the data) and ``regex``
(1 when a registered pattern matches the completion: binary responses, Acharyya et al. (2025)) and
``judge``
(a registered rubric graded by a local model onto a grid, ERRORQUAKE (2026)). The
text scorers treat empty completions as their registered ``on_empty`` says
(:mod:`tailgate.score.empty`: ``error``, ``drop`` or ``score``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.data.score_files import token_losses_path
from tailgate.files.atomic import write_parquet
from tailgate.score.common import (
    ScorerSpec,
    ScoringError,
    read_generations,
    scorer_spec,
    write_scores,
)
from tailgate.score.empty import (
    count_dropped,
    dropped_rows_path,
    scorable_rows,
    write_dropped_rows,
)

__all__ = [
    "ScorerSpec",
    "ScoringError",
    "count_dropped",
    "dropped_rows_path",
    "score_shard",
]


def score_shard(
    study: Any,
    scorer: str,
    condition: str,
    generations_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    options: dict,
) -> None:
    """Score one generations shard with the registered ``scorer`` into ``out_path``.

    Writes Parquet ``prompt_id`` (int64), ``score`` (float64) sorted by prompt_id;
    ``token_nll`` also writes ``<out>.tokens.parquet`` (prompt_id, position, loss in float32), and a
    scorer registered with ``on_empty: drop`` writes ``<out>.dropped.json`` (the rows it left
    out; :func:`tailgate.score.empty.write_dropped_rows`). ``options``:
    ``batch_size``, ``device`` (``auto``/``cpu``/``cuda[:n]``), ``progress`` (bool).
    """
    spec = scorer_spec(study, scorer, condition=condition)
    if spec.kind == "column":
        column = spec.fields.get("column")
        if not column:
            raise ScoringError(
                f"Scorer {scorer!r} of kind 'column' registers no 'column'. Name the column of "
                "the generations table that holds the scores."
            )
        table = read_generations(generations_path, (column,), scorer=scorer, condition=condition)
        from tailgate.score.column import column_scores

        scores = column_scores(
            table, column, scorer=scorer, condition=condition, path=generations_path
        )
        write_scores(out_path, table.column("prompt_id"), scores, spec=spec, condition=condition)
        return

    needs = ("prompt", "completion") if spec.kind in ("token_nll", "judge") else ("completion",)
    table = read_generations(generations_path, needs, scorer=scorer, condition=condition)
    rows = scorable_rows(table, "completion", spec=spec, condition=condition, path=generations_path)
    if spec.kind == "profanity":  # scikit-learn only: no torch import (seconds per job)
        from tailgate.score.profanity import profanity_scores

        scores = profanity_scores(rows.texts)
    elif spec.kind == "regex":  # the standard library only
        from tailgate.score.regex import regex_scores

        scores = regex_scores(rows.texts, spec.fields, scorer)
    elif not rows.texts:  # every row dropped: no model to load
        scores = np.empty(0, dtype=np.float64)
        if spec.kind == "token_nll":
            none = np.empty(0, dtype=np.int64)
            _write_token_losses(out_path, none, none, np.empty(0, dtype=np.float32))
    elif spec.kind == "judge":
        _judge(study, spec, condition, rows, out_path, options)
        return
    elif spec.kind == "detoxify":
        from tailgate.models import resolve_device
        from tailgate.score.toxicity import detoxify_scores

        scores = detoxify_scores(
            rows.texts,
            spec_fields=spec.fields,
            scorer=scorer,
            device=str(resolve_device(options.get("device"))),
            batch_size=int(options.get("batch_size", 64)),
            progress=bool(options.get("progress", True)),
        )
    else:
        scores = _token_nll(study, spec, condition, rows.table, rows.texts, out_path, options)
    write_scores(out_path, rows.prompt_ids, scores, spec=spec, condition=condition)
    write_dropped_rows(out_path, rows, spec=spec, condition=condition)


def _judge(
    study: Any, spec: ScorerSpec, condition: str, rows: Any, out_path: Any, options: dict
) -> None:
    """Grade every scorable row with the judge model (:mod:`tailgate.score.judge`)."""
    from tailgate.score.judge import (
        check_unparseable,
        judge_replies,
        parse_grades,
        write_unparseable_rows,
    )

    replies = judge_replies(
        _judge_model(study, spec.fields["judge"], condition, options),
        str(spec.fields["rubric"]),
        [str(p) for p in rows.table.column("prompt").to_pylist()],
        rows.texts,
        max_new_tokens=int(spec.fields.get("max_new_tokens", 8)),
        batch_size=int(options.get("batch_size", 8)),
    )
    grades = parse_grades(replies, spec.fields, spec.name)
    ids = rows.prompt_ids
    check_unparseable(spec, condition, ids, replies, grades)
    keep = grades.parsed
    write_scores(out_path, ids[keep], grades.values[keep], spec=spec, condition=condition)
    write_dropped_rows(out_path, rows, spec=spec, condition=condition)
    write_unparseable_rows(out_path, spec, condition, ids, replies, grades)


def _token_nll(
    study: Any,
    spec: ScorerSpec,
    condition: str,
    table: pa.Table,
    texts: list[str],
    out_path: str | os.PathLike[str],
    options: dict,
) -> np.ndarray:
    from tailgate.score.token_nll import token_nll

    judge = spec.fields.get("judge")
    if not judge:
        raise ScoringError(
            f"Scorer {spec.name!r} of kind 'token_nll' registers no 'judge'. Name the key of "
            "the judge model under 'models'."
        )
    result = token_nll(
        _judge_model(study, judge, condition, options),
        [str(p) for p in table.column("prompt").to_pylist()],
        texts,
        table.column("prompt_id").to_numpy(),
        scorer=spec.name,
        condition=condition,
        batch_size=int(options.get("batch_size", 8)),
        progress=bool(options.get("progress", True)),
    )
    bad = np.flatnonzero(~np.isfinite(result.token_loss))
    if bad.size:
        pid = int(result.token_prompt_id[bad[0]])
        raise ScoringError(
            f"Scorer {spec.name!r}: a token of prompt_id {pid} of condition {condition!r} has a "
            "non-finite loss under the judge. Check the judge's dtype (float32 avoids overflow)."
        )
    _write_token_losses(out_path, result.token_prompt_id, result.token_position, result.token_loss)
    return result.mean_nll


def _judge_model(study: Any, judge: Any, condition: str, options: dict) -> Any:
    """The registered model ``judge`` (a key of ``models``) loaded as a causal LM on the
    device of ``options``."""
    from tailgate.models import load_causal_lm, model_spec, resolve_device

    return load_causal_lm(
        model_spec(study, str(judge), condition=condition),
        device=resolve_device(options.get("device")),
        condition=condition,
    )


def _write_token_losses(
    out_path: str | os.PathLike[str],
    prompt_id: np.ndarray,
    position: np.ndarray,
    loss: np.ndarray,
) -> None:
    """``<out>.tokens.parquet``: prompt_id (int64), position (int32), loss (float32), sorted.

    One file per condition and shard; float32 is the precision the losses are computed in
    (:mod:`tailgate.score.token_nll`), and the analyses compute their statistics in float64.
    """
    order = np.lexsort((position, prompt_id))
    write_parquet(
        token_losses_path(out_path),
        pa.table(
            {
                "prompt_id": pa.array(np.asarray(prompt_id, np.int64)[order], pa.int64()),
                "position": pa.array(np.asarray(position, np.int32)[order], pa.int32()),
                "loss": pa.array(np.asarray(loss, np.float32)[order], pa.float32()),
            }
        ),
    )
