"""The registered ``on_empty`` policy of each text scorer, on tiny local models.

Each policy is checked against an independent reference: ``drop`` against scoring only the
non-empty rows, ``score`` against the classifier applied directly to the empty string.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from tailgate.data.score_files import token_losses_path
from tailgate.score import (
    ScoringError,
    count_dropped,
    dropped_rows_path,
    score_shard,
)

# Batched, padded float32 inference differs from one-text-at-a-time inference by ~1e-6 on some
# CPUs (kernel choice); a wrong head, label or sigmoid is off by far more than this.
FLOAT32_BATCH_TOL = 1e-5

OPTIONS = {"batch_size": 2, "device": "cpu", "progress": False}
IDS = [12, 3, 7, 40, 5]
PROMPTS = ["the quick brown fox jumps", "shut up", "hello world this", "the", "I"]
COMPLETIONS = [" over the lazy dog", " you stupid idiot", "", " it will rain", ""]
EMPTY_IDS = [5, 7]  # rows 4 and 2


def _write(path, ids, prompts, completions):
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "prompt_id": pa.array(ids, pa.int64()),
            "prompt": pa.array(prompts, pa.string()),
            "completion": pa.array(completions, pa.string()),
        }
    )
    pq.write_table(table, path)
    return path


@pytest.fixture
def shards(tmp_path):
    """A shard with two empty completions, and the same shard without those rows."""
    full = _write(tmp_path / "gen" / "shard-0.parquet", IDS, PROMPTS, COMPLETIONS)
    keep = [i for i, c in enumerate(COMPLETIONS) if c]
    nonempty = _write(
        tmp_path / "gen" / "nonempty.parquet",
        [IDS[i] for i in keep],
        [PROMPTS[i] for i in keep],
        [COMPLETIONS[i] for i in keep],
    )
    return full, nonempty


def _scorer(kind, name, tiny_bert=None, detoxify_checkpoint=None, **extra):
    entry = {"name": name, "kind": kind, **extra}
    if kind == "detoxify":
        entry.update(checkpoint=str(detoxify_checkpoint), config_path=str(tiny_bert))
    if kind == "token_nll":
        entry["judge"] = "tiny"
    return entry


@pytest.fixture
def study_with(study_factory, tiny_lm, tiny_bert, detoxify_checkpoint):
    """``study_with(kind, **fields)``: a study with one scorer ``s`` of ``kind``."""

    def build(kind, **fields):
        scorer = _scorer(kind, "s", tiny_bert, detoxify_checkpoint, **fields)
        return study_factory(scorers=[scorer], model_path=tiny_lm)

    return build


def _scores(path) -> dict[int, float]:
    t = pq.read_table(path)
    assert t.schema.field("prompt_id").type == pa.int64()
    return dict(zip(t.column("prompt_id").to_pylist(), t.column("score").to_pylist(), strict=True))


KINDS = ["detoxify", "profanity", "token_nll"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("registered", [{}, {"on_empty": "error"}])
def test_error_names_the_row_and_the_fix(tmp_path, shards, study_with, kind, registered):
    out = tmp_path / "scores" / "shard-0.parquet"
    out.parent.mkdir()
    study = study_with(kind, **registered)
    fix = "on_empty: drop" if kind == "token_nll" else "on_empty: drop` or `on_empty: score"
    with pytest.raises(
        ScoringError,
        match=rf"row 2 \(prompt_id 7\) of condition 'noisy'.*is empty.*{fix}.* on scorer 's'",
    ):
        score_shard(study, "s", "noisy", shards[0], out, options=OPTIONS)
    assert not list(out.parent.iterdir())  # no scores, no sidecar, no token losses


@pytest.mark.parametrize("kind", KINDS)
def test_drop_omits_the_rows_and_records_them(tmp_path, shards, study_with, kind):
    full, nonempty = shards
    out, ref = tmp_path / "s" / "shard-0.parquet", tmp_path / "ref" / "shard-0.parquet"
    out.parent.mkdir(), ref.parent.mkdir()
    score_shard(study_with(kind, on_empty="drop"), "s", "clean", full, out, options=OPTIONS)
    score_shard(study_with(kind), "s", "clean", nonempty, ref, options=OPTIONS)
    got, expected = _scores(out), _scores(ref)
    assert sorted(got) == sorted(set(IDS) - set(EMPTY_IDS))
    assert got == pytest.approx(expected, abs=1e-9)
    sidecar = json.loads(dropped_rows_path(out).read_text())
    assert dropped_rows_path(out).name == "shard-0.dropped.json"
    assert sidecar == {
        "scorer": "s",
        "condition": "clean",
        "on_empty": "drop",
        "rows": 5,
        "dropped": 2,
        "dropped_prompt_ids": EMPTY_IDS,
    }
    assert not dropped_rows_path(ref).exists()  # only a drop scorer writes one
    assert count_dropped([out, ref]) == 2
    if kind == "token_nll":
        a, b = pq.read_table(token_losses_path(out)), pq.read_table(token_losses_path(ref))
        assert a.column("prompt_id").to_pylist() == b.column("prompt_id").to_pylist()
        np.testing.assert_allclose(a.column("loss").to_numpy(), b.column("loss").to_numpy())


@pytest.mark.parametrize("kind", KINDS)
def test_drop_of_every_row_writes_empty_tables(tmp_path, study_factory, kind):
    """No model is loaded when nothing is left: the judge and checkpoint here do not exist."""
    gen = _write(tmp_path / "gen.parquet", [2, 1], ["a", "b"], ["", ""])
    scorer = {"name": "s", "kind": kind, "on_empty": "drop"}
    if kind == "detoxify":
        scorer.update(checkpoint=str(tmp_path / "none.ckpt"), config_path=str(tmp_path))
    if kind == "token_nll":
        scorer["judge"] = "ghost"
    study = study_factory(scorers=[scorer], extra_models={"ghost": {"id": str(tmp_path / "x")}})
    out = tmp_path / "out.parquet"
    score_shard(study, "s", "clean", gen, out, options=OPTIONS)
    assert pq.read_table(out).num_rows == 0
    assert pq.read_table(out).schema.field("score").type == pa.float64()
    assert count_dropped([out]) == 2
    if kind == "token_nll":
        tokens = pq.read_table(token_losses_path(out))
        assert tokens.num_rows == 0
        assert tokens.column_names == ["prompt_id", "position", "loss"]


def test_score_policy_detoxify_scores_the_empty_text(
    tmp_path, shards, study_with, tiny_bert, detoxify_checkpoint
):
    from transformers import BertForSequenceClassification, BertTokenizerFast

    out = tmp_path / "tox.parquet"
    study = study_with("detoxify", on_empty="score")
    score_shard(study, "s", "clean", shards[0], out, options=OPTIONS)
    got = _scores(out)
    model = BertForSequenceClassification.from_pretrained(tiny_bert).eval()
    tok = BertTokenizerFast.from_pretrained(tiny_bert)
    with torch.no_grad():  # one text at a time, the empty one included
        logits = [float(model(**tok(c, return_tensors="pt")).logits[0, 0]) for c in COMPLETIONS]
    for pid, lg in zip(IDS, logits, strict=True):
        assert got[pid] == pytest.approx(1 / (1 + math.exp(-lg)), abs=FLOAT32_BATCH_TOL)
    assert not dropped_rows_path(out).exists()


def test_score_policy_profanity_scores_the_empty_text(tmp_path, shards, study_with):
    from profanity_check import profanity_check as pc

    out = tmp_path / "prof.parquet"
    stale = dropped_rows_path(out)
    stale.write_text("{}")  # left by an earlier registration with on_empty: drop
    study = study_with("profanity", on_empty="score")
    score_shard(study, "s", "clean", shards[0], out, options=OPTIONS)
    expected = pc.model.predict_proba(pc.vectorizer.transform(COMPLETIONS))[:, 1]
    assert _scores(out) == pytest.approx(dict(zip(IDS, expected, strict=True)), abs=1e-12)
    assert not stale.exists()


def test_token_nll_refuses_score_and_unknown_policies(tmp_path, shards, study_with):
    for kind, policy in (("token_nll", "score"), ("profanity", "skip")):
        with pytest.raises(ScoringError, match=rf"on_empty '{policy}'.*accepts \['error', 'drop'"):
            score_shard(
                study_with(kind, on_empty=policy),
                "s",
                "clean",
                shards[0],
                tmp_path / "x.parquet",
                options=OPTIONS,
            )
    assert not (tmp_path / "x.parquet").exists()


def test_missing_completion_is_an_error_under_every_policy(tmp_path, study_with):
    gen = _write(tmp_path / "gen.parquet", [1, 2], ["a", "b"], ["x", None])
    for policy in ("error", "drop", "score"):
        with pytest.raises(ScoringError, match=r"row 1 \(prompt_id 2\).*is missing"):
            score_shard(
                study_with("profanity", on_empty=policy),
                "s",
                "clean",
                gen,
                tmp_path / "x.parquet",
                options=OPTIONS,
            )


def test_drop_on_real_generations(tmp_path, tiny_lm, rtp_jsonl, study_factory):
    """The tiny LM stops early, so some sampled completions are empty: ``drop`` scores the
    rest exactly as a shard holding only the non-empty rows."""
    from tailgate.generate.prompts import select_prompts
    from tailgate.generate.transformers_backend import generate_shard

    scorers = [
        {"name": "nll", "kind": "token_nll", "judge": "tiny", "on_empty": "drop"},
        {"name": "prof", "kind": "profanity", "on_empty": "drop"},
    ]
    prompts = tmp_path / "prompts.parquet"
    gen = tmp_path / "gen.parquet"
    options = {**OPTIONS, "batch_size": 4, "prompts_path": str(prompts)}
    for seed in range(40):  # the first study seed whose sampled "noisy" completions mix both
        study = study_factory(
            model_path=tiny_lm, source=rtp_jsonl, scorers=scorers, shards=1, seed=seed
        )
        select_prompts(study, prompts, options={})
        generate_shard(study, "noisy", 0, gen, options=options)
        table = pq.read_table(gen)
        empty = table.filter(pa.compute.equal(table.column("completion"), ""))
        if 0 < empty.num_rows < table.num_rows:  # the case this policy exists for
            break
    assert 0 < empty.num_rows < table.num_rows, "no seed below 40 gives an empty completion"
    out = tmp_path / "nll.parquet"
    score_shard(study, "nll", "noisy", gen, out, options=OPTIONS)
    kept = set(table.column("prompt_id").to_pylist()) - set(empty.column("prompt_id").to_pylist())
    assert set(_scores(out)) == kept
    assert count_dropped([out]) == empty.num_rows


def test_demo_lock_still_verifies(demo_prereg_path):
    """The schema gained on_empty without a default, so frozen studies keep their hash."""
    from tailgate.cli import main

    assert main(["verify", str(demo_prereg_path)]) == 0


def test_schema_registers_on_empty_per_kind(tmp_path, demo_prereg_path, capsys):
    from tailgate.cli import main
    from tailgate.plans.registration import load

    text = demo_prereg_path.read_text()
    anchor = "scorers:\n"
    assert anchor in text
    added = (
        "  - {name: prof, kind: profanity, on_empty: drop}\n"
        "  - {name: prof-default, kind: profanity}\n"
    )
    base = text.replace(anchor, anchor + added, 1)
    ok = tmp_path / "ok" / demo_prereg_path.name
    ok.parent.mkdir()
    ok.write_text(base)
    study = load(ok)
    assert study.scorer("prof")["on_empty"] == "drop"
    assert "on_empty" not in study.scorer("prof-default")  # no default is applied
    bad = tmp_path / "bad" / demo_prereg_path.name
    bad.parent.mkdir()
    bad.write_text(
        text.replace(
            anchor, anchor + "  - {name: nll, kind: token_nll, judge: tiny, on_empty: score}\n", 1
        )
    )
    assert main(["freeze", str(bad)]) == 2
    err = capsys.readouterr().err
    assert 'field \'scorers[0].on_empty\': "score" is not one of "error", "drop"' in err
    assert "Traceback" not in err
