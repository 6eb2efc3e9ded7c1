"""Response embeddings for the energy-distance test of Acharyya et al. (2025) (methods note A8).

Each response (the completion text of a generations row) is embedded as the **mean-pooled last
hidden state** of a registered local model: an HF encoder, or the generating model's own trunk.
The model is loaded by the one loader of registered models
(:func:`tailgate.models.load_model` with ``head="base"``), so a key of
``models`` means the same weights, revision and dtype for generation, scoring and embedding.

Rows are tokenised with the tokenizer's special tokens (an encoder's [CLS]/[SEP]), truncated to
the model's context, right-padded (positions start at 0 in every row, so the padding changes
no hidden state of a real token) and batched longest first; the mean runs over the attention
mask. A response that encodes to no tokens (an empty completion under a tokenizer without
special tokens) is embedded as the end-of-sequence token alone, a fixed point for "no answer".

Output ``<results>/embeddings/<model>/<condition>/shard-<k>.parquet``: ``prompt_id`` (int64)
and ``embedding`` (fixed-size binary: the d float32 values, little-endian; a plain column, so
the provenance record's row digest covers it), sorted by prompt_id.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.errors import InputError
from tailgate.files.atomic import write_parquet
from tailgate.files.parquet import read_parquet

__all__ = ["embed_shard", "embed_texts"]


def embed_texts(lm: Any, texts: list[str], *, batch_size: int = 16) -> np.ndarray:
    """(len(texts), d) float32: the mean-pooled last hidden state of each text under ``lm``
    (a :class:`~tailgate.models.LoadedModel` with ``head="base"``)."""
    import torch

    from tailgate.models import length_sorted_batches

    tok = lm.tokenizer
    limit = getattr(lm.model.config, "max_position_embeddings", None) or getattr(
        lm.model.config, "n_positions", None
    )
    encoded = [list(x) for x in tok(texts, add_special_tokens=True)["input_ids"]]
    fallback = tok.eos_token_id if tok.eos_token_id is not None else tok.pad_token_id
    encoded = [(x or [fallback])[: int(limit)] if limit else (x or [fallback]) for x in encoded]
    width = int(lm.model.config.hidden_size)
    out = np.empty((len(texts), width), dtype=np.float32)
    pad = tok.pad_token_id
    with torch.inference_mode():
        for idx in length_sorted_batches([len(x) for x in encoded], batch_size):
            longest = max(len(encoded[i]) for i in idx)
            ids = torch.full((len(idx), longest), pad, dtype=torch.long)
            mask = torch.zeros((len(idx), longest), dtype=torch.long)
            for j, i in enumerate(idx):
                ids[j, : len(encoded[i])] = torch.tensor(encoded[i])
                mask[j, : len(encoded[i])] = 1
            hidden = lm.model(
                input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device)
            ).last_hidden_state.float()
            m = mask.to(lm.device).unsqueeze(-1).float()
            pooled = (hidden * m).sum(dim=1) / m.sum(dim=1)
            out[idx] = pooled.cpu().numpy()
    return out


def embed_shard(
    study: Any,
    model: str,
    condition: str,
    generations_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    options: dict,
    loaded: dict[str, Any],
) -> None:
    """Embed every response of one generations shard with the registered ``model``, loaded
    once into ``loaded`` (key -> loaded model) and taken from there by the job's next shard."""
    from tailgate.models import load_model, model_spec, resolve_device

    try:
        table = read_parquet(generations_path, columns=["prompt_id", "completion"])
    except (OSError, KeyError, ValueError, pa.ArrowException) as exc:
        raise InputError(
            f"{generations_path}: cannot read the columns prompt_id, completion ({exc}). Fix: "
            f"re-run the generation of condition '{condition}'."
        ) from None
    table = table.sort_by("prompt_id")
    texts = ["" if t is None else str(t) for t in table.column("completion").to_pylist()]
    if texts:
        if model not in loaded:
            loaded[model] = load_model(
                model_spec(study, model, condition=condition),
                device=resolve_device(options.get("device")),
                condition=condition,
                head="base",
            )
        vectors = embed_texts(loaded[model], texts, batch_size=int(options.get("batch_size", 16)))
    else:
        vectors = np.zeros((0, 1), dtype=np.float32)
    vectors = np.ascontiguousarray(vectors, dtype="<f4")
    width = vectors.shape[1]
    write_parquet(
        out_path,
        pa.table(
            {
                "prompt_id": table.column("prompt_id").cast(pa.int64()),
                "embedding": pa.array([row.tobytes() for row in vectors], pa.binary(4 * width)),
            },
            metadata={"dimension": str(width), "dtype": "float32 little-endian"},
        ),
    )
