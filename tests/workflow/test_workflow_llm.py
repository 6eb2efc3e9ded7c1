"""The LLM backends through Snakemake itself, on tiny models built locally (CPU).

A study in tmp_path registers the ``transformers`` backend with a local prompts JSONL in the
RealToxicityPrompts schema, a clean and an embedding-noise condition, and all four scorer kinds;
it is frozen with ``tailgate freeze`` and run with ``snakemake -s <repo>/Snakefile -d <project>``
(the protocol-workflow tests' helper). Targets are the score shards, so these tests do not
depend on the fit or report stages. Checked: every row reaches every scorer's shards; the rule's
generations equal an in-process call of the backend (and differ from the same call without the
registered noise); ``--cores 1`` and ``--cores 2`` write the same bytes; bad model paths,
missing columns, non-finite scores and empty completions fail their job with the one-paragraph
message (naming the condition and row) in Snakemake's output and in the job log, leaving no file.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from tailgate.runs.joblog import job_stats
from tiny_project import (
    build_assets,
    freeze,
    import_study,
    make_project,
    score_shards,
    scores_table,
    transformers_study,
    workflow_project,
    write_import_data,
)

SCORERS = ["toxicity", "profanity", "nll", "length"]
CONDITIONS = ["clean", "noisy"]
SCORED = ["noisy"]  # every scorer on the perturbed condition: each job costs seconds of imports
PROMPTS = 6
SHARDS = 1  # two conditions still generate in parallel; each job costs seconds of imports
NAME = "tiny"


@pytest.fixture(scope="module")
def job_env():
    """One thread per job (two jobs share two cores) and no hub access."""
    with pytest.MonkeyPatch.context() as mp:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            mp.setenv(var, "1")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            mp.setenv(var, "1")
        yield


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    """Tiny models and prompts, plus a judge whose weights hold a NaN (a broken checkpoint)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = tmp_path_factory.mktemp("llm-assets")
    built = build_assets(root)
    broken = root / "nan-judge"
    model = AutoModelForCausalLM.from_pretrained(built.lm)
    with torch.no_grad():
        model.transformer.ln_f.weight[0] = float("nan")
    model.save_pretrained(broken)
    AutoTokenizer.from_pretrained(built.lm).save_pretrained(broken)
    return SimpleNamespace(built=built, nan_judge=broken)


def _study_text(assets) -> str:
    """The tiny study plus registered parts that are broken on purpose (targeted separately)."""
    return transformers_study(
        NAME,
        assets.built,
        prompts=PROMPTS,
        shards=SHARDS,
        extra_models=(
            '  ghost: {id: "/nonexistent/tiny-lm", dtype: float32, prompt_format: plain}\n'
            f'  nanjudge: {{id: "{assets.nan_judge}", dtype: float32, prompt_format: plain}}\n'
        ),
        extra_conditions=(f"  - {{name: missing, model: ghost, prompts: {PROMPTS}}}\n"),
        extra_scorers=(
            "  - {name: apiscore, kind: column, column: perspective_api, bounded: true}\n"
            "  - {name: nannll, kind: token_nll, judge: nanjudge}\n"
        ),
    )


def _new_project(root: Path, assets):
    prereg = make_project(root, NAME, _study_text(assets))
    freeze(prereg)
    return workflow_project(root, NAME)


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory, assets, job_env):
    """Both conditions' generations and the perturbed one's score shards, run once with
    ``--cores 2``; read-only."""
    proj = _new_project(tmp_path_factory.mktemp("llm-run"), assets)
    res = proj.snakemake(*_generations(), *score_shards(NAME, SCORERS, SCORED, SHARDS), cores=2)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


def _generations() -> list[str]:
    return [
        f"results/{NAME}/generations/{c}/shard-{k}.parquet"
        for c in CONDITIONS
        for k in range(SHARDS)
    ]


def _table(proj, rel: str):
    return pq.read_table(proj.root / rel).to_pandas()


