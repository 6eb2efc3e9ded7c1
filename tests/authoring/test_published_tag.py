"""A registration a reviewer can check from its published tag alone: ``freeze --tag`` commits
the pinned import file with the pre-registration and its lock, so a clone of the tag verifies
and audits the results of a study scaffolded from a CSV and run through Snakemake; above the
size limit a data manifest names the file instead, and ``verify`` in the clone says which file
to obtain and where to place it (exit 2) until it is there."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from git_repo import git, git_commit
from review_edits import project, review, tailgate
from test_init_and_import import write_csv

ROWS = {"model-a": 1200, "model-b": 1000}


def _author(root: Path, name: str) -> tuple:
    """A project whose data folder git ignores, scaffolded from its CSV and reviewed."""
    proj = project(root, name)
    write_csv(proj.root / "data" / "scores.csv", rows=ROWS)
    (proj.root / ".gitignore").write_text("data/\nresults/\n")
    git_commit(proj.root, "Project", ".gitignore", "config")
    res = tailgate(proj.root, "init", name, "--from-import", "data/scores.csv")
    assert res.returncode == 0, res.stderr
    review(proj)  # the smaller run, the bad tail of each score, the power accepted
    return proj, proj.root / "data" / "scores.csv"


def _clone(author: Path, tag: str, into: Path) -> Path:
    git(author.parent, "clone", "-q", "--branch", tag, str(author), str(into))
    return into


@pytest.mark.slow
def test_an_imported_study_runs_to_a_verdict_and_a_reviewer_clone_of_its_tag_audits(tmp_path):
    """A study scaffolded from a CSV (text prompt keys, a probability and an unbounded score),
    reviewed, checked by design, frozen with ``--tag`` and run through Snakemake: the tag holds
    the ignored data file byte for byte; the verdict has a gate for each scorer and scale; the
    generations keep the keys, the same key with the same prompt id in both conditions and the
    file's scores; a clone of the tag verifies, and with the published results copied in it
    audits clean against the registration's hash, reading the clone's own data file (another
    file there fails the audit)."""
    proj, data = _author(tmp_path / "author", "pub")
    frame = pd.read_csv(data)
    res = tailgate(proj.root, "design", proj.prereg)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "prompt keys (column 'prompt_key'): text" in res.stdout
    res = tailgate(proj.root, "freeze", proj.prereg, "--tag")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "the tag holds the pinned input file data/scores.csv" in res.stdout
    assert "committed and tagged prereg/pub/0" in res.stdout
    # the ignored data file is in the tagged commit, byte for byte
    assert git(proj.root, "show", "prereg/pub/0:data/scores.csv").encode() == data.read_bytes()
    run = proj.snakemake()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    verdict = json.loads((proj.results / "verdict.json").read_text())
    assert verdict["h1"]["verdict"] in ("PASS", "KILL")
    assert {(g["scorer"], g["scale"]) for g in verdict["gates"]} == {
        ("tox_prob", "probability"),
        ("tox_prob", "logit"),
        ("severity", "identity"),
    }
    # the generations keep the keys; the same key has the same prompt id in both conditions
    order = sorted(set(frame["prompt_key"]))
    for cond, n in ROWS.items():
        gen = pq.read_table(proj.results / "generations" / cond / "shard-0.parquet").to_pandas()
        assert len(gen) == n
        assert gen["prompt_id"].tolist() == [order.index(k) for k in gen["prompt_key"]]
        want = frame[frame["model"] == cond].set_index("prompt_key")
        assert np.allclose(gen["severity"], want.loc[gen["prompt_key"], "severity"].to_numpy())
    entry = json.loads(proj.lock.read_text())["chain"][0]["entry_hash"]

    reviewer = _clone(proj.root, "prereg/pub/0", tmp_path / "reviewer")
    res = tailgate(reviewer, "verify", "preregistrations/pub.yaml")
    assert res.returncode == 0, res.stdout + res.stderr
    shutil.copytree(proj.results, reviewer / "results" / "pub")  # the published results
    res = tailgate(reviewer, "audit", "results/pub", "--expected-hash", entry)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    # the audit reads the clone's files: another data file there fails it
    (reviewer / "data" / "scores.csv").write_text(data.read_text().replace("model-a", "model-c", 1))
    res = tailgate(reviewer, "audit", "results/pub", "--expected-hash", entry)
    assert res.returncode == 4, res.stdout[-3000:]


def test_above_the_limit_the_tag_names_the_file_and_verify_says_where_to_place_it(tmp_path):
    proj, data = _author(tmp_path / "author", "big")
    size = data.stat().st_size
    limit_mb = size / 2 / 1e6  # the file is twice the limit
    res = tailgate(proj.root, "freeze", proj.prereg, "--tag", "--data-limit-mb", str(limit_mb))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "not in the tag" in res.stdout and "big.data.json" in res.stdout
    manifest = json.loads((proj.root / "preregistrations" / "big.data.json").read_text())
    (row,) = manifest["files"]
    sha = hashlib.sha256(data.read_bytes()).hexdigest()
    assert row["path"] == "data/scores.csv" and row["sha256"] == sha and row["bytes"] == size
    assert row["rows"] == ROWS and row["in_tag"] is False and row["place_at"] == "data/scores.csv"
    assert manifest["entry_hash"] == json.loads(proj.lock.read_text())["chain"][0]["entry_hash"]

    reviewer = _clone(proj.root, "prereg/big/0", tmp_path / "reviewer")
    assert not (reviewer / "data" / "scores.csv").exists()
    assert (reviewer / "preregistrations" / "big.data.json").is_file()
    res = tailgate(reviewer, "verify", "preregistrations/big.yaml")
    assert res.returncode == 2, res.stdout + res.stderr
    message = res.stderr
    assert "Traceback" not in message
    assert "data/scores.csv" in message and sha in message and f"{size:,} bytes" in message
    assert "obtain that file" in message and "big.data.json" in message
    assert f"place it at {reviewer / 'data' / 'scores.csv'}" in message
    assert "before freezing" not in message
    # placed as told, it verifies; a different file is a changed pin (exit 3)
    (reviewer / "data").mkdir()
    shutil.copy(data, reviewer / "data" / "scores.csv")
    res = tailgate(reviewer, "verify", "preregistrations/big.yaml")
    assert res.returncode == 0, res.stdout + res.stderr
    (reviewer / "data" / "scores.csv").write_text(data.read_text()[:-40])
    assert tailgate(reviewer, "verify", "preregistrations/big.yaml").returncode == 3


@pytest.mark.parametrize("limit", ["-1", "nan"])
def test_a_negative_limit_is_refused(tmp_path, limit):
    proj, _ = _author(tmp_path / "author", "neg")
    res = tailgate(proj.root, "freeze", proj.prereg, "--tag", "--data-limit-mb", limit)
    assert res.returncode == 2 and "--data-limit-mb" in res.stderr and "Traceback" not in res.stderr
    assert not proj.lock.exists()
