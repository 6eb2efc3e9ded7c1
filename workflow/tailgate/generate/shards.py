"""Shard I/O shared by every generation backend and scorer.

A condition's prompts are split into shards so that generation is resumable and
cluster-parallel (DESIGN, "The DAG"). This module owns the three things every shard writer
needs:

* the one shard-selection rule of every backend (:func:`shard_indices`): shard ``k`` of
  ``n`` holds the rows whose 0-based ``position`` in the condition's registered order
  satisfies ``position % n == k``, after capping at the condition's prompt count; the
  ``simulate`` and ``import`` backends apply it to row positions, the ``transformers``
  backend to the selected-prompts table (:func:`shard_prompts`);
* a resumable, atomically checkpointed writer (:class:`ShardCheckpoint`): completed batches
  are appended to ``shard-k.partial.parquet`` (rewritten atomically after every batch), a
  restarted job skips the batches found there, and :meth:`ShardCheckpoint.finish` writes the
  final file sorted by ``prompt_id`` and removes the partial file, so a killed job neither
  loses nor duplicates rows and the final bytes equal those of an uninterrupted run;
* the error type for bad shard input (:class:`tailgate.errors.ShardInputError`, re-exported
  here), whose one-paragraph message names the condition, the file, the row and the fix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.files.atomic import write_parquet
from tailgate.files.parquet import read_parquet

__all__ = [
    "GENERATION_COLUMNS",
    "ShardCheckpoint",
    "ShardInputError",
    "fingerprint",
    "generation_schema",
    "read_table",
    "require_columns",
    "shard_indices",
    "shard_prompts",
]

from tailgate.errors import ShardInputError

#: Columns every generation backend writes, in this order (workflow/README.md).
GENERATION_COLUMNS = (
    "prompt_id",
    "prompt",
    "completion",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
)

_BATCH = "_batch"
_KEY = "_checkpoint_key"


def generation_schema() -> pa.Schema:
    """The Arrow schema of a generations shard."""
    return pa.schema(
        [
            ("prompt_id", pa.int64()),
            ("prompt", pa.string()),
            ("completion", pa.string()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("finish_reason", pa.string()),
        ]
    )


def fingerprint(obj: Any) -> str:
    """SHA-256 of the canonical JSON of ``obj`` (sorted keys): the identity of a shard's inputs."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_table(path: str | os.PathLike[str], *, what: str, condition: str) -> pa.Table:
    """Read a Parquet table, turning a missing or unreadable file into a clear error."""
    p = Path(path)
    if not p.is_file():
        raise ShardInputError(
            f"The {what} file {str(p)!r} for condition {condition!r} does not exist. Run the step "
            "that writes it first (or fix the path given to this step)."
        )
    try:
        return read_parquet(p)
    except (OSError, pa.ArrowException) as exc:
        raise ShardInputError(
            f"The {what} file {str(p)!r} for condition {condition!r} is not a readable Parquet "
            f"file ({exc}). Delete it and re-run the step that writes it."
        ) from exc


def require_columns(
    table: pa.Table, columns: tuple[str, ...] | list[str], *, path: Any, what: str, condition: str
) -> None:
    """Raise :class:`ShardInputError` naming every missing column of ``table``."""
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise ShardInputError(
            f"The {what} file {str(path)!r} for condition {condition!r} lacks the column(s) "
            f"{missing}; it has {table.column_names}. Re-create it with the step that writes "
            f"{what} files, or add the column(s)."
        )


def shard_indices(
    positions: np.ndarray | int,
    *,
    shard: int,
    shards: int,
    count: int | None,
    condition: str,
    study: str = "?",
) -> np.ndarray:
    """Row indices (ascending) of shard ``shard`` of ``shards``: the rows ``i`` with
    ``positions[i] < count`` and ``positions[i] % shards == shard``.

    ``positions`` are the rows' 0-based ranks in the condition's registered order (an integer
    ``n`` stands for ``0..n-1``, i.e. row order); ``count`` caps the condition at its
    registered number of prompts (``None``: no cap). Every prompt therefore lands in exactly
    one shard, and in the same shard whatever order the jobs run in. A shard index outside
    ``0..shards-1`` raises :class:`ShardInputError`.
    """
    if not 0 <= shard < shards:
        raise ShardInputError(
            f"Shard {shard} of condition {condition!r} does not exist: study {study!r} registers "
            f"`generation.shards: {shards}` (shards 0..{shards - 1}). Ask for a shard index "
            "below generation.shards."
        )
    if isinstance(positions, (int, np.integer)):
        positions = np.arange(int(positions), dtype=np.int64)
    position = np.asarray(positions, dtype=np.int64)
    keep = position % shards == shard
    if count is not None:
        keep &= position < count
    return np.flatnonzero(keep).astype(np.int64)


