"""The sampling path of Acharyya et al. (2025) on a tiny local LM: a query condition is one query
text answered n
times (one row per response), sampled in seeded blocks so that the rows do not depend on the
shard split; a killed job resumes to the same bytes; responses are embedded as the mean-pooled
last hidden state through the shared model loader."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch
from tailgate.generate.shards import ShardInputError
from tailgate.generate.transformers_backend import generate_shard, query_blocks

QUERY = "the cat sat on"
OPTIONS = {"batch_size": 4, "device": "cpu", "progress": False}


def _study(study_factory, tiny_lm, *, shards: int, responses: int = 10, query: str = QUERY):
    return study_factory(
        model_path=tiny_lm,
        shards=shards,
        max_new_tokens=5,
        conditions=[
            {"name": "q", "model": "tiny", "prompts": responses, "query": query},
            {
                "name": "qnoisy",
                "model": "tiny",
                "prompts": responses,
                "query": query,
                "perturbation": {"kind": "embedding_noise", "sigma_rel": 0.5},
            },
        ],
    )


def _rows(paths) -> list[tuple]:
    t = [pq.read_table(p).to_pandas() for p in paths]
    import pandas as pd

    df = pd.concat(t).sort_values("prompt_id")
    return list(df[["prompt_id", "prompt", "completion", "finish_reason"]].itertuples(index=False))


def test_query_blocks_partition_the_responses() -> None:
    for n, size, shards in ((10, 4, 1), (10, 4, 2), (10, 4, 3), (3, 8, 2), (16, 4, 4)):
        parts = [query_blocks(n, size, shard=k, shards=shards) for k in range(shards)]
        flat = sorted(int(i) for p in parts for b in p for i in b)
        assert flat == list(range(n))
        for k, p in enumerate(parts):  # block j = [j·size, (j+1)·size) lies in shard j % K
            assert all(int(b[0]) % size == 0 and (int(b[0]) // size) % shards == k for b in p)


def test_one_query_sampled_n_times_independent_of_the_shard_split(
    tmp_path, tiny_lm, study_factory
) -> None:
    one = _study(study_factory, tiny_lm, shards=1)
    generate_shard(one, "q", 0, tmp_path / "one.parquet", options=OPTIONS)
    rows = _rows([tmp_path / "one.parquet"])
    assert [r.prompt_id for r in rows] == list(range(10))
    assert {r.prompt for r in rows} == {QUERY}
    assert len({r.completion for r in rows}) > 1  # temperature sampling: responses differ
    three = _study(study_factory, tiny_lm, shards=3)
    paths = [tmp_path / f"three-{k}.parquet" for k in range(3)]
    for k, p in enumerate(paths):
        generate_shard(three, "q", k, p, options=OPTIONS)
    assert _rows(paths) == rows
    # the same query under embedding noise is a different condition with its own stream
    generate_shard(one, "qnoisy", 0, tmp_path / "noisy.parquet", options=OPTIONS)
    assert [r.completion for r in _rows([tmp_path / "noisy.parquet"])] != [
        r.completion for r in rows
    ]


def test_each_response_equals_an_independent_sampler_seeded_by_its_index(
    tmp_path, tiny_lm, study_factory
) -> None:
    """Response r is sampled from its own stream, derive_seed(seed, "respond", condition, r),
    whatever block it falls in."""
    from sampling_reference import reference_sample
    from tailgate.seeds import derive_seed

    study = _study(study_factory, tiny_lm, shards=1)
    generate_shard(study, "q", 0, tmp_path / "q.parquet", options=OPTIONS)
    got = pq.read_table(tmp_path / "q.parquet").to_pandas().set_index("prompt_id")
    generation = study.data["generation"]
    for r in (0, 4, 5, 9):
        want = reference_sample(
            tiny_lm, QUERY, derive_seed(7, "respond", "q", r),
            top_p=generation["top_p"], max_new_tokens=generation["max_new_tokens"],
        )  # fmt: skip
        assert got.loc[r, "completion"] == want, r


def test_killed_query_job_resumes_to_the_same_bytes(tmp_path, tiny_lm, study_factory) -> None:
    study = _study(study_factory, tiny_lm, shards=1)
    ref = tmp_path / "ref.parquet"
    generate_shard(study, "q", 0, ref, options=OPTIONS)

    class Killed(Exception):
        pass

    def kill_after_two(b: int) -> None:
        if b == 1:
            raise Killed

    out = tmp_path / "out.parquet"
    with pytest.raises(Killed):
        generate_shard(study, "q", 0, out, options={**OPTIONS, "after_batch": kill_after_two})
    assert not out.exists()
    resumed: list[int] = []
    generate_shard(study, "q", 0, out, options={**OPTIONS, "after_batch": resumed.append})
    assert resumed == [2]  # blocks 0 and 1 came from the checkpoint
    assert out.read_bytes() == ref.read_bytes()


def test_empty_query_is_refused(tmp_path, tiny_lm, study_factory) -> None:
    study = _study(study_factory, tiny_lm, shards=1, query="   ")
    with pytest.raises(ShardInputError, match="query"):
        generate_shard(study, "q", 0, tmp_path / "x.parquet", options=OPTIONS)


@pytest.mark.parametrize("which", ["generating model", "encoder"])
def test_embedding_is_the_mean_pooled_last_hidden_state(
    which, tmp_path, tiny_lm, tiny_bert, study_factory
) -> None:
    """The shared loader with head="base" and batched, right-padded pooling equal a direct
    one-text-at-a-time computation with the head model's last hidden state."""
    from tailgate.models import load_model, model_spec
    from tailgate.score.embedding import embed_texts
    from transformers import AutoModelForCausalLM, AutoTokenizer, BertModel

    key = "tiny" if which == "generating model" else "bert"
    study = study_factory(
        model_path=tiny_lm,
        extra_models={"bert": {"id": str(tiny_bert), "dtype": "float32", "prompt_format": "plain"}},
    )
    lm = load_model(model_spec(study, key, condition="q"), device=torch.device("cpu"),
                    condition="q", head="base")  # fmt: skip
    texts = ["a cat", "the dog ran over the hill and far away", "", "hello there"]
    got = embed_texts(lm, texts, batch_size=3)
    path = tiny_lm if key == "tiny" else tiny_bert
    tok = AutoTokenizer.from_pretrained(path)
    if key == "tiny":
        ref_model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    else:
        ref_model = BertModel.from_pretrained(path, dtype=torch.float32).eval()
    for text, row in zip(texts, got, strict=True):
        ids = tok(text)["input_ids"] or [tok.eos_token_id]
        with torch.no_grad():
            out = ref_model(torch.tensor([ids]), output_hidden_states=True)
        want = out.hidden_states[-1][0].double().mean(dim=0).numpy()
        np.testing.assert_allclose(row, want, rtol=1e-4, atol=1e-5)
    assert got.dtype == np.float32 and got.shape == (4, 32)
