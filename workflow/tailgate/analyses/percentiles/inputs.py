"""The artifacts a ``percentiles`` analysis reads: the per-token losses beside each condition's
score shards (a ``token_nll`` scorer), or a scorer's rows taken as tokens of fixed-length
sequences (``sequence_length``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.prereg.validated import Study

from ..base import severity_paths, shard_paths, sorted_values
from . import statistics as PC

__all__ = ["inputs", "read_tokens", "score_shards", "tokens_from_rows"]


def inputs(
    spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
) -> dict[str, list[str]]:
    """The artifacts the analysis reads, by name, from the workflow's path templates."""
    if spec.get("sequence_length") is not None:
        return {"severities": severity_paths(spec, layout, spec["conditions"])}
    return {
        f"shards_{c}": score_shards(study, layout, spec["scorer"], c) for c in spec["conditions"]
    }


def score_shards(study: Study, layout: Mapping[str, str], scorer: str, condition: str) -> list[str]:
    """The score shards of ``scorer`` for one condition (declared outputs of the score rule);
    the per-token losses lie beside each (:func:`tailgate.data.score_files.token_losses_path`)."""
    tail = "/scores/{scorer}/{condition}/shard-{shard}.parquet"
    return shard_paths(study, layout, "scores", tail, scorer=scorer, condition=condition)


def read_tokens(shards: Sequence[str]) -> PC.TokenLosses:
    """The per-token losses beside a condition's score shards."""
    from tailgate.data.score_files import token_losses_path
    from tailgate.files.parquet import read_parquet

    paths = [str(token_losses_path(s)) for s in shards]
    ids, losses = [], []
    for p in paths:
        try:
            t = read_parquet(p, columns=["prompt_id", "loss"])
        except (OSError, KeyError, ValueError) as exc:
            raise InputError(
                f"{p}: cannot read per-token losses (columns prompt_id, loss): {exc}. Fix: "
                "re-run the token_nll scorer of this condition."
            ) from None
        ids.append(t.column("prompt_id").to_numpy())
        losses.append(t.column("loss").to_numpy())
    seq = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    x = np.concatenate(losses) if losses else np.zeros(0)
    if x.size == 0:
        raise InputError(
            f"{paths[0] if paths else 'no token files'}: no per-token losses. Fix: check that "
            "the condition's completions are not empty (the scorer's on_empty policy)."
        )
    return PC.TokenLosses(x.astype(np.float32), seq)


def tokens_from_rows(path: str, sequence_length: int) -> PC.TokenLosses:
    """A scorer's rows as tokens: sequence = prompt_id // sequence_length."""
    from tailgate.data.severities import read_severities  # pyarrow loads with the first read

    ids, x = read_severities(path)
    if x.size == 0:
        raise InputError(f"{path}: no rows. Fix: re-run the scoring of this condition.")
    return PC.TokenLosses(sorted_values(ids, x).astype(np.float32), np.sort(ids) // sequence_length)
