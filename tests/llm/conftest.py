"""Fixtures that build tiny models, tokenizers and datasets locally (no downloads).

* ``tiny_lm``: a random-init GPT-2-style causal LM with a byte-level BPE tokenizer trained
  on a few sentences, saved with ``save_pretrained``. Its ``generation_config`` carries
  hostile defaults (top_k=3, min_p=0.3, repetition_penalty=1.5) that a registered
  sampling spec must override.
* ``tiny_chat_lm``: the same with a chat template.
* ``tiny_bert`` / ``detoxify_checkpoint``: a random-init BERT classifier with six labels and
  a WordPiece tokenizer, and a Detoxify-format checkpoint dict around it
  (``{"config": {"arch": {"args": ...}, "dataset": {"args": {"classes": ...}}},
  "state_dict": ...}``, as ``detoxify.detoxify.load_checkpoint`` reads it).
* ``rtp_jsonl``: a small RealToxicityPrompts-schema JSONL file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("HF_DATASETS_CACHE", tempfile.mkdtemp(prefix="tailgate-datasets-"))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest
from tailgate.prereg.validated import Study
from tiny_models import (
    build_detoxify_checkpoint,
    build_tiny_bert,
    build_tiny_lm,
    write_rtp_jsonl,
)


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="session")
def tiny_chat_lm(tmp_path_factory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny-chat-lm"), chat=True, seed=1)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tiny-bert")
    build_tiny_bert(path)
    return path


@pytest.fixture(scope="session")
def detoxify_checkpoint(tiny_bert: Path, tmp_path_factory) -> Path:
    """A Detoxify-format checkpoint around ``tiny_bert``."""
    return build_detoxify_checkpoint(
        tiny_bert, tmp_path_factory.mktemp("detoxify") / "toxic_tiny.ckpt"
    )


@pytest.fixture
def rtp_jsonl(tmp_path) -> Path:
    return write_rtp_jsonl(tmp_path / "rtp.jsonl", 40)


def make_study(
    *,
    model_path: Path | None = None,
    source: Path | str = "unused",
    conditions: dict | None = None,
    scorers: list | None = None,
    shards: int = 2,
    max_new_tokens: int = 8,
    seed: int = 7,
    prompt_format: str = "plain",
    order: str = "dataset",
    filters: dict | None = None,
    extra_models: dict | None = None,
) -> Study:
    """A stand-in for a loaded pre-registration with defaults applied."""
    models = {}
    if model_path is not None:
        models["tiny"] = {"id": str(model_path), "dtype": "float32", "prompt_format": prompt_format}
    models.update(extra_models or {})
    data = {
        "seed": seed,
        "sample_cap": 1000,
        "data": {
            "prompts": {
                "source": str(source),
                "split": "train",
                "order": order,
                "filters": filters or {},
            }
        },
        "models": models,
        "generation": {
            "temperature": 1.0,
            "top_p": 0.9,
            "max_new_tokens": max_new_tokens,
            "shards": shards,
        },
        "conditions": conditions
        or [
            {"name": "clean", "model": "tiny", "prompts": 12, "perturbation": {"kind": "none"}},
            {
                "name": "noisy",
                "model": "tiny",
                "prompts": 12,
                "perturbation": {"kind": "embedding_noise", "sigma_rel": 0.25},
            },
        ],
        "scorers": scorers or [],
    }
    return Study(Path("tiny-study.yaml"), {"study": "tiny-study", **data}, "0" * 64, "0" * 64)


@pytest.fixture
def study_factory():
    return make_study