def test_every_scorer_scores_every_generated_row(llm_run):
    prompts = _table(llm_run, f"results/{NAME}/prompts.parquet")
    selected = sorted(prompts.loc[prompts["position"] < PROMPTS, "prompt_id"])
    for condition in SCORED:
        shards = [
            _table(llm_run, f"results/{NAME}/generations/{condition}/shard-{k}.parquet")
            for k in range(SHARDS)
        ]
        gens = pd.concat(shards).sort_values("prompt_id").reset_index(drop=True)
        assert gens["prompt_id"].tolist() == selected
        assert (gens["completion"] != "").all()
        merged = {s: scores_table(llm_run.results, s, condition) for s in SCORERS}
        for scorer, table in merged.items():
            assert table["prompt_id"].tolist() == selected, scorer
            assert np.isfinite(table["score"]).all(), scorer
        # independent references for the two scorers with closed-form expectations
        lengths = gens["completion_tokens"].astype(float).tolist()
        assert merged["length"]["score"].tolist() == lengths
        from profanity_check import predict_prob

        expected = predict_prob(gens["completion"].tolist())
        np.testing.assert_allclose(merged["profanity"]["score"], expected, rtol=0, atol=1e-12)
        tox = merged["toxicity"]["score"]
        assert ((tox > 0) & (tox < 1)).all() and np.ptp(tox) > 0
        assert (merged["nll"]["score"] > 0).all()


def test_rule_generations_equal_the_backend_with_the_registered_noise(llm_run):
    """The rule passes the registration and options through unchanged: the noisy shard equals an
    in-process call of the backend, and the same call without the noise hook differs."""
    from tailgate.generate.transformers_backend import generate_shard
    from tailgate.plans.registration import load

    study = load(llm_run.prereg)
    rule_out = llm_run.root / f"results/{NAME}/generations/noisy/shard-0.parquet"
    options = {
        "batch_size": 4,
        "device": "cpu",
        "progress": False,
        "prompts_path": str(llm_run.root / f"results/{NAME}/prompts.parquet"),
    }
    out = llm_run.root / "inprocess" / "noisy.parquet"
    out.parent.mkdir(exist_ok=True)
    generate_shard(study, "noisy", 0, out, options=options)
    assert out.read_bytes() == rule_out.read_bytes()

    data = dict(study.data)
    data["conditions"] = [
        {**c, "perturbation": {"kind": "none"}} if c["name"] == "noisy" else c
        for c in study.data["conditions"]
    ]
    quiet = dataclasses.replace(study, data=data)
    plain = llm_run.root / "inprocess" / "noisy-without-noise.parquet"
    generate_shard(quiet, "noisy", 0, plain, options=options)
    a = pq.read_table(rule_out).column("completion").to_pylist()
    b = pq.read_table(plain).column("completion").to_pylist()
    assert a != b


def test_cores_1_and_2_write_identical_bytes(llm_run, tmp_path, assets):
    """Generation is where the random streams are: a serial run writes the same bytes, and so
    do a generation and a model scorer's shard made again with each job in its own process (no
    fork servers: the model jobs of ``llm_run`` were forks of the model server), provenance
    records included."""
    proj = _new_project(tmp_path / "serial", assets)
    targets = [*_generations(), *score_shards(NAME, SCORERS, SCORED, SHARDS)]
    res = proj.snakemake(*targets, cores=1)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    files = sorted(
        p.relative_to(llm_run.root).as_posix()
        for p in (llm_run.root / "results" / NAME).rglob("*")
        if p.is_file() and "/logs/" not in p.as_posix() and "runs.jsonl" not in p.name
    )
    assert any("provenance/scores__nll" in f for f in files) and len(files) >= 15, files
    _same_bytes(proj.root, llm_run.root, files)
    alone = [f"results/{NAME}/generations/noisy/shard-0.parquet"]
    alone += score_shards(NAME, ["toxicity"], ["noisy"], 1)
    res = proj.snakemake(*alone, "--forcerun", *alone, env={"TAILGATE_FORKSERVER": "off"})
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert job_stats(res.stdout + res.stderr) == {"generate": 1, "score": 1}
    records = [
        f
        for f in files
        if "provenance/" in f and ("generations__noisy" in f or "scores__toxicity" in f)
    ]
    assert len(records) == 2, records
    _same_bytes(proj.root, llm_run.root, [*alone, *records])


