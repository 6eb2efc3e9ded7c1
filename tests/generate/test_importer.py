"""The import backend: formats, schema checks, per-row messages, sharding."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
from tailgate.generate import DataInputError, generate_shard


def import_study(make_study, path, **columns):
    cols = {"prompt_id": "id", "condition": "model", "completion": "text", "score": "tox"}
    cols.update(columns)
    cols = {k: v for k, v in cols.items() if v is not None}
    return make_study(
        data={"backend": "import", "import": {"path": str(path), "columns": cols}},
        generation={"shards": 2},
    )


ROWS = [
    {"id": 3, "model": "clean", "text": "c", "tox": 0.3},
    {"id": 0, "model": "clean", "text": "a", "tox": 0.1},
    {"id": 1, "model": "heavy", "text": "x", "tox": 0.9},
    {"id": 1, "model": "clean", "text": "b", "tox": 0.2},
    {"id": 7, "model": "clean", "text": "d", "tox": 0.7},
]


def write(fmt, path, rows):
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    else:
        pd.DataFrame(rows).to_parquet(path, index=False)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_rows_of_a_condition_are_sorted_and_sharded(make_study, tmp_path, fmt):
    src = tmp_path / f"in.{fmt}"
    write(fmt, src, ROWS)
    study = import_study(make_study, src)
    outs = [tmp_path / f"shard-{k}.parquet" for k in range(2)]
    for k, out in enumerate(outs):
        generate_shard(study, "clean", k, out, options={})
    s0, s1 = (pq.read_table(o).to_pandas() for o in outs)
    # sorted ids 0, 1, 3, 7 -> positions 0, 2 in shard 0 and 1, 3 in shard 1
    assert s0["prompt_id"].tolist() == [0, 3]
    assert s1["prompt_id"].tolist() == [1, 7]
    assert s0["completion"].tolist() == ["a", "c"]
    assert s1["simulated_score"].tolist() == [0.2, 0.7]
    assert s0["finish_reason"].unique().tolist() == ["imported"]
    assert str(pq.read_table(outs[0]).schema.field("prompt_id").type) == "int64"


def test_scores_only_and_cap(make_study, tmp_path):
    src = tmp_path / "scores.jsonl"
    write("jsonl", src, ROWS)
    study = import_study(make_study, src, completion=None)
    study.data["conditions"][0]["prompts"] = 3
    out = tmp_path / "s.parquet"
    study.data["generation"]["shards"] = 1
    generate_shard(study, "clean", 0, out, options={})
    frame = pq.read_table(out).to_pandas()
    assert frame["prompt_id"].tolist() == [0, 1, 3]  # the 3 smallest ids are kept
    assert frame["completion"].tolist() == ["", "", ""]


def test_every_bad_row_is_named_and_nothing_is_written(make_study, tmp_path):
    src = tmp_path / "bad.jsonl"
    lines = [
        json.dumps({"id": 0, "model": "clean", "text": "a", "tox": 0.1}),
        "",  # blank lines are skipped but still counted
        json.dumps({"id": 1.5, "model": "clean", "text": "a", "tox": 0.1}),
        json.dumps({"id": 2, "model": "qwen", "text": "a", "tox": 0.1}),
        json.dumps({"id": 3, "model": "clean", "text": None, "tox": 0.1}),
        json.dumps({"id": 4, "model": "clean", "text": "a", "tox": 1.7}),
        json.dumps({"id": 0, "model": "clean", "text": "again", "tox": 0.2}),
        "{not json",
    ]
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out" / "shard-0.parquet"
    with pytest.raises(DataInputError) as err:
        generate_shard(import_study(make_study, src), "clean", 0, out, options={})
    assert "line 8" in str(err.value) and "not valid JSON" in str(err.value)
    src.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(DataInputError) as err:
        generate_shard(import_study(make_study, src), "clean", 0, out, options={})
    msg = str(err.value)
    assert str(src) in msg and "5 bad rows" in msg
    assert "line 3, column 'id'" in msg and "not a key" in msg
    assert "line 4, column 'model'" in msg and "'qwen' is not registered" in msg
    assert "line 5, column 'text'" in msg
    assert "line 6, column 'tox'" in msg and "bounded: true" in msg
    assert "line 7, column 'id'" in msg and "first at line 1" in msg
    assert "Traceback" not in msg and "\n" not in msg
    assert not out.parent.exists() or not list(out.parent.iterdir())


def test_csv_row_numbers_and_missing_columns(make_study, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("id,model,text,tox\n0,clean,a,0.1\n1,clean,b,\n")
    with pytest.raises(DataInputError, match=r"row 2, column 'tox'.*not a finite number"):
        generate_shard(import_study(make_study, src), "clean", 0, tmp_path / "o.pq", options={})
    with pytest.raises(DataInputError, match=r"no column 'score_col'"):
        study = import_study(make_study, src, score="score_col")
        generate_shard(study, "clean", 0, tmp_path / "o.pq", options={})


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        ({"columns": {"prompt_id": "id", "model": "m"}}, "path"),
        ({"path": "x.txt", "columns": {"prompt_id": "id"}}, "format"),
        ({"path": "x.jsonl", "columns": {"condition": "m", "score": "s"}}, "prompt_id"),
        ({"path": "x.jsonl", "columns": {"prompt_id": "i", "score": "s"}}, "condition"),
        ({"path": "x.jsonl", "columns": {"prompt_id": "i", "condition": "m"}}, "nothing"),
        (
            {
                "path": "missing.jsonl",
                "columns": {"prompt_id": "i", "condition": "m", "score": "s"},
            },
            "does not exist",
        ),
    ],
)
def test_bad_registration_is_explained(make_study, tmp_path, block, needle):
    study = make_study(data={"backend": "import", "import": block}, generation={"shards": 1})
    with pytest.raises(DataInputError, match=needle):
        generate_shard(study, "clean", 0, tmp_path / "o.parquet", options={"base_dir": tmp_path})
