"""The shipped Snakemake profiles on a tiny transformers study: ``snakemake -n --profile ...``.

A dry run builds the whole DAG with the profile's executor settings and resources but submits
nothing, so it runs without a cluster. Checked: the SLURM profile asks for a GPU (and the GPU
model) on generation and scoring jobs only, scales runtime and memory with the attempt, and
the plugin turns those resources into the ``sbatch --gpus`` argument; the local profile caps
concurrent GPU jobs at the one GPU of a workstation.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from dry_run import jobs_by_rule
from tiny_project import (
    REPO_ROOT,
    TinyAssets,
    freeze,
    make_project,
    transformers_study,
    workflow_project,
)

PROFILES = REPO_ROOT / "workflow" / "profiles"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A frozen tiny transformers study; a dry run never opens the registered files."""
    root = tmp_path_factory.mktemp("profile-project")
    assets = TinyAssets(
        lm=root / "lm", bert=root / "bert", detoxify_checkpoint=root / "x.ckpt", prompts=root / "p"
    )
    # the registered checkpoint must exist to be pinned at freeze; its bytes are never read here
    (root / "x.ckpt").write_bytes(b"placeholder checkpoint")
    (root / "bert").mkdir()
    (root / "bert" / "config.json").write_text("{}")
    freeze(make_project(root, "tiny", transformers_study("tiny", assets, shards=2)))
    return workflow_project(root, "tiny")


def test_slurm_profile_dry_run_requests_gpus_for_generation_and_scoring(project):
    res = project.snakemake("-n", "--profile", str(PROFILES / "slurm"), "--config", "study=tiny")
    output = res.stdout + res.stderr
    assert res.returncode == 0, output[-3000:]
    assert "This was a dry-run" in output
    jobs = jobs_by_rule(output)
    assert len(jobs["generate"]) == 2 * 2  # conditions x shards
    assert len(jobs["score"]) == 4 * 2 * 2  # scorers x conditions x shards
    for job in jobs["generate"]:
        assert job["gpu"] == "1" and job["gpu_model"] == "a100", job
        assert job["slurm_partition"] == "gpu" and job["runtime"] == "240", job
        assert job["mem_mb"] == "64000" and job["cpus_per_task"] == "8", job
    for job in jobs["score"]:
        assert job["gpu"] == "1" and job["slurm_partition"] == "gpu", job
        assert "gpu_model" not in job, job
    for rule in ("select_prompts", "transform", "transform_summary"):
        for job in jobs[rule]:
            assert job["slurm_partition"] == "cpu" and job.get("gpu", "0") == "0", (rule, job)
    assert jobs["select_prompts"][0]["mem_mb"] == "16000"


class _Resources(dict):
    """A job's resources as the plugin reads them (``.get`` and attribute access)."""

    __getattr__ = dict.__getitem__


def test_the_plugin_turns_the_profile_resources_into_sbatch_gpu_requests():
    """Runtime and memory grow with the attempt; gpu + gpu_model become ``--gpus=model:n``."""
    import yaml
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    profile = yaml.safe_load((PROFILES / "slurm" / "config.v8+.yaml").read_text())
    generate, score = profile["set-resources"]["generate"], profile["set-resources"]["score"]
    assert eval(generate["runtime"], {"attempt": 2}) == 480  # Snakemake evaluates it so
    assert eval(profile["default-resources"]["mem_mb"], {"attempt": 3}) == 12000
    assert profile["retries"] >= 1
    gen = set_gres_string(SimpleNamespace(resources=_Resources(generate)))
    assert gen.strip() == "--gpus=a100:1"
    sc = set_gres_string(SimpleNamespace(resources=_Resources(score)))
    assert sc.strip() == "--gpus=1"


def test_local_profile_dry_run_caps_gpu_jobs(project):
    res = project.snakemake("-n", "--profile", str(PROFILES / "local"), "--config", "study=tiny")
    output = res.stdout + res.stderr
    assert res.returncode == 0, output[-3000:]
    profile = (PROFILES / "local" / "config.v8+.yaml").read_text()
    assert re.search(r"^resources:\n\s+gpu: 1$", profile, re.M)
    assert "generate" in jobs_by_rule(output)
