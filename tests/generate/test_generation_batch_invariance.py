"""Generation does not depend on the batch size (an operational setting): every row is sampled
from its own stream, derived from the study seed, the condition and the prompt (or response)
index, so that ``generation.batch_size`` cannot re-roll a study's sample."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from sampling_reference import reference_sample
from tailgate.generate.prompts import select_prompts
from tailgate.generate.transformers_backend import generate_shard
from tailgate.seeds import derive_seed


def _shard_bytes(study, condition, prompts, out, batch_size):
    options = {"batch_size": batch_size, "device": "cpu", "progress": False}
    generate_shard(study, condition, 0, out, options={**options, "prompts_path": str(prompts)})
    return out.read_bytes()


@pytest.mark.parametrize("condition", ["clean", "noisy"])
def test_batch_sizes_1_7_64_give_byte_identical_generations(
    tmp_path, tiny_lm, rtp_jsonl, study_factory, condition
):
    study = study_factory(model_path=tiny_lm, source=rtp_jsonl, shards=1)
    prompts = tmp_path / "prompts.parquet"
    select_prompts(study, prompts, options={})
    got = {
        b: _shard_bytes(study, condition, prompts, tmp_path / str(b) / "s.parquet", b)
        for b in (1, 7, 64)
    }
    assert got[1] == got[7] == got[64]
    rows = pq.read_table(tmp_path / "1" / "s.parquet").to_pandas()
    assert len(rows) == 12 and rows["completion"].nunique() > 1


def test_each_row_equals_an_independent_sampler_seeded_by_its_prompt(
    tmp_path, tiny_lm, rtp_jsonl, study_factory
):
    study = study_factory(model_path=tiny_lm, source=rtp_jsonl, shards=1)
    prompts = tmp_path / "prompts.parquet"
    select_prompts(study, prompts, options={})
    out = tmp_path / "s.parquet"
    _shard_bytes(study, "clean", prompts, out, 5)
    got = pq.read_table(out).to_pandas()
    for pid, text, completion in zip(got.prompt_id, got.prompt, got.completion, strict=True):
        seed = derive_seed(study.data["seed"], "generate", "clean", int(pid), 0)
        assert completion == reference_sample(tiny_lm, text, seed), pid
