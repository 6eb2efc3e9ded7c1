"""The simulate backend against its known truth (closed forms and scipy references)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats
from scipy.special import expit
from tailgate.generate import DataInputError, generate_shard
from tailgate.generate.simulate import (
    BERNOULLI_TEXTS,
    SCORE_COLUMN,
    simulate_condition,
    truth_from_spec,
)


def gpd_sf(y: np.ndarray, xi: float, sigma: float) -> np.ndarray:
    """GPD survival function written out from Eq. 1 of Zhou (2026) (independent of scipy)."""
    if xi == 0:
        return np.exp(-y / sigma)
    return np.maximum(1 + xi * y / sigma, 0) ** (-1 / xi)


SPEC = {"bulk": {"loc": -6.0, "scale": 1.0}, "tail": {"xi": 0.25, "sigma": 0.8, "share": 0.05}}


def test_splice_is_the_bulk_quantile_and_tail_is_exact_gpd():
    truth = truth_from_spec(SPEC)
    # logistic quantile in closed form: loc + scale * log(p / (1 - p))
    assert truth.splice == pytest.approx(-6.0 + math.log(0.95 / 0.05), abs=1e-12)
    y = np.array([0.1, 0.5, 1.0, 3.0, 10.0])
    expected = 0.05 * gpd_sf(y, 0.25, 0.8)
    got = np.array([truth.sf_latent(truth.splice + v) for v in y])
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_quantile_function_inverts_the_cdf():
    truth = truth_from_spec({**SPEC, "bulk": {"family": "normal", "loc": -5.0, "scale": 1.5}})
    p = np.array([1e-6, 0.01, 0.3, 0.9, 0.9499, 0.95, 0.97, 0.999, 1 - 1e-9])
    np.testing.assert_allclose(truth.cdf(truth.ppf(p)), p, rtol=1e-9, atol=1e-12)


def test_samples_follow_the_truth_and_recover_xi():
    truth = truth_from_spec(SPEC)
    x = simulate_condition(7, "clean", truth, 40_000)
    assert stats.kstest(x, truth.cdf).pvalue > 1e-3
    excess = x[x > truth.splice] - truth.splice
    xi_hat, _, _ = stats.genpareto.fit(excess, floc=0)
    se = (1 + 0.25) / math.sqrt(excess.size)  # Smith (1987) asymptotic s.e.
    assert abs(xi_hat - 0.25) < 4 * se


def test_saturation_puts_exactly_the_registered_share_above_at():
    spec = {**SPEC, "tail": {"xi": 0.0, "sigma": 0.5, "share": 0.05}}
    spec["saturation"] = {"share": 0.001, "at": 0.95}
    truth = truth_from_spec(spec)
    # closed form for xi = 0: share * exp(-(logit(at) - u0) / sigma) = saturation share
    u0 = -6.0 + math.log(19.0)
    assert truth.tail_sigma == pytest.approx((math.log(19.0) - u0) / math.log(50), rel=1e-12)
    assert truth.sf_latent(math.log(19.0)) == pytest.approx(0.001, rel=1e-9)
    x = simulate_condition(1, "sat", truth, 200_000)
    k = int((expit(x) > 0.95).sum())
    assert stats.binomtest(k, x.size, 0.001).pvalue > 1e-3


def test_saturation_reproduces_proposition_1():
    """Probability-scale exceedances pile at 1 (ξ̂ near -1) while the logit tail stays GPD."""
    spec = {
        "bulk": {"loc": -6.0, "scale": 1.0},
        "tail": {"xi": 0.0, "sigma": 1.0, "share": 0.05},
        "saturation": {"share": 0.001, "at": 0.95},
    }
    x = simulate_condition(20260615, "nemo", truth_from_spec(spec), 30_000)
    p = expit(x)
    u_p = np.quantile(p, 0.99)
    xi_p, _, _ = stats.genpareto.fit(p[p > u_p] - u_p, floc=0)
    u_l = np.quantile(x, 0.99)
    exc_l = x[x > u_l] - u_l
    xi_l, _, sig_l = stats.genpareto.fit(exc_l, floc=0)
    assert xi_p < -0.8
    assert abs(xi_l) < 4 / math.sqrt(exc_l.size)
    assert stats.kstest(exc_l, "genpareto", args=(xi_l, 0, sig_l)).pvalue > 0.01


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"tail": {"share": 1.2}}, "tail.share"),
        ({"tail": {"sigma": -1}}, "tail.sigma"),
        ({"tail": {"xi": 1.5}}, "tail.xi"),
        ({"bulk": {"family": "cauchy"}}, "bulk.family"),
        ({"bulk": {"loc": "high"}}, "bulk.loc"),
        ({"saturation": {"share": 0.2}}, "saturation.share"),
        ({"saturation": {"share": 0.01, "at": 1e-5}}, "saturation.at"),
        ({"saturation": {"share": 0.01, "at": 3.0}}, "saturation.at"),
    ],
)
def test_bad_truth_names_the_field(block, field):
    with pytest.raises(DataInputError, match=field.replace(".", r"\.")):
        truth_from_spec(block, where="conditions[x].simulate")


def _read_all(paths):
    tables = [pq.read_table(p).to_pandas() for p in paths]
    import pandas as pd

    return pd.concat(tables).sort_values("prompt_id").reset_index(drop=True)


def test_values_do_not_depend_on_the_number_of_shards(make_study, tmp_path):
    merged = {}
    for shards in (1, 3, 4):
        study = make_study(generation={"shards": shards})
        paths = [tmp_path / f"k{shards}" / f"shard-{k}.parquet" for k in range(shards)]
        for k, path in enumerate(paths):
            generate_shard(study, "clean", k, path, options={})
        merged[shards] = _read_all(paths)
    assert len(merged[1]) == 4000
    for shards in (3, 4):
        assert merged[shards].equals(merged[1])
    one = pq.read_table(tmp_path / "k4" / "shard-1.parquet").to_pandas()
    assert (one["prompt_id"] % 4 == 1).all()


def test_shard_layout_and_byte_reproducibility(make_study, tmp_path):
    study = make_study()
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    generate_shard(study, "heavy", 2, a, options={})
    generate_shard(study, "heavy", 2, b, options={})
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
    table = pq.read_table(a)
    types = {f.name: str(f.type) for f in table.schema}
    assert types == {
        "prompt_id": "int64",
        "prompt": "string",
        "completion": "string",
        "prompt_tokens": "int32",
        "completion_tokens": "int32",
        "finish_reason": "string",
        SCORE_COLUMN: "double",
        "latent": "double",
    }
    frame = table.to_pandas()
    assert frame["prompt"].iloc[0] == f"sim-{frame['prompt_id'].iloc[0]}"
    assert ((frame[SCORE_COLUMN] > 0) & (frame[SCORE_COLUMN] < 1)).all()
    np.testing.assert_allclose(frame[SCORE_COLUMN], expit(frame["latent"]), rtol=1e-15)
    # a different study seed or condition gives a different stream
    other = make_study(seed=1)
    generate_shard(other, "heavy", 2, b, options={})
    assert not np.array_equal(pq.read_table(b).column("latent").to_numpy(), frame["latent"])


def test_bad_shard_and_condition(make_study, tmp_path):
    study = make_study()
    with pytest.raises(DataInputError, match=r"generation\.shards"):
        generate_shard(study, "clean", 4, tmp_path / "x.parquet", options={})
    with pytest.raises(DataInputError, match="not registered"):
        generate_shard(study, "nope", 0, tmp_path / "x.parquet", options={})
    assert not list(tmp_path.iterdir())


def test_bernoulli_rows_carry_their_response_texts(make_study, tmp_path):
    """A ``bernoulli`` row's completion is its response as text ("Yes." for 1, "No." for 0), so
    the energy test has texts to embed; every other model keeps an empty completion."""
    models = {
        "binary": {"bernoulli": {"p": 0.4}},
        "grades": {"severity_grid": {"b": 1.0, "error_rate": 0.3}},
        "tokens": {"token_ce": {"median": 1.0, "hard_median": 4.0}},
        "latent": {},
    }
    conditions = [{"name": c, "prompts": 400, "simulate": m} for c, m in models.items()]
    study = make_study(conditions=conditions, sample_cap=400, generation={"shards": 2})
    frames = {}
    for c in conditions:
        path = tmp_path / f"{c['name']}.parquet"
        generate_shard(study, c["name"], 1, path, options={})
        frames[c["name"]] = pq.read_table(path).to_pandas()
    binary = frames["binary"]
    assert set(binary[SCORE_COLUMN]) == {0.0, 1.0}
    assert binary["completion"].tolist() == [BERNOULLI_TEXTS[int(v)] for v in binary[SCORE_COLUMN]]
    assert BERNOULLI_TEXTS == {0: "No.", 1: "Yes."}
    for name in ("grades", "tokens", "latent"):
        assert (frames[name]["completion"] == "").all(), name
