"""``tailgate audit --reproduce`` on a transformers study: scores recomputed, not copied.

One tiny study (a clean and an embedding-noise condition of a tiny local LM) is run once through
Snakemake with two ``token_nll`` scorers: ``nll``, whose judge is the local model folder, and
``hubnll``, whose judge is a hub id served from a hub cache that exists while the study runs and
not while it is audited (``HF_HUB_OFFLINE=1`` and an empty cache: a reviewer without the model).
Checked: the honest study audits clean with ``--reproduce``, its ``nll`` scores and per-token
losses recomputed by the score rule; ``hubnll``'s are taken as recorded and listed, naming the
scorer and the model, as what the audit cannot prove; a forged ``nll`` score shard whose record
is re-hashed and whose downstream stages are re-run passes the plain audit and fails
``--reproduce`` (exit 4) naming the shard.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tiny_project import build_assets, freeze, make_project, transformers_study, workflow_project

NAME = "tinyrepro"
HUB_ID = "tailgate-test/tiny-judge"
SCORERS = (
    "  - {name: nll, kind: token_nll, judge: tiny}\n"
    "  - {name: hubnll, kind: token_nll, judge: hubjudge}\n"
)
FORGED = f"results/{NAME}/scores/nll/noisy/shard-0.parquet"


def _hub_cache(root: Path, model_dir: Path) -> Path:
    """A hub cache holding ``model_dir`` as :data:`HUB_ID` (the layout a download leaves)."""
    repo = root / f"models--{HUB_ID.replace('/', '--')}"
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(model_dir, repo / "snapshots" / commit)
    return root


def _env(hub_cache: Path) -> dict[str, str]:
    """One thread per job, the hub offline, and ``hub_cache`` as the hub cache."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_CACHE=str(hub_cache))
    return env


def _run(cmd: list[str], root: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)


