"""Provenance records, row digests, data evidence, determinism."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tailgate.code import code_digest
from tailgate.errors import RefusalError
from tailgate.files.atomic import write_parquet
from tailgate.plans.registration import load
from tailgate.prereg.canonical import sha256_file
from tailgate.prereg.evidence import data_evidence
from tailgate.runtime.provenance import record, record_path, rows_digest


def test_record_content_and_location(frozen):
    study = load(frozen.prereg)
    assert not data_evidence(frozen.prereg).exists
    out = frozen.results / "scores" / "tox" / "clean.csv"
    out.parent.mkdir(parents=True)
    out.write_text("prompt_id,score\n1,0.5\n2,0.25\n")
    rec = record(out, results_dir=frozen.results, study=study, inputs=[frozen.prereg], seed=3)
    assert rec.record_file == frozen.results / "provenance" / "scores__tox__clean.csv.json"
    assert rec.record_file == record_path(out, frozen.results)
    c = json.loads(rec.record_file.read_text())
    assert c["path"] == "scores/tox/clean.csv" and c["kind"] == "derived"
    assert c["sha256"] == sha256_file(out) and c["bytes"] == out.stat().st_size
    assert c["prereg"]["canonical_hash"] == study.canonical_hash
    assert c["prereg"]["lock_head"]["seq"] == 0
    assert c["inputs"][0]["sha256"] == sha256_file(frozen.prereg)
    assert c["inputs"][0]["artifact"] is None
    assert c["seed"] == 3 and "numpy" in c["versions"]
    assert c["rows_digest"]["rows"] == 2
    assert c["code"]["digest"] == code_digest()
    # any file in the results folder is evidence of data, whatever its record says
    assert data_evidence(frozen.prereg).exists


def test_record_refuses_an_unfrozen_study(project, tmp_path):
    out = project.results / "a.json"
    out.parent.mkdir(parents=True)
    out.write_text("{}")
    with pytest.raises(RefusalError):
        record(out, results_dir=project.results, study=load(project.prereg), kind="data")


def test_rows_digest_locates_a_changed_row(tmp_path):
    df = pd.DataFrame({"prompt_id": range(300), "score": [i / 300 for i in range(300)]})
    f = tmp_path / "t.parquet"
    write_parquet(f, df)
    before = rows_digest(f)
    assert len(before.blocks) == 5 and before.rows == 300
    df.loc[200, "score"] = 0.0
    write_parquet(f, df)
    assert "128–191" not in before.changed_rows(rows_digest(f))
    assert "192–255" in before.changed_rows(rows_digest(f))
    csv = tmp_path / "t.csv"
    df.to_csv(csv, index=False)
    assert rows_digest(csv).rows == 300


def test_placeholder_is_byte_reproducible(frozen):
    a = frozen.add_data().read_bytes()
    b = frozen.add_data().read_bytes()
    assert a == b
