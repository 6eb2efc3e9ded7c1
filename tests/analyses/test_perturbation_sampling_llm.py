"""Acharyya et al. (2025) end to end on the real sampling path, through Snakemake: query conditions
of a tiny
local LM (one query text each, n responses, one shard: tests/generate/test_query_sampling.py covers
the shards), a registered regex binariser, response
embeddings by a registered HF encoder (mean-pooled last hidden state), and the perturbation
analysis's composite test and energy tests on them. Every stored number is re-derived here from
the artifacts the workflow wrote."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from tiny_project import build_assets, freeze, make_project, transformers_study, workflow_project

NAME = "tinyquery"
RESPONSES = 12
SHARDS = 1  # each job loads torch and a model: one shard halves the study's cost
PATTERN = "e"
QUERIES = {
    "p0": "Who was R A Fisher?",
    "p1": "Who was R. A. Fisher?",
    "p2": "who was RA Fisher",
    "n0": "Who was R.A. Fisher?",
    "n1": "Who was Ronald A. Fisher?",
    "t0": "Who was the dog?",
}
NULLS, TEST = ["n0", "n1"], "t0"


def _conditions() -> str:
    return "".join(
        f"  - {{name: {c}, model: tiny, prompts: {RESPONSES}, query: {json.dumps(q)}}}\n"
        for c, q in QUERIES.items()
    )


ANALYSES = f"""\
analyses:
  pert:
    kind: perturbation
    scorer: says-e
    pilot: [p0, p1, p2]
    null_queries: [{", ".join(NULLS)}]
    test_queries: [{TEST}]
    budget: 36
    embedding: {{model: bert, responses: 8, resamples: 99}}
    criteria:
      - {{name: energy-pooled, statistic: "energy_pvalue({TEST})", comparison: ">", threshold: 0}}
      - {{name: energy-n1, statistic: "energy_statistic({TEST}, n1)", comparison: ">=",
         threshold: 0}}
      - {{name: size-at-most-alpha, statistic: size, comparison: "<=", threshold: 0.05}}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            mp.setenv(var, "1")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            mp.setenv(var, "1")
        root = tmp_path_factory.mktemp("tiny-query")
        assets = build_assets(root / "assets")
        bert = json.dumps(str(assets.bert))
        text = transformers_study(
            NAME,
            assets,
            shards=SHARDS,
            max_new_tokens=6,
            extra_models=f"  bert: {{id: {bert}, dtype: float32, prompt_format: plain}}\n",
            extra_conditions=_conditions(),
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


def _generations(proj, condition: str) -> pd.DataFrame:
    parts = [
        pq.read_table(proj.results / "generations" / condition / f"shard-{k}.parquet").to_pandas()
        for k in range(SHARDS)
    ]
    return pd.concat(parts).sort_values("prompt_id").reset_index(drop=True)


def _embeddings(proj, condition: str) -> tuple[np.ndarray, np.ndarray]:
    from tailgate.data.score_files import read_embeddings

    folder = proj.results / "embeddings" / "bert" / condition
    return read_embeddings([str(folder / f"shard-{k}.parquet") for k in range(SHARDS)])


def _stats(proj) -> dict:
    return json.loads((proj.results / "analyses" / "pert" / "statistics.json").read_text())


def test_each_query_condition_is_its_query_answered_n_times(run) -> None:
    for c, q in QUERIES.items():
        gen = _generations(run, c)
        assert gen["prompt_id"].tolist() == list(range(RESPONSES))
        assert set(gen["prompt"]) == {q}
        assert gen["completion"].nunique() > 1
        record = run.results / "provenance" / f"generations__{c}__shard-0.parquet.json"
        inputs = [i["path"] for i in json.loads(record.read_text())["inputs"]]
        assert not any(p.endswith("prompts.parquet") for p in inputs)  # no prompt selection


def test_regex_responses_and_the_derived_design(run) -> None:
    doc = _stats(run)
    st = doc["statistics"]
    n0 = st["pilot"]["responses"]
    yes = {
        c: [1 if re.search(PATTERN, t) else 0 for t in _generations(run, c)["completion"]]
        for c in QUERIES
    }
    assert n0 == RESPONSES
    assert st["pilot"]["counts"] == [sum(yes[c][:n0]) for c in ("p0", "p1", "p2")]
    assert st["tests"][TEST]["p_all"] == pytest.approx(sum(yes[TEST]) / RESPONSES)
    d = st["design"]
    if d["status"] == "ok":
        derived = d["derived_from"]
        assert derived["pilot_counts"] == st["pilot"]["counts"]
        assert (derived["budget"], derived["registration_change"]) == (36, False)
        from tailgate.analyses.perturbation import statistics as P

        iv = P.estimate_interval(np.array(st["pilot"]["counts"]) / n0, n0)
        again = P.design(iv.low, iv.high, 36, 0.05)
        assert (d["m"], d["n"], d["J"]) == (again.m, again.n, again.J)


def test_energy_tests_on_embedded_responses(run) -> None:
    from tailgate.analyses.perturbation import statistics as P

    energy = _stats(run)["statistics"]["energy"]
    assert (energy["status"], energy["model"], energy["responses"]) == ("ok", "bert", 8)
    vectors = {}
    for c in [TEST, *NULLS]:
        ids, x = _embeddings(run, c)
        assert ids.tolist() == list(range(RESPONSES))
        assert x.shape == (RESPONSES, 32) and np.all(np.isfinite(x))
        vectors[c] = x[:8]
    result = energy["tests"][TEST]
    pooled = np.vstack([vectors[q] for q in NULLS])
    assert result["pooled"]["statistic"] == pytest.approx(
        P.energy_statistic(vectors[TEST], pooled), rel=1e-9
    )
    assert (result["pooled"]["n1"], result["pooled"]["n2"]) == (8, 16)
    for q in NULLS:
        assert result["pairwise"][q]["statistic"] == pytest.approx(
            P.energy_statistic(vectors[TEST], vectors[q]), rel=1e-9
        )
        assert 1 / 100 <= result["pairwise"][q]["pvalue"] <= 1
    outcomes = {c["name"]: c for c in _stats(run)["criteria"]}
    assert outcomes["energy-pooled"]["outcome"] == "PASS"
    assert outcomes["energy-pooled"]["value"] == result["pooled"]["pvalue"]
    assert outcomes["energy-n1"]["value"] == result["pairwise"]["n1"]["statistic"]


def test_the_embedding_of_a_response_is_the_encoders_mean_pooled_state(run) -> None:
    """One response re-embedded directly with the registered encoder."""
    import torch
    from transformers import AutoTokenizer, BertModel

    bert = run.root / "assets" / "tiny-bert"
    tok = AutoTokenizer.from_pretrained(bert)
    model = BertModel.from_pretrained(bert, dtype=torch.float32).eval()
    text = _generations(run, TEST)["completion"][3]
    with torch.no_grad():
        hidden = model(torch.tensor([tok(text)["input_ids"]])).last_hidden_state[0]
    np.testing.assert_allclose(
        _embeddings(run, TEST)[1][3], hidden.mean(dim=0).numpy(), rtol=1e-4, atol=1e-5
    )
