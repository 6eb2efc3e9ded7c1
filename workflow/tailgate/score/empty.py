"""The registered policy for empty completions (``scorers[].on_empty``).

A scorer gives one severity per row (Sec. 5 "Scorer" of Zhou (2026)), but a generated completion
can be the empty string (the model sampled end-of-sequence at once). What such a row means is
a decision of the study, so it is registered per scorer (no default in the schema; absent
means ``error``):

* ``error`` — refuse the shard with a message naming the scorer, condition, row and
  prompt_id, and the fix (register ``on_empty``);
* ``drop`` — the row gets no score: the scores table omits it, and the scorer writes the
  dropped rows beside the score shard in ``<shard>.dropped.json``
  (:func:`dropped_rows_path`), so the tail is estimated on the non-empty completions and the
  report can say how many were left out;
* ``score`` — score the empty text as the scorer would (``detoxify`` and ``profanity`` only:
  the mean NLL of zero tokens is undefined, so ``token_nll`` allows ``error`` or ``drop``).

A missing (null) completion is always an error: it is a broken shard, not an empty generation.

Sidecar format (written only under ``drop``, also when nothing was dropped, so that every
shard of a ``drop`` scorer has one)::

    {"scorer": "toxicity", "condition": "clean", "on_empty": "drop",
     "rows": 5000, "dropped": 12, "dropped_prompt_ids": [3, 17, ...]}

``rows`` counts the rows of the generations shard; ``rows - dropped`` rows are scored.
:func:`count_dropped` sums ``dropped`` over the shards of a condition.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.files.atomic import write_json
from tailgate.score.common import ScorerSpec, ScoringError

__all__ = [
    "ON_EMPTY",
    "ScorableRows",
    "count_dropped",
    "dropped_rows_path",
    "on_empty_policy",
    "scorable_rows",
    "write_dropped_rows",
]

#: The policies each text-scoring kind accepts (the schema's ``on_empty`` enums).
ON_EMPTY: dict[str, tuple[str, ...]] = {
    "detoxify": ("error", "drop", "score"),
    "profanity": ("error", "drop", "score"),
    "token_nll": ("error", "drop"),
    "regex": ("error", "drop", "score"),
    "judge": ("error", "drop", "score"),
}


@dataclass(frozen=True)
class ScorableRows:
    """The rows of a generations shard that a scorer scores under its ``on_empty`` policy.

    ``table`` and ``texts`` keep the shard's row order without the dropped rows;
    ``dropped_prompt_ids`` are those of the rows left out (empty under ``drop``).
    """

    policy: str
    table: pa.Table
    texts: list[str]
    rows: int
    dropped_prompt_ids: np.ndarray

    @property
    def prompt_ids(self) -> np.ndarray:
        """The prompt ids of the rows to score, in row order."""
        return self.table.column("prompt_id").to_numpy()


def on_empty_policy(spec: ScorerSpec) -> str:
    """The registered ``on_empty`` of a text scorer (``error`` when absent)."""
    policy = spec.fields.get("on_empty", "error")
    allowed = ON_EMPTY.get(spec.kind, ("error",))
    if policy not in allowed:
        raise ScoringError(
            f"Scorer {spec.name!r} of kind {spec.kind!r} registers on_empty {policy!r}; this "
            f"kind accepts {list(allowed)}"
            + (
                " (the mean NLL of a completion with no tokens is undefined)"
                if spec.kind == "token_nll"
                else ""
            )
            + ". Fix the scorer's on_empty in the pre-registration."
        )
    return str(policy)


def scorable_rows(
    table: pa.Table, column: str, *, spec: ScorerSpec, condition: str, path: Any
) -> ScorableRows:
    """Apply the scorer's ``on_empty`` policy to the ``column`` texts of a generations shard."""
    policy = on_empty_policy(spec)
    texts = table.column(column).to_pylist()
    ids = table.column("prompt_id").to_pylist()
    missing = [row for row, text in enumerate(texts) if not isinstance(text, str)]
    if missing:
        row = missing[0]
        raise ScoringError(
            f"Scorer {spec.name!r} cannot score row {row} (prompt_id {ids[row]}) of condition "
            f"{condition!r} in {str(path)!r}: its {column!r} is missing ({len(missing)} such "
            "row(s) in all). A generations shard holds text in every row; re-generate the shard "
            "(for imported data, write the text, which may be empty)."
        )
    empty = [row for row, text in enumerate(texts) if text == ""]
    if empty and policy == "error":
        row = empty[0]
        allowed = " or ".join(f"`on_empty: {p}`" for p in ON_EMPTY[spec.kind] if p != "error")
        raise ScoringError(
            f"Scorer {spec.name!r} cannot score row {row} (prompt_id {ids[row]}) of condition "
            f"{condition!r} in {str(path)!r}: its {column!r} is empty ({len(empty)} empty "
            f"row(s) in this shard). An empty completion has no severity unless the study says "
            f"how to treat it. Fix: register {allowed} on scorer {spec.name!r} (an amendment "
            "once the study is frozen), or re-generate the shard."
        )
    dropped = np.asarray([ids[row] for row in empty] if policy == "drop" else [], np.int64)
    if policy == "drop" and empty:
        keep = np.ones(table.num_rows, dtype=bool)
        keep[empty] = False
        kept = table.filter(pa.array(keep))
        texts = [t for t, k in zip(texts, keep, strict=True) if k]
    else:
        kept = table
    return ScorableRows(policy, kept, texts, table.num_rows, dropped)


def dropped_rows_path(out_path: str | os.PathLike[str]) -> Path:
    """Where a ``drop`` scorer lists its dropped rows: ``<out>.dropped.json`` beside ``out``."""
    out = Path(out_path)
    return out.with_name(out.name.removesuffix(".parquet") + ".dropped.json")


def write_dropped_rows(
    out_path: str | os.PathLike[str], rows: ScorableRows, *, spec: ScorerSpec, condition: str
) -> Path | None:
    """Write the ``drop`` sidecar of a score shard (see the module docstring); under another
    policy remove a sidecar left by an earlier registration and return ``None``."""
    path = dropped_rows_path(out_path)
    if rows.policy != "drop":
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return None
    ids = sorted(int(i) for i in rows.dropped_prompt_ids)
    write_json(
        path,
        {
            "scorer": spec.name,
            "condition": condition,
            "on_empty": rows.policy,
            "rows": rows.rows,
            "dropped": len(ids),
            "dropped_prompt_ids": ids,
        },
    )
    return path


def count_dropped(score_shards: Iterable[str | os.PathLike[str]]) -> int:
    """Rows dropped by ``on_empty: drop`` over the given score shards (0 where no sidecar)."""
    total = 0
    for shard in score_shards:
        path = dropped_rows_path(shard)
        if not path.is_file():
            continue
        try:
            total += int(json.loads(path.read_text())["dropped"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ScoringError(
                f"The dropped-rows file {str(path)!r} is unreadable ({type(exc).__name__}). "
                "Delete it and its score shard and re-run the score step."
            ) from exc
    return total
