"""The one loader of registered models, shared by generation, token-NLL scoring, the judge and
response embeddings.

A registered model (``models.<key>`` of the pre-registration: a hub id or a local directory written
by ``save_pretrained``, a revision, a dtype and a prompt format) is validated into a
:class:`ModelSpec` and loaded by :func:`load_model` with its tokenizer (left padding, a pad token)
in eval mode on the resolved device. Prompts are rendered as the registered format implies
(:func:`format_prompt`: the text itself, or the tokenizer's chat template) and batched longest
first (:func:`length_sorted_batches`), so every stage that runs a model sees the same tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from tailgate.errors import ShardInputError

__all__ = [
    "LoadedModel",
    "ModelSpec",
    "encode_prompts",
    "format_prompt",
    "length_sorted_batches",
    "load_causal_lm",
    "load_model",
    "model_spec",
    "resolve_device",
]

_DTYPES = {
    "auto": "auto",
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
}
_FORMATS = ("chat", "plain", "raw")  # "plain" and "raw" are synonyms: no template


@dataclass(frozen=True)
class ModelSpec:
    """A registered model: hub id or local path, revision, dtype and prompt format."""

    key: str
    source: str
    revision: str | None
    dtype: str
    prompt_format: str


@dataclass(frozen=True)
class LoadedModel:
    """A causal LM ready for generation or judging."""

    spec: ModelSpec
    model: Any
    tokenizer: Any
    device: torch.device


def model_spec(study: Any, key: str, *, condition: str) -> ModelSpec:
    """Validate the registered ``models.<key>`` (id or path, revision, dtype, prompt_format)."""
    models = study.models()
    if key not in models:
        raise ShardInputError(
            f"Condition {condition!r} uses model {key!r}, which is not among the registered "
            f"models {sorted(models)}. Register the model under 'models' or fix the reference."
        )
    spec = dict(models[key] or {})
    source = spec.get("id") or spec.get("path")
    if not source:
        raise ShardInputError(
            f"Model {key!r} (used by condition {condition!r}) has no 'id' (hub id or local path). "
            "Register where the weights come from."
        )
    dtype = str(spec.get("dtype") or "auto")
    if dtype not in _DTYPES:
        raise ShardInputError(
            f"Model {key!r} registers dtype {dtype!r}; use one of {sorted(_DTYPES)}."
        )
    fmt = str(spec.get("prompt_format") or "chat")
    if fmt not in _FORMATS:
        raise ShardInputError(
            f"Model {key!r} registers prompt_format {fmt!r}; use 'plain' (raw continuation of the "
            "prompt text) or 'chat' (the model's chat template)."
        )
    return ModelSpec(
        key=key,
        source=str(source),
        revision=spec.get("revision"),
        dtype=dtype,
        prompt_format=fmt,
    )


def resolve_device(option: str | None) -> torch.device:
    """``"auto"`` is the first CUDA device when present, else the CPU."""
    option = option or "auto"
    if option == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(option)


def load_causal_lm(spec: ModelSpec, *, device: torch.device, condition: str) -> LoadedModel:
    """Load a tokenizer (left padding) and causal LM (eval mode) for ``spec`` on ``device``."""
    return load_model(spec, device=device, condition=condition, head="causal_lm")


def load_model(
    spec: ModelSpec, *, device: torch.device, condition: str, head: str = "causal_lm"
) -> LoadedModel:
    """The one loader of registered models: a tokenizer (left padding) and the model (eval mode).

    ``head``: ``causal_lm`` (generation, ``token_nll``, the judge) or ``base`` (the model without
    its head, whose last hidden state the response embeddings of Acharyya et al. (2025) pool: an HF
    encoder or
    the generating model's own trunk).
    """
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    auto = {"causal_lm": AutoModelForCausalLM, "base": AutoModel}[head]
    try:
        tokenizer = AutoTokenizer.from_pretrained(spec.source, revision=spec.revision)
        model = auto.from_pretrained(spec.source, revision=spec.revision, dtype=_DTYPES[spec.dtype])
    except (OSError, ValueError, KeyError) as exc:
        raise ShardInputError(
            f"Could not load model {spec.key!r} for condition {condition!r} from "
            f"{spec.source!r} (models.{spec.key}.id, revision {spec.revision!r}): "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}. Give a local "
            "directory written by save_pretrained, or a hub id that is reachable (or already "
            "cached when offline)."
        ) from exc
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.pad_token_id is None:
        raise ShardInputError(
            f"Model {spec.key!r} ({spec.source!r}) has neither a pad nor an end-of-sequence token, "
            "so batches cannot be padded. Use a tokenizer that defines one."
        )
    model.to(device)
    model.eval()
    return LoadedModel(spec=spec, model=model, tokenizer=tokenizer, device=device)


def format_prompt(lm: LoadedModel, text: str) -> str:
    """The text fed to the model: the prompt itself (``plain``) or its chat-template rendering."""
    if lm.spec.prompt_format != "chat":
        return text
    if not getattr(lm.tokenizer, "chat_template", None):
        raise ShardInputError(
            f"Model {lm.spec.key!r} registers prompt_format 'chat' but its tokenizer "
            f"({lm.spec.source!r}) has no chat template. Register prompt_format 'plain' or use a "
            "model that ships a chat template."
        )
    return lm.tokenizer.apply_chat_template(
        [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False
    )


def encode_prompts(lm: LoadedModel, texts: list[str]) -> list[list[int]]:
    """Token ids of each prompt as the model sees it (special tokens as the format implies)."""
    rendered = [format_prompt(lm, t) for t in texts]
    special = lm.spec.prompt_format != "chat"
    return [list(x) for x in lm.tokenizer(rendered, add_special_tokens=special)["input_ids"]]


def length_sorted_batches(lengths: list[int], batch_size: int) -> list[np.ndarray]:
    """Row indices grouped into batches, longest first, ties in row order (deterministic)."""
    if batch_size < 1:
        raise ShardInputError(f"batch_size must be a positive integer, got {batch_size!r}.")
    order = np.lexsort((np.arange(len(lengths)), -np.asarray(lengths, dtype=np.int64)))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
