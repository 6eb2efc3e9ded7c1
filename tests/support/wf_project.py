"""A small study in a throw-away project, run through Snakemake itself
(``snakemake -s <repo>/Snakefile -d <project>``), and helpers for the CLI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cli_call import SNAKEMAKE
from project_files import StudyFiles

REPO_ROOT = Path(__file__).resolve().parents[2]

# Small but complete: three conditions, two scales, reduced B; a real effect (xi 0 vs 0.4).
SMALL_STUDY = """\
schema_version: 1
study: small
seed: 4242
sample_cap: 12000
accepted_power: 0
conditions:
  - name: base
    simulate: {tail: {xi: 0.0, sigma: 1.0, share: 0.10}}
  - name: twin
    simulate: {tail: {xi: 0.0, sigma: 1.0, share: 0.10}}
  - name: heavy
    simulate: {tail: {xi: 0.4, sigma: 0.6, share: 0.10}}
data: {backend: simulate}
generation: {shards: 2}
scorers:
  - {name: tox, kind: column, column: simulated_score, bounded: true}
transform: {scales: [probability, logit], epsilon: 1.0e-12}
protocol:
  tolerances: {mean: 0.10, tvar: 0.30}
  thresholds: {headline: 0.95, band: [0.95, 0.97]}
  min_exceedances: 300
  stability: {scan: {start: 0.80, stop: 0.97, step: 0.01}, resamples: 20, min_exceedances: 150}
  bootstrap: {resamples: 300}
  pairs: [[base, twin], [base, heavy]]
  sensitivity: {tolerance_multipliers: [0.5, 1.0, 2.0]}
  power_simulation: {delta_xi: [0.0, 0.2], n_exc: [200, 400], trials: 6, resamples: 20}
  operating_characteristics: {trials: 10}
"""


@dataclass
class Project(StudyFiles):
    name: str = "small"
    first_run: subprocess.CompletedProcess | None = None

    def snakemake(
        self, *args: str, cores: int = 2, commit: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        """``snakemake`` in the project, after committing its registration as a user does
        (``commit=False``: as it is, to test the refusal of an uncommitted one); ``env``: added
        to the environment."""
        if commit:
            from git_repo import commit_registration

            commit_registration(self.root)
        cmd = [
            SNAKEMAKE, "-s", str(REPO_ROOT / "Snakefile"),
            "-d", str(self.root), "--cores", str(cores), *args,
        ]  # fmt: skip
        environ = None if env is None else {**os.environ, **env}
        return subprocess.run(cmd, capture_output=True, text=True, check=False, env=environ)

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        from cli_call import tailgate

        return tailgate(*args, cwd=self.root)


def job_counts(log: str) -> dict[str, int]:
    """Jobs per rule from Snakemake's "Job stats" table (the first one in ``log``)."""
    from tailgate.runs.joblog import job_stats

    return job_stats(log)


def finished_counts(log: str) -> dict[str, int]:
    """Jobs per rule that Snakemake's ``log`` (its terminal output) reports finished ("Finished
    jobid: N (Rule: R)"), the ``all`` target included."""
    from collections import Counter

    return dict(Counter(re.findall(r"Finished jobid: \d+ \(Rule: (\S+)\)", log)))


def make_project(root: Path, text: str = SMALL_STUDY) -> Project:
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text("study: small\nthreads: 1\n")
    proj = Project(root)
    proj.prereg.write_text(text)
    from git_repo import git_commit
    from tailgate.authoring.freeze import freeze

    freeze(proj.prereg)
    git_commit(root, "Pre-register the study", "preregistrations")  # before any data
    return proj


def run_shipped(root: Path, name: str) -> Project:
    """Copy preregistrations/<name>.yaml, its committed lock and the local files it names (a
    model folder) into a fresh project ``root``, run the DAG."""
    from tailgate.plans.registration import load
    from tailgate.prereg.pins import registered_paths

    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    proj = Project(root, name)
    shutil.copy(REPO_ROOT / "preregistrations" / f"{name}.yaml", proj.prereg)
    for text, _ in registered_paths(load(proj.prereg)).values():
        if (REPO_ROOT / text).is_dir():
            shutil.copytree(REPO_ROOT / text, root / text)
        elif (REPO_ROOT / text).is_file():
            (root / text).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO_ROOT / text, root / text)
    shutil.copy(REPO_ROOT / "preregistrations" / f"{name}.lock.json", proj.lock)  # as shipped
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    proj.first_run = res
    return proj
