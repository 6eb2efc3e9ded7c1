"""The committed tiny encoder (``preregistrations/models/tiny-encoder``, the perturbation
example's embedding model): its builder re-makes the same bytes, and it maps the simulate
backend's binary response texts to distinct vectors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_models import build_tiny_encoder

COMMITTED = Path(__file__).resolve().parents[2] / "preregistrations" / "models" / "tiny-encoder"


def test_the_builder_re_makes_the_committed_bytes(tmp_path: Path) -> None:
    import transformers

    recorded = json.loads((COMMITTED / "config.json").read_text())["transformers_version"]
    if recorded != transformers.__version__:
        pytest.skip(f"the committed files were written by transformers {recorded}")
    made = build_tiny_encoder(tmp_path / "tiny-encoder")
    names = sorted(p.name for p in COMMITTED.iterdir())
    assert names == sorted(p.name for p in made.iterdir())
    for name in names:
        assert (made / name).read_bytes() == (COMMITTED / name).read_bytes(), name


def test_the_responses_embed_to_distinct_vectors() -> None:
    from tailgate.generate.simulate import BERNOULLI_TEXTS
    from tailgate.models import ModelSpec, load_model
    from tailgate.score.embedding import embed_texts

    spec = ModelSpec("tiny-encoder", str(COMMITTED), None, "float32", "plain")
    lm = load_model(spec, device=torch.device("cpu"), condition="x", head="base")
    texts = [BERNOULLI_TEXTS[0], BERNOULLI_TEXTS[1], BERNOULLI_TEXTS[0]]
    vectors = embed_texts(lm, texts)
    assert vectors.shape == (3, 16)
    np.testing.assert_array_equal(vectors[0], vectors[2])
    assert np.linalg.norm(vectors[0] - vectors[1]) > 0.1