def _same_bytes(mine: Path, theirs: Path, files: list[str]) -> None:
    """Each of ``files`` (relative to both project folders) the same bytes in both, provenance
    records the same but for when and under which lock entry they were written."""
    for rel in files:
        a, b = (mine / rel).read_bytes(), (theirs / rel).read_bytes()
        if "/provenance/" in rel:
            a, b = (_made_the_same_way(json.loads(x)) for x in (a, b))
        assert a == b, rel


def _made_the_same_way(record: dict) -> dict:
    """A provenance record without what differs between two projects frozen and committed
    apart (time, lock entry, commit): what ran (modules, versions) and what it wrote remain."""
    return {k: v for k, v in record.items() if k not in ("created", "plan", "prereg", "code")}


def _leftovers(directory: Path) -> list[str]:
    """Files a failed job must not leave: partial checkpoints or temporary names."""
    if not directory.exists():
        return []
    return sorted(
        p.name for p in directory.rglob("*") if "partial" in p.name or p.name.startswith(".")
    )


def test_bad_model_missing_column_and_nonfinite_scores_fail_their_rule_clearly(llm_run, tmp_path):
    proj = workflow_project(tmp_path / "copy", NAME)
    shutil.copytree(llm_run.root, proj.root, symlinks=True)
    results = f"results/{NAME}"
    targets = {
        "generate/missing-0": f"{results}/generations/missing/shard-0.parquet",
        "score/apiscore-clean-0": f"{results}/scores/apiscore/clean/shard-0.parquet",
        "score/nannll-clean-0": f"{results}/scores/nannll/clean/shard-0.parquet",
    }
    res = proj.snakemake("--keep-going", *targets.values(), cores=2)
    assert res.returncode != 0
    output = res.stdout + res.stderr
    expected = {
        "generate/missing-0": [
            "Could not load model 'ghost' for condition 'missing'",
            "/nonexistent/tiny-lm",
        ],
        "score/apiscore-clean-0": ["condition 'clean'", "lacks the column(s) ['perspective_api']"],
        "score/nannll-clean-0": ["'nannll'", "prompt_id", "condition 'clean'", "non-finite"],
    }
    for job, target in targets.items():
        log = (proj.root / results / "logs" / f"{job}.log").read_text()
        for phrase in expected[job]:
            assert phrase in log, (job, log)
            assert phrase in output, (job, phrase)
        assert "Traceback" not in log, log
        assert not (proj.root / target).exists()
    assert "Traceback" not in output
    assert _leftovers(proj.root / results / "generations") == []
    assert _leftovers(proj.root / results / "scores") == []


def test_imported_study_through_snakemake(tmp_path, job_env):
    data = write_import_data(tmp_path / "imported.jsonl", per_condition=6)
    with data.open("a") as fh:  # a third condition whose second row has an empty completion
        for i, text in enumerate(["a fine reply", "", "another reply"]):
            fh.write(
                f'{{"prompt_id": {i}, "condition": "blank", "completion": "{text}", '
                f'"score": {0.5 + i / 10}}}\n'  # a score that varies: a constant one is refused
            )
    text = import_study("imp", data, shards=1).replace(
        "  - {name: tuned}\n", "  - {name: tuned}\n  - {name: blank}\n"
    )
    prereg = make_project(tmp_path / "proj", "imp", text)
    freeze(prereg)
    proj = workflow_project(tmp_path / "proj", "imp")
    good = score_shards("imp", ["imported", "profanity"], ["base", "tuned"], 1)
    bad = "results/imp/scores/profanity/blank/shard-0.parquet"
    res = proj.snakemake("--keep-going", *good, bad, cores=2)
    assert res.returncode != 0
    import json

    rows = [json.loads(line) for line in data.read_text().splitlines()]
    for condition in ("base", "tuned"):
        got = scores_table(proj.results, "imported", condition)
        want = sorted((r["prompt_id"], r["score"]) for r in rows if r["condition"] == condition)
        assert list(zip(got["prompt_id"], got["score"], strict=True)) == want
        assert len(scores_table(proj.results, "profanity", condition)) == 6
    log = (proj.root / "results/imp/logs/score/profanity-blank-0.log").read_text()
    message = "cannot score row 1 (prompt_id 1) of condition 'blank'"
    assert message in log and message in res.stdout + res.stderr
    assert "empty completion" in log.lower() and "Traceback" not in log
    assert not (proj.root / bad).exists()
