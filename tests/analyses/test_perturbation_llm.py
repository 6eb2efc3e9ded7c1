"""Acharyya et al. (2025) on a real sampling path: a tiny local LM generates through Snakemake, a
registered
regex turns each reply into a binary response (the ``regex`` scorer), and the perturbation
analysis decides on those responses; its counts equal the regex applied to the generations."""

from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest
from tiny_project import (
    build_assets,
    freeze,
    make_project,
    scores_table,
    transformers_study,
    workflow_project,
)

NAME = "tinypert"
PROMPTS = 12
PATTERN = "e"

CONDITIONS = """\
  - {name: noisy2, model: tiny, prompts: 12, perturbation: {kind: embedding_noise, sigma_rel: 0.5}}
  - {name: noisy3, model: tiny, prompts: 12, perturbation: {kind: embedding_noise, sigma_rel: 1.0}}
"""

ANALYSES = """\
analyses:
  pert:
    kind: perturbation
    scorer: says-e
    pilot: [clean, noisy]
    null_queries: [noisy2]
    test_queries: [noisy3]
    budget: 20
    criteria:
      - {name: size-at-most-alpha, statistic: size, comparison: "<=", threshold: 0.05}
"""


@pytest.fixture(scope="module")
def pert_run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            mp.setenv(var, "1")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            mp.setenv(var, "1")
        root = tmp_path_factory.mktemp("tiny-pert")
        assets = build_assets(root / "assets")
        text = transformers_study(
            NAME,
            assets,
            prompts=PROMPTS,
            shards=1,
            max_new_tokens=6,
            extra_conditions=CONDITIONS,
            extra_scorers=(
                f"  - {{name: says-e, kind: regex, pattern: '{PATTERN}', bounded: false}}\n"
            ),
        )
        prereg = make_project(root, NAME, text.replace("analyses: {}\n", ANALYSES))
        freeze(prereg)
        proj = workflow_project(root, NAME)
        res = proj.snakemake(f"results/{NAME}/analyses/pert/statistics.json", cores=2)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        yield proj


def _yes(proj, condition: str) -> list[int]:
    gen = pq.read_table(proj.results / "generations" / condition / "shard-0.parquet").to_pandas()
    gen = gen.sort_values("prompt_id")
    return [1 if re.search(PATTERN, t) else 0 for t in gen["completion"]]


def test_regex_replies_feed_the_composite_test(pert_run) -> None:
    doc = json.loads((pert_run.results / "analyses" / "pert" / "statistics.json").read_text())
    st = doc["statistics"]
    n0 = st["pilot"]["responses"]
    assert st["pilot"]["counts"] == [sum(_yes(pert_run, c)[:n0]) for c in ("clean", "noisy")]
    d = st["design"]
    if d["met"]:
        assert st["null"]["counts"] == [sum(_yes(pert_run, "noisy2")[: d["n"]])]
        assert st["tests"]["noisy3"]["p_test"] == sum(_yes(pert_run, "noisy3")[: d["n"]]) / d["n"]
    yes = _yes(pert_run, "noisy3")
    assert st["tests"]["noisy3"]["p_all"] == pytest.approx(sum(yes) / len(yes))
    scores = scores_table(pert_run.results, "says-e", "noisy3")
    assert sorted(scores["score"].unique()) <= [0.0, 1.0]
    assert [c["name"] for c in doc["criteria"]] == ["size-at-most-alpha"]
