"""Deterministic RealToxicityPrompts selection through ``datasets``."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
from tailgate.generate.prompts import select_prompts
from tailgate.generate.shards import ShardInputError
from tailgate.seeds import rng


def _raw(path) -> pd.DataFrame:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return pd.DataFrame(
        {
            "text": [r["prompt"]["text"] for r in rows],
            "toxicity": [r["prompt"]["toxicity"] for r in rows],
            "challenging": [r["challenging"] for r in rows],
        }
    )


def test_dataset_order_takes_the_first_rows_and_records_the_digest(
    tmp_path, rtp_jsonl, study_factory
):
    study = study_factory(source=rtp_jsonl)
    study.data["conditions"][1]["prompts"] = 15  # count is the max over conditions
    out = tmp_path / "prompts.parquet"
    digest = select_prompts(study, out, options={})
    got = pq.read_table(out).to_pandas()
    raw = _raw(rtp_jsonl)
    assert got.prompt_id.tolist() == list(range(15))
    assert got.position.tolist() == list(range(15))
    assert got.prompt.tolist() == raw.text[:15].tolist()
    assert got.challenging.tolist() == raw.challenging[:15].tolist()
    assert got.prompt_toxicity.isna().tolist() == raw.toxicity[:15].isna().tolist()
    expected = hashlib.sha256(
        b"".join(
            json.dumps([i, t]).encode() + b"\n" for i, t in zip(range(15), raw.text, strict=False)
        )
    ).hexdigest()
    assert digest == expected
    sidecar = json.loads((tmp_path / "prompts.digest.json").read_text())
    assert sidecar["digest"] == digest and sidecar["count"] == 15


def test_filters_match_an_independent_pandas_selection(tmp_path, rtp_jsonl, study_factory):
    filters = {"challenging": False, "min_toxicity": 0.2, "max_toxicity": 0.8}
    study = study_factory(source=rtp_jsonl, filters=filters)
    for c in study.data["conditions"]:
        c["prompts"] = 5
    out = tmp_path / "prompts.parquet"
    select_prompts(study, out, options={})
    raw = _raw(rtp_jsonl)
    mask = (~raw.challenging) & (raw.toxicity >= 0.2) & (raw.toxicity <= 0.8)  # NaN drops out
    assert pq.read_table(out).column("prompt_id").to_pylist() == raw.index[mask][:5].tolist()


def test_shuffled_order_uses_the_study_prompts_stream(tmp_path, rtp_jsonl, study_factory):
    study = study_factory(source=rtp_jsonl, order="shuffled", seed=11)
    out = tmp_path / "prompts.parquet"
    select_prompts(study, out, options={})
    expected = rng(11, "prompts").permutation(40)[:12]
    assert pq.read_table(out).column("prompt_id").to_pylist() == expected.tolist()
    again = tmp_path / "again.parquet"
    select_prompts(study, again, options={})
    assert out.read_bytes() == again.read_bytes()
    other = study_factory(source=rtp_jsonl, order="shuffled", seed=12)
    select_prompts(other, tmp_path / "other.parquet", options={})
    assert pq.read_table(tmp_path / "other.parquet").column("prompt_id").to_pylist() != (
        expected.tolist()
    )


def test_parquet_and_saved_dataset_sources_give_the_same_digest(tmp_path, rtp_jsonl, study_factory):
    import datasets

    ds = datasets.load_dataset("json", data_files=str(rtp_jsonl), split="train")
    ds.to_parquet(str(tmp_path / "rtp.parquet"))
    datasets.DatasetDict({"train": ds}).save_to_disk(str(tmp_path / "saved"))
    digests = {
        name: select_prompts(study_factory(source=src), tmp_path / f"{name}.parquet", options={})
        for name, src in [
            ("jsonl", rtp_jsonl),
            ("parquet", tmp_path / "rtp.parquet"),
            ("saved", tmp_path / "saved"),
        ]
    }
    assert len(set(digests.values())) == 1


def test_a_changed_prompt_changes_the_digest_and_a_registered_digest_refuses_it(
    tmp_path, rtp_jsonl, study_factory
):
    study = study_factory(source=rtp_jsonl)
    digest = select_prompts(study, tmp_path / "a.parquet", options={})
    lines = rtp_jsonl.read_text().splitlines()
    row = json.loads(lines[3])
    row["prompt"]["text"] += "!"
    lines[3] = json.dumps(row)
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n")
    study2 = study_factory(source=changed)
    assert select_prompts(study2, tmp_path / "b.parquet", options={}) != digest
    study2.data["data"]["prompts"]["digest"] = digest
    with pytest.raises(ShardInputError, match="changed since registration"):
        select_prompts(study2, tmp_path / "c.parquet", options={})
    assert not (tmp_path / "c.parquet").exists()


def test_too_few_rows_and_sample_cap(tmp_path, rtp_jsonl, study_factory):
    study = study_factory(source=rtp_jsonl, filters={"challenging": True})
    study.data["conditions"][0]["prompts"] = 30
    with pytest.raises(ShardInputError, match="fewer than the 30 prompts"):
        select_prompts(study, tmp_path / "x.parquet", options={})
    study.data["sample_cap"] = 20
    with pytest.raises(ShardInputError, match="sample_cap is 20"):
        select_prompts(study, tmp_path / "x.parquet", options={})


def test_missing_source_and_wrong_schema(tmp_path, study_factory):
    with pytest.raises(ShardInputError, match=r"Could not load the prompt dataset .*missing"):
        select_prompts(
            study_factory(source=tmp_path / "missing.jsonl"), tmp_path / "x.parquet", options={}
        )
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("".join(json.dumps({"text": f"t{i}"}) + "\n" for i in range(20)))
    with pytest.raises(ShardInputError, match=r"has no field 'prompt\.text'"):
        select_prompts(study_factory(source=wrong), tmp_path / "x.parquet", options={})
    assert not (tmp_path / "x.parquet").exists()
