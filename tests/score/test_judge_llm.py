"""The ``judge`` scorer of ERRORQUAKE (2026): the parse rule onto the grid, and a tiny local LM as
the
judge through Snakemake under both unparseable-reply policies (drop: counted in the sidecar;
error: the job fails naming the row, leaving no score shard)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from tailgate.score.judge import parse_grades
from tiny_project import build_assets, freeze, make_project, transformers_study, workflow_project

NAME = "tinyjudge"
RUBRIC = "Grade the reply from 0 to 4 in steps of 0.5. Prompt: {prompt} Reply: {completion} Grade:"


def test_parse_rule_keeps_grid_values_only() -> None:
    replies = ["Grade: 2.5", "3", "severity 1.25", "none", "7", "-0.5", "0.0 then 4"]
    g = parse_grades(replies, {}, "j")
    assert g.values[:2].tolist() == [2.5, 3.0] and g.values[6] == 0.0
    assert g.unparseable.tolist() == [2, 3, 4, 5]  # off-grid, no number, above top, below 0
    custom = parse_grades(["[[4]] 2", "[[x]]"], {"parse": r"\[\[(\d)\]\]"}, "j")
    assert custom.values[0] == 4.0 and custom.unparseable.tolist() == [1]
    fine = parse_grades(["1.2"], {"grid": {"step": 0.1, "top": 2.0}}, "j")
    assert fine.values[0] == pytest.approx(1.2)
    assert parse_grades(["x"], {"parse": "(0)?"}, "j").unparseable.tolist() == [0]


def _project(root, assets, policy: str):
    scorer = (
        f"  - {{name: grade, kind: judge, judge: tiny, rubric: {json.dumps(RUBRIC)}, "
        f"max_new_tokens: 4, on_unparseable: {policy}, bounded: false}}\n"
    )
    text = transformers_study(NAME, assets, prompts=6, shards=1, extra_scorers=scorer)
    freeze(make_project(root, NAME, text))
    return workflow_project(root, NAME)


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            mp.setenv(var, "1")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            mp.setenv(var, "1")
        yield build_assets(tmp_path_factory.mktemp("judge-assets"))


@pytest.mark.slow
def test_tiny_judge_through_snakemake_drop_and_error(tmp_path, assets, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shard = f"results/{NAME}/scores/grade/clean/shard-0.parquet"
    proj = _project(tmp_path / "drop", assets, "drop")
    res = proj.snakemake(shard, cores=1)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    scores = pq.read_table(proj.root / shard).to_pandas()
    side = json.loads((proj.root / shard.replace(".parquet", ".unparseable.json")).read_text())
    assert side["rows"] == 6 and side["unparseable"] + len(scores) == 6
    assert side["unparseable"] == len(side["prompt_ids"]) == len(side["replies"])
    # the stored replies are exactly the ones the registered rule cannot grade
    assert parse_grades(side["replies"], {}, "grade").unparseable.size == side["unparseable"]
    assert np.all(np.isin(scores["score"], np.arange(9) * 0.5))
    record = proj.results / "provenance" / "scores__grade__clean__shard-0.unparseable.json.json"
    assert record.is_file()
    if side["unparseable"]:  # a random tiny judge rarely writes a grade: error must refuse
        proj = _project(tmp_path / "error", assets, "error")
        res = proj.snakemake(shard, cores=1)
        assert res.returncode != 0
        assert "has no grade on the registered grid" in res.stdout + res.stderr
        assert not (proj.root / shard).exists()
