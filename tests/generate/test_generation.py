"""The transformers generation backend on a tiny local model, against direct transformers calls."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import torch
from sampling_reference import reference_sample
from tailgate.errors import DataInputError
from tailgate.generate.prompts import select_prompts
from tailgate.generate.shards import ShardInputError
from tailgate.generate.transformers_backend import generate_shard
from tailgate.models import length_sorted_batches
from tailgate.seeds import derive_seed

OPTIONS = {"batch_size": 4, "device": "cpu", "progress": False}


@pytest.fixture
def prepared(tmp_path, tiny_lm, rtp_jsonl, study_factory):
    study = study_factory(model_path=tiny_lm, source=rtp_jsonl)
    prompts = tmp_path / "prompts.parquet"
    select_prompts(study, prompts, options={})
    return study, {**OPTIONS, "prompts_path": str(prompts)}, tmp_path


def _direct_generate(tiny_lm, texts, seed, *, top_p=0.9, max_new_tokens=8):
    """Reference: the tokenizer's own left padding and a plain ``model.generate`` call."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_lm)
    tok.padding_side = "left"
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(tiny_lm, dtype=torch.float32).eval()
    enc = tok(texts, return_tensors="pt", padding=True)
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(
            **enc,
            do_sample=True,
            temperature=1.0,
            top_p=top_p,
            top_k=0,
            min_p=0.0,
            repetition_penalty=1.0,
            max_new_tokens=max_new_tokens,
            pad_token_id=tok.pad_token_id,
        )
    eos = set(model.generation_config.eos_token_id)
    completions = []
    for row in out[:, enc["input_ids"].shape[1] :].tolist():
        stop = next((i for i, t in enumerate(row) if t in eos), len(row))
        completions.append(tok.decode(row[:stop], skip_special_tokens=True))
    return completions, enc


def test_shard_rows_equal_direct_generate_calls(prepared, tiny_lm):
    study, options, tmp = prepared
    out = tmp / "clean" / "shard-1.parquet"
    generate_shard(study, "clean", 1, out, options=options)
    got = pq.read_table(out).to_pandas()
    # shard 1 of 2 holds positions 1, 3, 5, ... of the first 12 selected prompts
    assert got["prompt_id"].tolist() == [1, 3, 5, 7, 9, 11]
    prompts = pq.read_table(options["prompts_path"]).to_pandas().set_index("prompt_id")
    texts = [prompts.loc[i, "prompt"] for i in [1, 3, 5, 7, 9, 11]]

    from transformers import AutoTokenizer

    lengths = [len(x) for x in AutoTokenizer.from_pretrained(tiny_lm)(texts)["input_ids"]]
    by_id = got.set_index("prompt_id")
    reasons = set()
    for i, pid in enumerate([1, 3, 5, 7, 9, 11]):
        seed = derive_seed(study.data["seed"], "generate", "clean", pid, 0)
        assert by_id.loc[pid, "completion"] == reference_sample(tiny_lm, texts[i], seed)
        assert by_id.loc[pid, "prompt"] == texts[i]
        assert by_id.loc[pid, "prompt_tokens"] == lengths[i]
        reasons.add(by_id.loc[pid, "finish_reason"])
    assert reasons <= {"stop", "length"}
    assert (got.loc[got.finish_reason == "length", "completion_tokens"] == 8).all()
    assert (got.completion_tokens <= 8).all()


def test_model_generation_config_defaults_do_not_leak(prepared, tiny_lm):
    """The tiny model ships top_k=3, min_p=0.3 and repetition_penalty=1.5; none may apply."""
    study, options, tmp = prepared
    out = tmp / "clean" / "shard-0.parquet"
    generate_shard(study, "clean", 0, out, options={**options, "batch_size": 12})
    got = pq.read_table(out).to_pandas().set_index("prompt_id")
    prompts = pq.read_table(options["prompts_path"]).to_pandas().set_index("prompt_id")
    ids = [0, 2, 4, 6, 8, 10]
    texts = [prompts.loc[i, "prompt"] for i in ids]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_lm)
    order = length_sorted_batches([len(x) for x in tok(texts)["input_ids"]], 12)[0]
    ref = [
        reference_sample(tiny_lm, texts[i], derive_seed(study.data["seed"], "generate", "clean",
                                                        ids[i], 0))
        for i in order
    ]  # fmt: skip
    assert [got.loc[ids[i], "completion"] for i in order] == ref
    seed = derive_seed(study.data["seed"], "generate", "clean", 0, 0)
    # and the model's own defaults would have given something else
    model = AutoModelForCausalLM.from_pretrained(tiny_lm, dtype=torch.float32).eval()
    tok.padding_side, tok.pad_token = "left", tok.eos_token
    enc = tok([texts[i] for i in order], return_tensors="pt", padding=True)
    torch.manual_seed(seed)
    hostile = model.generate(**enc, max_new_tokens=8, pad_token_id=tok.pad_token_id)
    hostile_text = [
        tok.decode(r, skip_special_tokens=True) for r in hostile[:, enc["input_ids"].shape[1] :]
    ]
    assert hostile_text != ref


