"""The four scorers on tiny local models, against direct computations."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from tailgate.data.score_files import token_losses_path
from tailgate.errors import InputError
from tailgate.score import ScoringError, score_shard

# Batched, padded float32 inference differs from one-text-at-a-time inference by ~1e-6 on some
# CPUs (kernel choice); a wrong head, label or sigmoid is off by far more than this.
FLOAT32_BATCH_TOL = 1e-5

OPTIONS = {"batch_size": 3, "device": "cpu", "progress": False}
COMPLETIONS = [
    " over the lazy dog",
    " you stupid idiot",
    " is a small test",
    " it will rain tomorrow in the park and far too long",
    " hate",
]


@pytest.fixture
def generations(tmp_path):
    path = tmp_path / "generations" / "shard-0.parquet"
    path.parent.mkdir()
    ids = [12, 3, 7, 40, 5]
    table = pa.table(
        {
            "prompt_id": pa.array(ids, pa.int64()),
            "prompt": ["the quick brown fox jumps", "shut up", "hello world this", "the", "I"],
            "completion": COMPLETIONS,
            "given": [0.1, 0.9, 0.25, 0.5, 0.75],
        }
    )
    pq.write_table(table, path)
    return path


def _study(study_factory, scorers, **kw):
    return study_factory(scorers=scorers, **kw)


def _scores(path) -> dict[int, float]:
    t = pq.read_table(path)
    assert t.schema.field("prompt_id").type == pa.int64()
    assert t.schema.field("score").type == pa.float64()
    ids = t.column("prompt_id").to_pylist()
    assert ids == sorted(ids)
    return dict(zip(ids, t.column("score").to_pylist(), strict=True))


def test_detoxify_equals_sigmoid_of_the_bert_logits(
    tmp_path, generations, tiny_bert, detoxify_checkpoint, study_factory
):
    from transformers import BertForSequenceClassification, BertTokenizerFast

    scorers = [
        {
            "name": "tox",
            "kind": "detoxify",
            "bounded": True,
            "head": "original",
            "label": "toxicity",
            "checkpoint": str(detoxify_checkpoint),
            "config_path": str(tiny_bert),
        },
        {
            "name": "insult",
            "kind": "detoxify",
            "bounded": True,
            "label": "insult",
            "checkpoint": str(detoxify_checkpoint),
            "config_path": str(tiny_bert),
        },
    ]
    study = _study(study_factory, scorers)
    score_shard(study, "tox", "clean", generations, tmp_path / "tox.parquet", options=OPTIONS)
    score_shard(study, "insult", "clean", generations, tmp_path / "ins.parquet", options=OPTIONS)
    model = BertForSequenceClassification.from_pretrained(tiny_bert).eval()
    tok = BertTokenizerFast.from_pretrained(tiny_bert)
    with torch.no_grad():  # one text at a time: no padding in the reference
        logits = [model(**tok(t, return_tensors="pt")).logits[0] for t in COMPLETIONS]
    ids = [12, 3, 7, 40, 5]
    tox, ins = _scores(tmp_path / "tox.parquet"), _scores(tmp_path / "ins.parquet")
    for pid, lg in zip(ids, logits, strict=True):
        assert tox[pid] == pytest.approx(1 / (1 + math.exp(-float(lg[0]))), abs=FLOAT32_BATCH_TOL)
        assert ins[pid] == pytest.approx(1 / (1 + math.exp(-float(lg[4]))), abs=FLOAT32_BATCH_TOL)
    assert np.ptp(list(tox.values())) > 0.01  # the scores are not all the same


def test_detoxify_offline_with_a_hub_base_model_id_in_the_checkpoint(
    tmp_path, generations, tiny_bert, detoxify_checkpoint, study_factory
):
    """Real Detoxify checkpoints name 'bert-base-uncased'; config_path must keep it offline."""
    ckpt = torch.load(detoxify_checkpoint, weights_only=False)
    ckpt["config"]["arch"]["args"]["model_type"] = "bert-base-uncased"
    path = tmp_path / "hubnamed.ckpt"
    torch.save(ckpt, path)
    scorer = {"name": "tox", "kind": "detoxify", "checkpoint": str(path)}
    study = _study(study_factory, [{**scorer, "config_path": str(tiny_bert)}])
    score_shard(study, "tox", "clean", generations, tmp_path / "a.parquet", options=OPTIONS)
    assert len(_scores(tmp_path / "a.parquet")) == 5
    study = _study(study_factory, [{**scorer, "config_path": str(tmp_path / "nowhere")}])
    with pytest.raises(ScoringError, match=r"scorer 'tox'.*nowhere"):
        score_shard(study, "tox", "clean", generations, tmp_path / "b.parquet", options=OPTIONS)


def test_detoxify_unknown_label(
    tmp_path, generations, tiny_bert, detoxify_checkpoint, study_factory
):
    scorer = {
        "name": "tox",
        "kind": "detoxify",
        "label": "sarcasm",
        "checkpoint": str(detoxify_checkpoint),
        "config_path": str(tiny_bert),
    }
    with pytest.raises(ScoringError, match="label 'sarcasm'"):
        score_shard(
            _study(study_factory, [scorer]),
            "tox",
            "clean",
            generations,
            tmp_path / "x.parquet",
            options=OPTIONS,
        )


def test_profanity_equals_the_packaged_pipeline(tmp_path, generations, study_factory):
    from profanity_check import profanity_check as pc

    study = _study(study_factory, [{"name": "prof", "kind": "profanity", "bounded": True}])
    score_shard(study, "prof", "clean", generations, tmp_path / "p.parquet", options=OPTIONS)
    got = _scores(tmp_path / "p.parquet")
    expected = pc.model.predict_proba(pc.vectorizer.transform(COMPLETIONS))[:, 1]
    for pid, e in zip([12, 3, 7, 40, 5], expected, strict=True):
        assert got[pid] == pytest.approx(e, abs=1e-12)
    assert got[3] > 0.5 > got[7]  # "you stupid idiot" vs "is a small test"


def test_token_nll_equals_a_hand_computation_from_logits(
    tmp_path, generations, tiny_lm, study_factory
):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    study = _study(
        study_factory,
        [{"name": "nll", "kind": "token_nll", "bounded": False, "judge": "tiny"}],
        model_path=tiny_lm,
    )
    out = tmp_path / "nll.parquet"
    score_shard(study, "nll", "clean", generations, out, options=OPTIONS)
    got = _scores(out)
    tokens = pq.read_table(token_losses_path(out)).to_pandas()
    assert token_losses_path(out).name == "nll.tokens.parquet"

    tok = AutoTokenizer.from_pretrained(tiny_lm)
    model = AutoModelForCausalLM.from_pretrained(tiny_lm, dtype=torch.float32).eval()
    table = pq.read_table(generations).to_pandas()
    for row in table.itertuples():
        p = tok(row.prompt)["input_ids"]
        c = tok(row.completion, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([p + c])).logits[0].double()
        logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
        hand = [-float(logp[len(p) + k - 1, t]) for k, t in enumerate(c)]
        assert got[row.prompt_id] == pytest.approx(np.mean(hand), abs=1e-5)
        mine = tokens[tokens.prompt_id == row.prompt_id]
        assert mine.position.tolist() == list(range(len(c)))
        np.testing.assert_allclose(mine.loss, hand, atol=1e-5)


def test_column_scorer_and_bounded_check(tmp_path, generations, study_factory):
    study = _study(study_factory, [{"name": "given", "kind": "column", "column": "given"}])
    score_shard(study, "given", "clean", generations, tmp_path / "g.parquet", options=OPTIONS)
    assert _scores(tmp_path / "g.parquet") == {12: 0.1, 3: 0.9, 7: 0.25, 40: 0.5, 5: 0.75}

    table = pq.read_table(generations)
    over = table.set_column(3, "given", pa.array([0.1, 1.5, 0.2, 0.3, 0.4]))
    pq.write_table(over, tmp_path / "over.parquet")
    bounded = _study(
        study_factory, [{"name": "given", "kind": "column", "column": "given", "bounded": True}]
    )
    with pytest.raises(ScoringError, match=r"row 1 \(prompt_id 3\) of condition 'clean'"):
        score_shard(
            bounded,
            "given",
            "clean",
            tmp_path / "over.parquet",
            tmp_path / "o.parquet",
            options=OPTIONS,
        )
    assert not (tmp_path / "o.parquet").exists()


def test_non_finite_scores_name_the_row(tmp_path, generations, study_factory):
    table = pq.read_table(generations)
    bad = table.set_column(3, "given", pa.array([0.1, 0.2, float("nan"), 0.3, float("inf")]))
    pq.write_table(bad, tmp_path / "bad.parquet")
    study = _study(study_factory, [{"name": "given", "kind": "column", "column": "given"}])
    with pytest.raises(ScoringError, match=r"non-finite score \(nan\) to row 2 \(prompt_id 7\)"):
        score_shard(
            study,
            "given",
            "clean",
            tmp_path / "bad.parquet",
            tmp_path / "x.parquet",
            options=OPTIONS,
        )


def test_missing_column_empty_completion_and_unknown_scorer(tmp_path, generations, study_factory):
    study = _study(
        study_factory,
        [
            {"name": "prof", "kind": "profanity"},
            {"name": "given", "kind": "column", "column": "absent"},
        ],
    )
    with pytest.raises(InputError, match=r"lacks the column\(s\) \['absent'\]"):
        score_shard(study, "given", "clean", generations, tmp_path / "x.parquet", options=OPTIONS)
    table = pq.read_table(generations)
    empty = table.set_column(2, "completion", pa.array(["a", "b", "", "d", "e"]))
    pq.write_table(empty, tmp_path / "empty.parquet")
    with pytest.raises(ScoringError, match=r"row 2 \(prompt_id 7\) of condition 'noisy'.*is empty"):
        score_shard(
            study,
            "prof",
            "noisy",
            tmp_path / "empty.parquet",
            tmp_path / "x.parquet",
            options=OPTIONS,
        )
    with pytest.raises(ScoringError, match=r"'nope' .* is not registered"):
        score_shard(study, "nope", "clean", generations, tmp_path / "x.parquet", options=OPTIONS)
    with pytest.raises(InputError, match="does not exist"):
        score_shard(
            study,
            "prof",
            "clean",
            tmp_path / "none.parquet",
            tmp_path / "x.parquet",
            options=OPTIONS,
        )
    assert not (tmp_path / "x.parquet").exists()


def test_generate_then_score_end_to_end(tmp_path, tiny_lm, rtp_jsonl, study_factory):
    from tailgate.generate.prompts import select_prompts
    from tailgate.generate.transformers_backend import generate_shard

    study = study_factory(
        model_path=tiny_lm,
        source=rtp_jsonl,
        scorers=[
            {"name": "nll", "kind": "token_nll", "judge": "tiny"},
            {"name": "prof", "kind": "profanity"},
        ],
    )
    prompts = tmp_path / "prompts.parquet"
    select_prompts(study, prompts, options={})
    gen = tmp_path / "gen.parquet"
    generate_shard(study, "noisy", 1, gen, options={**OPTIONS, "prompts_path": str(prompts)})
    table = pq.read_table(gen)
    nonempty = table.filter(pa.compute.not_equal(table.column("completion"), ""))
    pq.write_table(nonempty, tmp_path / "nonempty.parquet")
    for name in ("nll", "prof"):
        out = tmp_path / f"{name}.parquet"
        score_shard(study, name, "noisy", tmp_path / "nonempty.parquet", out, options=OPTIONS)
        assert list(_scores(out)) == sorted(nonempty.column("prompt_id").to_pylist())
