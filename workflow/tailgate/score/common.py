"""What every scorer shares: the scorer registry entry, input checks, output validation.

A scorer turns a generations shard into one severity per row (Sec. 5 "Scorer" of Zhou (2026):
higher means worse). Scores are written as Parquet ``prompt_id`` (int64), ``score`` (float64)
in ``prompt_id`` order. A missing column or a non-finite score is an error whose message
names the scorer, the condition, the row and the ``prompt_id``; empty completions follow the
scorer's registered ``on_empty`` policy (:mod:`tailgate.score.empty`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.files.atomic import write_parquet
from tailgate.generate.shards import ShardInputError, read_table, require_columns

__all__ = [
    "ScorerSpec",
    "ScoringError",
    "read_generations",
    "scorer_spec",
    "write_scores",
]

KINDS = ("detoxify", "profanity", "token_nll", "column", "regex", "judge")


class ScoringError(ShardInputError):
    """A scorer cannot produce a valid score for some row (CLI exit 2)."""


@dataclass(frozen=True)
class ScorerSpec:
    """A registered scorer: ``name``, ``kind``, ``bounded`` and its kind-specific fields."""

    name: str
    kind: str
    bounded: bool
    fields: dict


def scorer_spec(study: Any, scorer: str, *, condition: str) -> ScorerSpec:
    """Find ``scorer`` by name in ``study.scorers()`` and check its kind."""
    entries = study.scorers()
    for entry in entries:
        if isinstance(entry, dict) and entry.get("name") == scorer:
            kind = entry.get("kind")
            if kind not in KINDS:
                raise ScoringError(
                    f"Scorer {scorer!r} registers kind {kind!r}; the known kinds are "
                    f"{list(KINDS)}. Fix the scorer's kind in the pre-registration."
                )
            fields = {k: v for k, v in entry.items() if k not in ("name", "kind", "bounded")}
            return ScorerSpec(scorer, kind, bool(entry.get("bounded", False)), fields)
    names = [e.get("name") for e in entries if isinstance(e, dict)]
    raise ScoringError(
        f"Scorer {scorer!r} (asked for condition {condition!r}) is not registered; the "
        f"pre-registration's 'scorers' lists {names}. Use one of those names."
    )


def read_generations(
    path: str | os.PathLike[str], columns: tuple[str, ...], *, scorer: str, condition: str
) -> pa.Table:
    """Read a generations shard and check it has ``prompt_id`` and ``columns``."""
    table = read_table(path, what=f"generations (scorer {scorer!r})", condition=condition)
    require_columns(
        table,
        ("prompt_id", *columns),
        path=path,
        what=f"generations (scorer {scorer!r})",
        condition=condition,
    )
    return table


def write_scores(
    out_path: str | os.PathLike[str],
    prompt_ids: Any,
    scores: Any,
    *,
    spec: ScorerSpec,
    condition: str,
) -> pa.Table:
    """Validate (finite; within [0, 1] when ``bounded``) and write ``prompt_id``, ``score``."""
    ids = np.asarray(prompt_ids, dtype=np.int64)
    values = np.asarray(scores, dtype=np.float64)
    if values.shape != ids.shape:
        raise ScoringError(
            f"Scorer {spec.name!r} returned {values.size} scores for {ids.size} rows of condition "
            f"{condition!r}; the scorer must return one score per row."
        )
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        row = int(bad[0])
        raise ScoringError(
            f"Scorer {spec.name!r} gave a non-finite score ({values[row]}) to row {row} "
            f"(prompt_id {ids[row]}) of condition {condition!r} ({bad.size} such rows in all). "
            "Check the scorer's model and inputs for that row; a severity must be a finite number."
        )
    if spec.bounded:
        out = np.flatnonzero((values < 0.0) | (values > 1.0))
        if out.size:
            row = int(out[0])
            raise ScoringError(
                f"Scorer {spec.name!r} is registered as bounded (a probability in [0, 1]) but gave "
                f"{values[row]} to row {row} (prompt_id {ids[row]}) of condition {condition!r}. "
                "Register bounded: false for this scorer, or fix its scores."
            )
    order = np.argsort(ids, kind="stable")
    table = pa.table({"prompt_id": pa.array(ids[order]), "score": pa.array(values[order])})
    write_parquet(out_path, table)
    return table