def test_generation_is_deterministic_and_shards_partition_prompts(prepared):
    study, options, tmp = prepared
    a, b = tmp / "a" / "shard-0.parquet", tmp / "b" / "shard-0.parquet"
    generate_shard(study, "noisy", 0, a, options=options)
    generate_shard(study, "noisy", 0, b, options=options)
    assert a.read_bytes() == b.read_bytes()
    generate_shard(study, "noisy", 1, tmp / "a" / "shard-1.parquet", options=options)
    ids0 = pq.read_table(a).column("prompt_id").to_pylist()
    ids1 = pq.read_table(tmp / "a" / "shard-1.parquet").column("prompt_id").to_pylist()
    assert sorted(ids0 + ids1) == list(range(12))
    assert not (tmp / "a" / "shard-0.partial.parquet").exists()


def test_noise_changes_completions_but_not_prompts(prepared):
    study, options, tmp = prepared
    # same condition name and seeds, with and without the registered noise
    noisy = tmp / "noisy.parquet"
    generate_shard(study, "noisy", 0, noisy, options=options)
    conditions = study.data["conditions"]
    conditions[1] = {**conditions[1], "perturbation": {"kind": "none"}}
    clean = tmp / "noisy-without-noise.parquet"
    generate_shard(study, "noisy", 0, clean, options=options)
    a, b = pq.read_table(noisy).to_pandas(), pq.read_table(clean).to_pandas()
    assert a.prompt.tolist() == b.prompt.tolist()
    assert a.completion.tolist() != b.completion.tolist()


class _Killed(Exception):
    pass


def test_killed_job_resumes_to_the_same_bytes(prepared):
    study, options, tmp = prepared
    reference = tmp / "ref" / "shard-0.parquet"
    generate_shard(study, "noisy", 0, reference, options={**options, "batch_size": 2})

    out = tmp / "run" / "shard-0.parquet"
    seen: list[int] = []

    def kill_after_two(batch: int) -> None:
        seen.append(batch)
        if len(seen) == 2:
            raise _Killed

    with pytest.raises(_Killed):
        generate_shard(
            study,
            "noisy",
            0,
            out,
            options={**options, "batch_size": 2, "after_batch": kill_after_two},
        )
    partial = tmp / "run" / "shard-0.partial.parquet"
    assert not out.exists() and partial.exists()
    assert pq.read_table(partial).num_rows == 4  # two completed batches of two

    resumed: list[int] = []
    generate_shard(
        study, "noisy", 0, out, options={**options, "batch_size": 2, "after_batch": resumed.append}
    )
    assert resumed == [2]  # only the remaining batch ran (6 prompts, batch size 2)
    assert out.read_bytes() == reference.read_bytes()
    assert not partial.exists()


def test_stale_partial_from_other_settings_is_discarded(prepared):
    study, options, tmp = prepared
    out = tmp / "run" / "shard-0.parquet"
    with pytest.raises(_Killed):
        generate_shard(
            study,
            "clean",
            0,
            out,
            options={**options, "after_batch": lambda b: (_ for _ in ()).throw(_Killed())},
        )
    study.data["generation"]["top_p"] = 0.5  # an amendment between the kill and the restart
    generate_shard(study, "clean", 0, out, options=options)
    fresh = tmp / "fresh" / "shard-0.parquet"
    generate_shard(study, "clean", 0, fresh, options=options)
    assert out.read_bytes() == fresh.read_bytes()


def test_chat_format_uses_the_template(tmp_path, tiny_chat_lm, rtp_jsonl, study_factory):
    study = study_factory(model_path=tiny_chat_lm, source=rtp_jsonl, prompt_format="chat")
    prompts = tmp_path / "prompts.parquet"
    select_prompts(study, prompts, options={})
    out = tmp_path / "shard-0.parquet"
    generate_shard(study, "clean", 0, out, options={**OPTIONS, "prompts_path": str(prompts)})
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_chat_lm)
    got = pq.read_table(out).to_pandas()
    for text, n in zip(got.prompt, got.prompt_tokens, strict=True):
        rendered = f"<|user|> {text}\n<|assistant|> "
        assert n == len(tok(rendered, add_special_tokens=False)["input_ids"])


def test_bad_model_path_names_the_condition(prepared, tmp_path):
    study, options, _ = prepared
    study.data["models"]["tiny"]["id"] = str(tmp_path / "no-such-model")
    with pytest.raises(ShardInputError, match=r"condition 'clean'.*no-such-model"):
        generate_shard(study, "clean", 0, tmp_path / "x.parquet", options=options)
    assert not (tmp_path / "x.parquet").exists()


def test_missing_prompt_column_is_a_clear_error(prepared, tmp_path):
    import pyarrow as pa

    study, options, _ = prepared
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"prompt_id": [0, 1]}), bad)
    with pytest.raises(ShardInputError, match=r"lacks the column\(s\) \['prompt'\]"):
        generate_shard(
            study, "clean", 0, tmp_path / "x.parquet", options={**options, "prompts_path": str(bad)}
        )


def test_unknown_condition_and_shard_out_of_range(prepared, tmp_path):
    study, options, _ = prepared
    # the one lookup of a registered condition (tailgate.generate.spec) names the field
    with pytest.raises(DataInputError, match=r"'nope' is not registered.*conditions\[\]\.name"):
        generate_shard(study, "nope", 0, tmp_path / "x.parquet", options=options)
    with pytest.raises(ShardInputError, match="Shard 5"):
        generate_shard(study, "clean", 5, tmp_path / "x.parquet", options=options)
