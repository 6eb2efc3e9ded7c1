"""Fixtures for pre-registration tests: a throw-away project (config/, preregistrations/,
results/) built in tmp_path, with helpers to edit, freeze, add data and run the CLI or Snakemake.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_call import SNAKEMAKE
from git_repo import git_commit
from project_files import StudyFiles
from study_texts import protocol_block

REPO_ROOT = Path(__file__).resolve().parents[2]
BAD_INPUTS = Path(__file__).resolve().parent / "bad_inputs"

# A small valid study; every decision field is written out so that tests can edit it textually.
STUDY_TEXT = """\
# a small study for tests
schema_version: 1
study: NAME
title: "test study"
seed: 12345
hypotheses: {H1: "tails differ"}
sample_cap: 40000
accepted_power: null
models:
  tiny: {id: "local/tiny", revision: null, dtype: float32, prompt_format: plain}
conditions:
  - name: clean
    model: tiny
    perturbation: {kind: none}
    simulate: {tail: {xi: 0.1, sigma: 0.5, share: 0.05}}
  - name: noisy
    model: tiny
    perturbation: {kind: embedding_noise, sigma_rel: 0.25}
    simulate: {tail: {xi: 0.3, sigma: 0.5, share: 0.05}}
data:
  backend: simulate
scorers:
  - {name: toxicity, kind: column, column: simulated_score, bounded: true}
""" + protocol_block(bootstrap_resamples=10000)


@dataclass
class Project(StudyFiles):
    def text(self) -> str:
        return self.prereg.read_text()

    def write(self, text: str) -> None:
        self.prereg.write_text(text)

    def freeze(self) -> None:
        from tailgate.authoring.freeze import freeze

        freeze(self.prereg)

    def add_data(self) -> Path:
        """Commit the registration (as a user does before collecting data), then write and
        record the placeholder data artifact (as the workflow's rule does)."""
        from git_repo import commit_registration
        from placeholder_data import write_placeholder

        commit_registration(self.root)
        out = self.results / "placeholder" / "draws.parquet"
        write_placeholder(self.prereg, out, n=50)
        return out

    def cli(self, *args: str | Path) -> tuple[int, str, str]:
        """``tailgate ARGS`` from the project root (:mod:`cli_call`): exit code, stdout, stderr."""
        from cli_call import tailgate

        res = tailgate(*args, cwd=self.root)
        return res.returncode, res.stdout, res.stderr

    def commit(self, message: str = "register", *paths: str) -> None:
        """Commit ``paths`` (default: the registration and its lock), creating the repository
        on first use."""
        git_commit(self.root, message, *(paths or ("preregistrations",)))

    def snakemake(self, *args: str, commit: bool = True) -> subprocess.CompletedProcess:
        """``snakemake`` in the project, after committing its registration as a user does
        (``commit=False``: as it is)."""
        if commit:
            from git_repo import commit_registration

            commit_registration(self.root)
        cmd = [
            SNAKEMAKE, "-s", str(REPO_ROOT / "Snakefile"),
            "-d", str(self.root), "--cores", "1", *args,
        ]  # fmt: skip
        return subprocess.run(cmd, capture_output=True, text=True, check=False)


def make_project(root: Path, name: str = "study", text: str | None = None) -> Project:
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    proj = Project(root, name)
    proj.write((text or STUDY_TEXT).replace("study: NAME", f"study: {name}"))
    return proj


@pytest.fixture()
def project(tmp_path) -> Project:
    """An unfrozen project with the small study."""
    return make_project(tmp_path / "proj")


@pytest.fixture()
def frozen(project) -> Project:
    project.freeze()
    return project


@pytest.fixture()
def with_data(frozen) -> Project:
    frozen.add_data()
    return frozen


@pytest.fixture()
def study_text() -> str:
    """The small study's YAML text (``study: NAME`` placeholder)."""
    return STUDY_TEXT
