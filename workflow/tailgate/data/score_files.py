"""The files the scoring stages write beside the scores, as the stages and the analyses that read
them name and read them (below both: an analysis reads a scorer's output without the scorers).

- per-token losses of the ``token_nll`` scorer: ``<shard>.tokens.parquet`` beside the score
  shard (:func:`token_losses_path`; read by the percentile analysis, Guo et al. (2025));
- response embeddings: ``embeddings/<model>/<condition>/shard-<k>.parquet`` with ``prompt_id``
  and ``embedding`` (the d float32 values, little-endian, as fixed-size binary), read by the
  energy-distance test of Acharyya et al. (2025) (:func:`read_embeddings`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from tailgate.errors import InputError
from tailgate.files.parquet import read_parquet

__all__ = ["read_embeddings", "token_losses_path"]


def token_losses_path(out_path: str | os.PathLike[str]) -> Path:
    """Where ``token_nll`` writes per-token losses: ``<out>.tokens.parquet`` beside ``out``."""
    out = Path(out_path)
    return out.with_name(out.name.removesuffix(".parquet") + ".tokens.parquet")


def read_embeddings(paths: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """prompt ids and the (rows, d) float64 embeddings of a condition's shards, by prompt id."""
    ids, parts = [], []
    for p in paths:
        try:
            t = read_parquet(p, columns=["prompt_id", "embedding"])
        except (OSError, KeyError, ValueError, pa.ArrowException) as exc:
            raise InputError(
                f"{p}: cannot read response embeddings (columns prompt_id, embedding): {exc}. "
                "Fix: re-run the embed stage of this condition."
            ) from None
        if t.num_rows == 0:
            continue
        ids.append(t.column("prompt_id").to_numpy())
        blob = b"".join(t.column("embedding").to_pylist())
        parts.append(np.frombuffer(blob, dtype="<f4").reshape(t.num_rows, -1))
    if not parts:
        return np.zeros(0, np.int64), np.zeros((0, 0))
    pid = np.concatenate(ids)
    x = np.vstack(parts).astype(np.float64)
    order = np.argsort(pid, kind="stable")
    return pid[order], x[order]
