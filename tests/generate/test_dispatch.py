"""generate_shard dispatches on data.backend."""

from __future__ import annotations

import sys
import types

import pyarrow.parquet as pq
import pytest
from tailgate.generate import DataInputError, generate_shard
from tailgate.prereg.schema import apply_defaults


def test_simulate_backend_is_the_default(make_study, tmp_path):
    study = make_study(data=apply_defaults({"data": {}})["data"])
    out = tmp_path / "s.parquet"
    generate_shard(study, "clean", 0, out, options={})
    assert pq.read_table(out).num_rows == 1000


def test_transformers_backend_is_loaded_lazily(make_study, tmp_path, monkeypatch):
    calls = []
    fake = types.ModuleType("tailgate.generate.transformers_backend")
    fake.generate_shard = lambda *a, **kw: calls.append((a, kw))
    monkeypatch.setitem(sys.modules, "tailgate.generate.transformers_backend", fake)
    study = make_study(data={"backend": "transformers"})
    generate_shard(study, "clean", 1, tmp_path / "t.parquet", options={"device": "cpu"})
    assert calls == [((study, "clean", 1, tmp_path / "t.parquet"), {"options": {"device": "cpu"}})]


def test_unknown_backend(make_study, tmp_path):
    with pytest.raises(DataInputError, match=r"data\.backend.*simulate, import, transformers"):
        generate_shard(make_study(data={"backend": "vllm"}), "clean", 0, tmp_path / "x", options={})
