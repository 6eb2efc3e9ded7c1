"""Guo et al. (2025) on a real model path: per-token losses of a tiny local LM, written by the
token_nll
scorer through Snakemake, feed the percentiles analysis (its rule, its statistics, its
criteria), and its summaries equal a direct computation from the same per-token files."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from tiny_project import build_assets, freeze, make_project, transformers_study, workflow_project

NAME = "tinypct"

ANALYSES = """\
analyses:
  pct:
    kind: percentiles
    conditions: [clean, noisy]
    scorer: nll
    resamples: 200
    criteria:
      - {name: clean-median-positive, statistic: "p50(clean)", comparison: ">", threshold: 0.0}
      - {name: selects, statistic: "selected(p50)", comparison: ">=", threshold: 1}
"""


@pytest.fixture(scope="module")
def pct_run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            mp.setenv(var, "1")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            mp.setenv(var, "1")
        root = tmp_path_factory.mktemp("tiny-pct")
        assets = build_assets(root / "assets")
        text = transformers_study(NAME, assets, prompts=6, shards=1, max_new_tokens=8)
        assert "analyses: {}\n" in text
        prereg = make_project(root, NAME, text.replace("analyses: {}\n", ANALYSES))
        freeze(prereg)
        proj = workflow_project(root, NAME)
        res = proj.snakemake(f"results/{NAME}/analyses/pct/statistics.json", cores=2)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        yield proj


def test_token_losses_of_a_tiny_model_feed_the_analysis(pct_run) -> None:
    doc = json.loads((pct_run.results / "analyses" / "pct" / "statistics.json").read_text())
    assert {c["name"]: c["outcome"] for c in doc["criteria"]} == {
        "clean-median-positive": "PASS",
        "selects": "PASS",
    }
    for condition in ("clean", "noisy"):
        tokens = pq.read_table(
            pct_run.results / "scores" / "nll" / condition / "shard-0.tokens.parquet"
        ).to_pandas()
        x = tokens["loss"].to_numpy().astype(np.float32).astype(np.float64)
        summ = doc["statistics"]["summaries"][condition]
        assert summ["tokens"] == len(x) > 0
        assert summ["sequences"] == tokens["prompt_id"].nunique() == 6
        assert summ["values"]["p50"] == pytest.approx(np.percentile(x, 50), rel=1e-12)
        assert summ["values"]["mean"] == pytest.approx(x.mean(), rel=1e-6)
        low, high = summ["ci"]["p50"]
        assert low <= summ["values"]["p50"] <= high
    record = pct_run.results / "provenance" / "analyses__pct__measures.json.json"
    inputs = {i["path"] for i in json.loads(record.read_text())["inputs"]}
    assert any(p.endswith("scores/nll/clean/shard-0.parquet") for p in inputs)


def test_token_losses_are_stored_as_float32_per_condition_and_shard(pct_run) -> None:
    """Issue 13: one compact file per condition and shard (loss float32, position int32); the
    row score is the float64 mean of exactly the stored float32 losses."""
    import pyarrow as pa

    for condition in ("clean", "noisy"):
        shard = pct_run.results / "scores" / "nll" / condition / "shard-0.parquet"
        tokens = pq.read_table(shard.with_name("shard-0.tokens.parquet"))
        assert tokens.schema.field("loss").type == pa.float32()
        assert tokens.schema.field("position").type == pa.int32()
        assert tokens.schema.field("prompt_id").type == pa.int64()
        df = tokens.to_pandas()
        means = df.groupby("prompt_id")["loss"].apply(lambda v: v.to_numpy().mean(dtype=np.float64))
        scores = pq.read_table(shard).to_pandas().set_index("prompt_id")["score"]
        assert scores.index.tolist() == means.index.tolist()
        np.testing.assert_array_equal(scores.to_numpy(), means.to_numpy())
