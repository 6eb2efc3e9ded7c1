"""The one shard-selection rule (tailgate.generate.shards.shard_indices) and its backends."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tailgate.generate import DataInputError, generate_shard
from tailgate.generate.shards import ShardInputError, shard_indices, shard_prompts


@pytest.mark.parametrize(("n", "shards", "count"), [(0, 1, 0), (10, 1, 10), (17, 4, 13), (5, 7, 5)])
def test_shards_partition_the_capped_positions(n, shards, count):
    positions = np.random.default_rng(n).permutation(n)  # any order of distinct ranks
    seen = []
    for k in range(shards):
        idx = shard_indices(positions, shard=k, shards=shards, count=count, condition="c")
        # reference: a plain loop over the rows
        expected = [i for i, p in enumerate(positions) if p < count and p % shards == k]
        assert idx.tolist() == expected
        assert idx.dtype == np.int64
        seen.extend(positions[idx].tolist())
    assert sorted(seen) == list(range(min(n, count)))


def test_integer_positions_mean_row_order_and_no_cap():
    assert shard_indices(10, shard=2, shards=3, count=None, condition="c").tolist() == [2, 5, 8]
    assert shard_indices(10, shard=2, shards=3, count=6, condition="c").tolist() == [2, 5]


@pytest.mark.parametrize("shard", [-1, 3])
def test_shard_outside_the_registered_range(shard):
    with pytest.raises(ShardInputError, match=r"Shard -?\d+ of condition 'c'.*generation\.shards"):
        shard_indices(9, shard=shard, shards=3, count=9, condition="c", study="s")
    assert issubclass(ShardInputError, DataInputError)


def test_prompt_table_uses_its_position_column():
    table = pa.table(
        {"prompt_id": [40, 10, 30, 20], "prompt": list("abcd"), "position": [3, 0, 2, 1]}
    )
    got = shard_prompts(table, condition="c", shard=1, shards=2, count=4)
    assert got.column("prompt_id").to_pylist() == [40, 20]  # positions 3 and 1, table order
    with pytest.raises(ShardInputError, match="holds only 4"):
        shard_prompts(table, condition="c", shard=0, shards=2, count=5)


def test_simulate_and_import_backends_take_the_same_rows(make_study, tmp_path):
    """Both backends put sorted position p in shard p % K, capped at the prompt count."""
    rows = [{"prompt_id": 3 * i, "condition": "clean", "score": 0.5} for i in range(11)]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    block = {
        "path": str(src),
        "columns": {"prompt_id": "prompt_id", "condition": "condition", "score": "score"},
    }
    conditions = [{"name": "clean", "prompts": 8}]
    imported = make_study(
        data={"backend": "import", "import": block},
        conditions=conditions,
        generation={"shards": 3},
        scorers=[{"name": "toxicity", "kind": "column", "column": "score", "bounded": True}],
    )
    simulated = make_study(
        conditions=[
            {**conditions[0], "simulate": {"tail": {"xi": 0.1, "sigma": 0.5, "share": 0.05}}}
        ],
        generation={"shards": 3},
    )
    for k in range(3):
        generate_shard(imported, "clean", k, tmp_path / f"i{k}.parquet", options={})
        generate_shard(simulated, "clean", k, tmp_path / f"s{k}.parquet", options={})
        imp = pq.read_table(tmp_path / f"i{k}.parquet").column("prompt_id").to_pylist()
        sim = pq.read_table(tmp_path / f"s{k}.parquet").column("prompt_id").to_pylist()
        assert sim == [p for p in range(8) if p % 3 == k]
        assert imp == [3 * p for p in sim]  # the same sorted positions of the imported ids
