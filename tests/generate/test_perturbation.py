"""Embedding-noise perturbation (Sec. 5 of Zhou (2026)): scale, seeding, and sigma_rel = 0."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import torch
from tailgate.generate.perturbation import EmbeddingNoise, embedding_noise, perturbation_spec
from tailgate.generate.prompts import select_prompts
from tailgate.generate.shards import ShardInputError
from tailgate.generate.transformers_backend import generate_shard


@pytest.fixture(scope="module")
def model(tiny_lm):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_lm, dtype=torch.float32).eval()


def _ids(n: int = 40, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 300, (3, n), generator=g)


def test_sigma_zero_registers_no_hook_and_is_bit_identical(model):
    ids = _ids()
    with torch.no_grad():
        plain = model(ids).logits
        with embedding_noise(model, EmbeddingNoise("embedding_noise", 0.0), seed=1) as gen:
            assert gen is None
            assert not model.get_input_embeddings()._forward_hooks
            hooked = model(ids).logits
    assert torch.equal(plain, hooked)


def test_hook_adds_sigma_times_token_rms_gaussian_noise(model):
    ids, sigma, seed = _ids(), 0.25, 1234
    layer = model.get_input_embeddings()
    seen = {}
    with torch.no_grad():
        clean = layer(ids)
        with embedding_noise(model, EmbeddingNoise("embedding_noise", sigma), seed=seed):
            probe = layer.register_forward_hook(lambda m, i, o: seen.setdefault("out", o))
            model(ids)
            probe.remove()
    z = torch.randn(clean.shape, generator=torch.Generator().manual_seed(seed))
    rms = clean.pow(2).mean(-1, keepdim=True).sqrt()
    torch.testing.assert_close(seen["out"], clean + sigma * rms * z, rtol=0, atol=1e-6)
    assert not layer._forward_hooks  # removed on exit


def test_relative_noise_energy_is_sigma_squared(model):
    """E ||noise||^2 / ||e||^2 = sigma^2 per token (the definition of sigma_rel)."""
    ids, sigma = _ids(n=200), 0.5
    layer = model.get_input_embeddings()
    seen = {}
    with torch.no_grad():
        clean = layer(ids)
        with embedding_noise(model, EmbeddingNoise("embedding_noise", sigma), seed=5):
            probe = layer.register_forward_hook(lambda m, i, o: seen.setdefault("out", o))
            model(ids)
            probe.remove()
    ratio = ((seen["out"] - clean).pow(2).sum(-1) / clean.pow(2).sum(-1)).mean().item()
    # 600 tokens x 32 dims: the mean of chi2_32/32 has sd 0.25/sqrt(600) ~ 0.01
    assert ratio == pytest.approx(sigma**2, rel=0.05)


def test_hook_is_removed_when_the_block_raises(model):
    with (
        pytest.raises(RuntimeError),
        embedding_noise(model, EmbeddingNoise("embedding_noise", 0.1), seed=0),
    ):
        raise RuntimeError("boom")
    assert not model.get_input_embeddings()._forward_hooks


def test_sigma_zero_condition_writes_the_same_bytes_as_no_perturbation(
    tmp_path, tiny_lm, rtp_jsonl, study_factory
):
    study = study_factory(model_path=tiny_lm, source=rtp_jsonl)
    prompts = tmp_path / "prompts.parquet"
    select_prompts(study, prompts, options={})
    options = {"batch_size": 4, "device": "cpu", "progress": False, "prompts_path": str(prompts)}
    cond = study.data["conditions"][0]
    generate_shard(study, "clean", 0, tmp_path / "none.parquet", options=options)
    cond["perturbation"] = {"kind": "embedding_noise", "sigma_rel": 0.0}
    generate_shard(study, "clean", 0, tmp_path / "zero.parquet", options=options)
    assert (tmp_path / "none.parquet").read_bytes() == (tmp_path / "zero.parquet").read_bytes()
    assert pq.read_table(tmp_path / "zero.parquet").num_rows == 6


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"kind": "dropout"}, "known kinds"),
        ({"kind": "embedding_noise", "sigma_rel": -0.1}, "finite number >= 0"),
        ({"kind": "embedding_noise", "sigma_rel": float("nan")}, "finite number >= 0"),
        ({"kind": "none", "sigma_rel": 0.2}, "set kind to 'embedding_noise'"),
    ],
)
def test_bad_perturbation_specs_name_the_condition(spec, match):
    with pytest.raises(ShardInputError, match=match) as err:
        perturbation_spec("qwen-noisy", spec)
    assert "qwen-noisy" in str(err.value)