def _snakemake(root: Path, env: dict[str, str], *args: str) -> None:
    from git_repo import commit_registration
    from tiny_project import REPO_ROOT

    commit_registration(root)  # a confirmatory run needs its registration committed

    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO_ROOT / "Snakefile"), "-d", str(root)]
    res = _run([*cmd, "--cores", "2", *args], root, env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def _audit(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "tailgate.cli", "audit", f"results/{NAME}", "--no-git", *args]
    return _run(cmd, root, env)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The study, run once to the end with the hub judge cached; read-only."""
    root = tmp_path_factory.mktemp("repro-llm")
    assets = build_assets(root / "assets")
    cache = _hub_cache(root / "hub-cache", assets.lm)
    text = transformers_study(
        NAME,
        assets,
        prompts=6,
        shards=1,
        scorers=SCORERS,
        extra_models=f"  hubjudge: {{id: {HUB_ID}, dtype: float32, prompt_format: plain}}\n",
    )
    for a, b in (
        ("scales: [probability, logit]", "scales: [identity]"),
        ("e: logit", "e: identity"),
    ):
        assert a in text
        text = text.replace(a, b)  # unbounded scores only: the identity scale
    freeze(make_project(root / "project", NAME, text))
    proj = workflow_project(root / "project", NAME)
    _snakemake(proj.root, _env(cache))
    (root / "no-cache").mkdir()
    return SimpleNamespace(proj=proj, offline=_env(root / "no-cache"), cache=cache)


@pytest.fixture(scope="module")
def honest(study, tmp_path_factory):
    """``audit --reproduce --json`` of the honest study where the hub judge cannot be loaded."""
    keep = tmp_path_factory.mktemp("repro-keep")
    res = _audit(study.proj.root, study.offline, "--reproduce", "--json", "--keep", str(keep))
    return SimpleNamespace(res=res, doc=json.loads(res.stdout), keep=keep / "results" / NAME)


def test_honest_study_audits_clean_with_scores_recomputed(honest):
    assert honest.res.returncode == 0, honest.res.stdout[-4000:]
    check = next(c for c in honest.doc["checks"] if c["name"] == "reproduce")
    assert check["ok"] and "compared with a re-run from the data" in check["detail"]
    # the score rule ran for nll (scores and per-token losses made again), not for hubnll
    logs = sorted(p.name for p in (honest.keep / "logs" / "score").iterdir())
    assert logs == ["nll-clean-0.log", "nll-noisy-0.log"]
    assert (honest.keep / "scores/nll/noisy/shard-0.tokens.parquet").is_file()


def test_an_unloadable_judge_is_taken_as_recorded_and_listed_as_unproven(honest):
    (item,) = honest.doc["cannot_prove_here"]
    assert "scorer 'hubnll'" in item and f"model 'hubjudge' ({HUB_ID})" in item
    assert "taken as they are" in item and "scores/hubnll/" in item
    check = next(c for c in honest.doc["checks"] if c["name"] == "reproduce")
    assert any("scores/hubnll/" in n for n in check["notes"])
    from tailgate.audit.findings import AuditReport

    text = AuditReport(Path("r"), [], cannot_prove=[item]).lines()
    assert text[-2:] == ["What this audit in particular cannot prove:", f"    - {item}"]


def _forge(results: Path) -> None:
    """Triple the largest noisy ``nll`` score and re-hash its record, as an attacker would."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path, rows_digest

    shard = results.parent.parent / FORGED
    table = pq.read_table(shard)
    scores = table.column("score").to_pylist()
    top = scores.index(max(scores))
    scores[top] *= 3
    column = table.schema.get_field_index("score")
    pq.write_table(table.set_column(column, "score", pa.array(scores, pa.float64())), shard)
    rec_file = record_path(shard, results)
    rec = json.loads(rec_file.read_text())
    rec.update(sha256=sha256_file(shard), bytes=shard.stat().st_size)
    rec["rows_digest"] = rows_digest(shard).to_json()
    rec_file.write_text(json.dumps(rec))


def test_a_forged_score_shard_passes_the_audit_and_fails_reproduce(study, honest, tmp_path):
    """The forgery keeps the honest registration and generations, so the auditor's re-run
    starts from a copy of the honest reproduction (mtimes kept): Snakemake finds the
    recomputed scores up to date, and the comparison is the one a fresh scratch project gives,
    made by the same code from the same registration and generations."""
    root = tmp_path / "forged"
    shutil.copytree(study.proj.root, root, symlinks=True)
    _forge(root / "results" / NAME)
    _snakemake(root, _env(study.cache), "--rerun-triggers", "mtime")  # downstream re-run
    plain = _audit(root, study.offline)
    assert plain.returncode == 0, plain.stdout[-4000:]  # consistent forgery: a re-run sees it
    scratch = tmp_path / "reproduction"
    shutil.copytree(honest.keep.parent.parent, scratch, symlinks=True)
    res = _audit(root, study.offline, "--reproduce", "--keep", str(scratch))
    assert res.returncode == 4, res.stdout[-4000:]
    assert f"{FORGED}: differs from its recomputation: column 'score'" in res.stdout
    assert "beyond the model tolerance" in res.stdout
    assert "later stages not re-run" in res.stdout  # they would start from forged scores


GENERATIONS = f"results/{NAME}/generations/clean/shard-0.parquet"


@pytest.mark.slow
def test_generate_samples_again_and_catches_a_rewritten_completion(study, tmp_path):
    """``--reproduce --generate`` samples every generation again from the registered seed and
    models: with one completion rewritten (its record re-hashed) it fails naming that shard, and
    nothing else differs, so every other file the run makes is reproduced byte for byte."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path, rows_digest

    root = tmp_path / "rewritten"
    shutil.copytree(study.proj.root, root, symlinks=True)
    results = root / "results" / NAME
    shard = root / GENERATIONS
    table = pq.read_table(shard)
    column = table.schema.get_field_index("completion")
    completions = table.column("completion").to_pylist()
    completions[0] = completions[0] + " and"
    pq.write_table(table.set_column(column, "completion", pa.array(completions)), shard)
    rec_file = record_path(shard, results)
    rec = json.loads(rec_file.read_text())
    rec.update(sha256=sha256_file(shard), bytes=shard.stat().st_size)
    rec["rows_digest"] = rows_digest(shard).to_json()
    rec_file.write_text(json.dumps(rec))

    res = _audit(root, study.offline, "--reproduce", "--generate", "--json")
    assert res.returncode == 4, res.stdout[-4000:]
    check = next(c for c in json.loads(res.stdout)["checks"] if c["name"] == "reproduce")
    assert "prompts and generations re-made" in " ".join([check["detail"], *check["notes"]])
    named = [f for f in check["failures"] if "differs" in f]
    assert named and all(GENERATIONS in f for f in named), check["failures"]