def shard_prompts(
    prompts: pa.Table,
    *,
    condition: str,
    shard: int,
    shards: int,
    count: int,
    path: Any = "?",
    study: str = "?",
) -> pa.Table:
    """Rows of the selected-prompts table in shard ``shard`` (:func:`shard_indices`).

    ``position`` is the 0-based rank of a prompt in the registered selection order (written by
    :func:`tailgate.generate.prompts.select_prompts`); a table without it uses row order. The
    table must hold at least ``count`` prompts.
    """
    require_columns(
        prompts, ("prompt_id", "prompt"), path=path, what="prompts", condition=condition
    )
    if "position" in prompts.column_names:
        position = prompts.column("position").to_numpy()
    else:
        position = np.arange(prompts.num_rows)
    rows = shard_indices(
        position, shard=shard, shards=shards, count=count, condition=condition, study=study
    )
    available = int((position < count).sum())
    if available < count:
        raise ShardInputError(
            f"Condition {condition!r} registers {count} prompts but the prompts file {str(path)!r} "
            f"holds only {available}. Re-run prompt selection for this pre-registration, or "
            "register a smaller 'prompts' count for the condition."
        )
    return prompts.take(pa.array(rows))


@dataclass(frozen=True)
class CheckpointState:
    """What a restarted shard writer found on disk."""

    completed: frozenset[int]
    rows: int
    discarded_stale: bool


class ShardCheckpoint:
    """Resumable writer of one shard, checkpointed atomically after every batch.

    ``key`` identifies everything the rows depend on (registered specs, seed, batch layout):
    a partial file written under a different key is stale and is discarded, never merged.
    Batches are identified by their index in the shard's deterministic batch order.
    """

    def __init__(self, out_path: str | os.PathLike[str], *, key: str, schema: pa.Schema) -> None:
        self.out_path = Path(out_path)
        self.partial_path = self.out_path.with_name(
            self.out_path.name.removesuffix(".parquet") + ".partial.parquet"
        )
        self.key = key
        self.schema = schema
        self._parts: list[pa.Table] = []
        self._completed: set[int] = set()
        self.state = self._load()

    def _load(self) -> CheckpointState:
        if not self.partial_path.is_file():
            return CheckpointState(frozenset(), 0, False)
        try:
            table = read_parquet(self.partial_path)
            keys = set(table.column(_KEY).unique().to_pylist()) if table.num_rows else {self.key}
            stale = keys != {self.key} or not set(self.schema.names) <= set(table.column_names)
        except (OSError, KeyError, pa.ArrowException):
            stale = True
        if stale:
            with contextlib.suppress(FileNotFoundError):
                self.partial_path.unlink()
            return CheckpointState(frozenset(), 0, True)
        self._parts = [table]
        self._completed = set(table.column(_BATCH).unique().to_pylist())
        return CheckpointState(frozenset(self._completed), table.num_rows, False)

    @property
    def completed(self) -> frozenset[int]:
        """Indices of the batches already written."""
        return frozenset(self._completed)

    def append(self, batch: int, rows: pa.Table) -> None:
        """Add one completed batch and rewrite the partial file atomically."""
        if batch in self._completed:
            raise RuntimeError(f"batch {batch} of {self.out_path} was already written")
        rows = rows.select(self.schema.names).cast(self.schema)
        n = rows.num_rows
        rows = rows.append_column(_BATCH, pa.array([batch] * n, pa.int64()))
        rows = rows.append_column(_KEY, pa.array([self.key] * n, pa.string()))
        self._parts.append(rows)
        self._completed.add(batch)
        write_parquet(self.partial_path, pa.concat_tables(self._parts).combine_chunks())

    def finish(self) -> pa.Table:
        """Write the final shard (sorted by ``prompt_id``), remove the partial file, return rows."""
        if self._parts:
            table = pa.concat_tables(self._parts).select(self.schema.names).cast(self.schema)
        else:
            table = self.schema.empty_table()
        table = table.sort_by("prompt_id").combine_chunks()
        write_parquet(self.out_path, table)
        with contextlib.suppress(FileNotFoundError):
            self.partial_path.unlink()
        return table
