"""`tailgate audit`: a tampered byte, a swapped artifact, a deleted record, a truncated chain
each fail with exit 4 naming the file; a clean study passes."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tailgate.files.atomic import write_parquet
from tailgate.plans.registration import load
from tailgate.prereg.evidence import data_evidence
from tailgate.runtime.provenance import record, record_path


def run_audit(project, *extra):
    """The audit of a project outside git (timing via git is tested in tests/audit)."""
    code, out, err = project.cli("audit", project.results, "--no-git", *extra)
    return code, out + err


def test_clean_study_passes_and_says_what_it_cannot_prove(with_data):
    code, out = run_audit(with_data)
    assert code == 0, out
    assert "audit passed" in out
    assert "verdict re-derivation is not available" in out
    assert "What an audit cannot prove" in out


def test_flipped_byte_fails_naming_the_file(with_data):
    f = with_data.results / "placeholder" / "draws.parquet"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x01
    f.write_bytes(bytes(data))
    code, out = run_audit(with_data)
    assert code == 4
    assert f"{f}: SHA-256 differs from its provenance record" in out


def test_changed_row_is_located(with_data):
    f = with_data.results / "placeholder" / "draws.parquet"
    df = pd.read_parquet(f)
    df.loc[70, "severity"] += 1.0
    write_parquet(f, df)
    code, out = run_audit(with_data)
    assert code == 4
    assert "changed rows within 64–99" in out  # block 1 of 64 rows (100 rows in all)


def test_swapped_artifacts_fail(with_data):
    study = load(with_data.prereg)
    a = with_data.results / "placeholder" / "draws.parquet"
    b = with_data.results / "placeholder" / "other.parquet"
    write_parquet(b, pd.DataFrame({"x": [1, 2, 3]}))
    record(b, results_dir=with_data.results, study=study, inputs=[a], seed=1, kind="derived")
    assert run_audit(with_data)[0] == 0
    tmp = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(tmp)
    code, out = run_audit(with_data)
    assert code == 4
    # files of another size are found by their size, unhashed; of the same size, by SHA-256
    for f in (a, b):
        said = [line for line in out.splitlines() if f"{f}: " in line]
        assert said and ("SHA-256 differs" in said[0] or "the file was not hashed" in said[0]), out


def test_changed_input_is_detected(with_data):
    study = load(with_data.prereg)
    a = with_data.results / "placeholder" / "draws.parquet"
    b = with_data.results / "summary.json"
    b.write_text("{}")
    record(b, results_dir=with_data.results, study=study, inputs=[a], kind="derived")
    with_data.add_data()  # same seed: identical bytes, so nothing changed
    assert run_audit(with_data)[0] == 0
    df = pd.read_parquet(a)
    df.loc[0, "severity"] = -1.0
    write_parquet(a, df)
    record(a, results_dir=with_data.results, study=study, kind="data")  # re-recorded, but...
    code, out = run_audit(with_data)
    assert code == 4 and f"{b}: its input {a} changed" in out


def test_deleted_record_fails(with_data):
    f = with_data.results / "placeholder" / "draws.parquet"
    rec = record_path(f, with_data.results)
    rec.unlink()
    assert data_evidence(with_data.prereg).exists  # the file itself still shows data
    code, out = run_audit(with_data)
    assert code == 4
    assert f"{f}: no provenance record" in out and rec.name in out


def test_truncated_chain_fails(with_data):
    with_data.replace("mean: 0.10", "mean: 0.20")
    with_data.cli("amend", with_data.prereg, "--reason", "r")
    with_data.add_data()  # produced under entry 1
    lock = json.loads(with_data.lock.read_text())
    lock["chain"] = lock["chain"][:1]  # cut the amendment, leave the recorded length
    with_data.lock.write_text(json.dumps(lock))
    code, out = run_audit(with_data)
    assert code == 4
    assert f"{with_data.lock}" in out and "chain_length 2" in out
    # a consistent truncation (length and head rewritten too) is caught by the records
    lock["chain_length"] = 1
    lock["head"] = {k: lock["chain"][0][k] for k in ("seq", "entry_hash", "canonical_hash", "time")}
    with_data.lock.write_text(json.dumps(lock))
    code, out = run_audit(with_data)
    assert code == 4
    assert "not in the chain" in out and "draws.parquet" in out


def test_record_older_than_lock_fails(with_data):
    rec = record_path(with_data.results / "placeholder" / "draws.parquet", with_data.results)
    content = json.loads(rec.read_text())
    content["created"] = "2000-01-01T00:00:00.000000Z"
    rec.write_text(json.dumps(content))
    code, out = run_audit(with_data)
    assert code == 4 and "after the first artifact" in out


def test_expected_hash(with_data):
    h = load(with_data.prereg).canonical_hash
    assert run_audit(with_data, "--expected-hash", h)[0] == 0
    code, out = run_audit(with_data, "--expected-hash", "0" * 64)
    assert code == 4 and "published hash" in out


def test_listed_verdict_checks_run(with_data, monkeypatch):
    import tailgate.audit.verdicts as verdicts

    seen = []

    def ok(results_dir, study):
        seen.append((results_dir.name, study.name))
        return []

    monkeypatch.setattr(verdicts, "VERDICT_CHECKS", [("h1", ok)])
    assert run_audit(with_data)[0] == 0 and seen == [("study", "study")]
    monkeypatch.setattr(
        verdicts,
        "VERDICT_CHECKS",
        [("h1", ok), ("gates", lambda rd, s: [f"{rd}/gates.json: G1 differs"])],
    )
    code, out = run_audit(with_data)
    assert code == 4 and "gates.json: G1 differs" in out


@pytest.mark.parametrize("target", ["missing", "edited_prereg"])
def test_missing_results_or_changed_prereg_fail(with_data, target):
    if target == "missing":
        code, out, _ = with_data.cli("audit", with_data.root / "results" / "nope")
        assert "no such folder" in out
    else:
        with_data.replace("seed: 12345", "seed: 2")
        code, _out, _err = with_data.cli("audit", with_data.results)
    assert code == 4
