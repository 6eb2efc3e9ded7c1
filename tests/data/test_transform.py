"""Transform scales and the clipping record; bounded-support diagnostics and QQ data."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tailgate.data.diagnostics import bounded_support_diagnostics, qq_data
from tailgate.data.transform import TransformError, transform_scores, write_severities


def test_logit_matches_the_closed_form_and_counts_clips():
    p = np.array([0.0, 1e-9, 1e-6, 0.2, 0.5, 0.9, 1 - 1e-6, 1 - 1e-12, 1.0])
    res = transform_scores(p, "logit", 1e-6)
    eps = 1e-6
    clipped = [min(max(v, eps), 1 - eps) for v in p]
    expected = [math.log(v / (1 - v)) for v in clipped]
    np.testing.assert_allclose(res.values, expected, rtol=1e-12)
    assert (res.n_clipped_low, res.n_clipped_high) == (2, 2)  # ε and 1-ε themselves are kept
    assert res.summary.to_dict() == {
        "scale": "logit",
        "epsilon": 1e-6,
        "n": 9,
        "n_clipped_low": 2,
        "n_clipped_high": 2,
    }


def test_identity_and_probability_leave_values():
    x = np.array([0.1, 3.5, -2.0])
    np.testing.assert_array_equal(transform_scores(x, "identity").values, x)
    with pytest.raises(TransformError, match=r"outside.*first at row 2.*bounded: false"):
        transform_scores(x, "probability")
    assert transform_scores(np.array([0.0, 1.0]), "probability").n_clipped_high == 0


@pytest.mark.parametrize(
    ("scores", "scale", "eps", "needle"),
    [
        ([0.1, float("nan")], "logit", 1e-6, "NaN or infinite"),
        ([0.1], "sqrt", 1e-6, "unknown"),
        ([0.1], "logit", 0.0, r"transform\.epsilon"),
        ([0.1], "logit", 0.7, r"transform\.epsilon"),
    ],
)
def test_bad_input(scores, scale, eps, needle):
    with pytest.raises(TransformError, match=needle):
        transform_scores(np.array(scores), scale, eps)


def test_write_severities_sorts_and_records(tmp_path):
    src = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"prompt_id": [2, 0, 1], "score": [0.5, 1.0, 0.25]}), src)
    out, summary = tmp_path / "sev.parquet", tmp_path / "sev.json"
    res = write_severities(src, out, scale="logit", epsilon=1e-3, summary_path=summary)
    table = pq.read_table(out).to_pydict()
    assert table["prompt_id"] == [0, 1, 2]
    np.testing.assert_allclose(table["severity"], [math.log(0.999 / 0.001), math.log(1 / 3), 0.0])
    assert json.loads(summary.read_text())["n_clipped_high"] == 1 == res.n_clipped_high
    with pytest.raises(TransformError, match="no column 'tox'"):
        write_severities(src, out, scale="logit", epsilon=1e-3, score_column="tox")


def test_ceiling_shares_against_a_hand_count():
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.uniform(0, 0.5, 950), [0.55, 0.8, 0.91, 0.92, 0.96, 0.97, 0.99]])
    p = np.concatenate([p, rng.uniform(0.5, 0.6, 43)])
    d = bounded_support_diagnostics(p, 0.95)
    u = np.quantile(p, 0.95)
    exc = p[p > u]
    assert d.n_exc == exc.size == 50
    assert d.share_above[0.9] == pytest.approx(5 / 50)
    assert d.share_above[0.95] == pytest.approx(3 / 50)
    assert d.to_dict()["share_above"] == {"0.9": 0.1, "0.95": 0.06}
    with pytest.raises(ValueError, match="probability"):
        bounded_support_diagnostics(p * 2, 0.95)


def test_qq_model_quantiles_are_gpd_quantiles():
    rng = np.random.default_rng(1)
    x = rng.exponential(size=5000)
    xi, sigma = 0.2, 1.3
    qq = qq_data(x, 0.9, xi, sigma, max_points=100)
    # GPD quantile written out from Eq. 1 of Zhou (2026): sigma/xi * ((1-p)^-xi - 1)
    expected = sigma / xi * ((1 - qq.probabilities) ** (-xi) - 1)
    np.testing.assert_allclose(qq.model, expected, rtol=1e-10)
    assert qq.n_exc == 500 and qq.empirical.size == 100
    assert np.all(np.diff(qq.empirical) >= 0) and qq.empirical[0] >= 0
    full = qq_data(x, 0.99, 0.0, 1.0)
    np.testing.assert_allclose(full.model, -np.log1p(-full.probabilities), rtol=1e-12)
    assert set(full.to_dict()) >= {"q", "threshold", "n_exc", "empirical", "model"}
