"""The study every attack starts from, and the project helpers the attacks use.

``ATTACK_STUDY`` is registered with ``band_rule: all``. Its honest verdict is H1 KILL: the real
effect (ξ 0 vs 0.4) passes every gate at q = 0.95 but fails G3 at q = 0.97 (360 < 500
exceedances), so under ``band_rule: any`` the same data would give PASS — the unearned PASS a
motivated researcher is after. ``IMPORT_STUDY`` brings its own data from a CSV file; one of its
conditions has fewer rows than it registered.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cli_call import SNAKEMAKE, tailgate
from git_repo import GIT_ENV, commit_registration, git, git_commit
from project_files import StudyFiles

REPO_ROOT = Path(__file__).resolve().parents[2]

ATTACK_STUDY = """\
schema_version: 1
study: attack
title: "honest verdict under band rule all: KILL"
seed: 4242
sample_cap: 12000
accepted_power: 0
conditions:
  - name: base
    simulate: {tail: {xi: 0.0, sigma: 1.0, share: 0.10}}
  - name: heavy
    simulate: {tail: {xi: 0.4, sigma: 0.6, share: 0.10}}
data: {backend: simulate}
generation: {shards: 1}
scorers:
  - {name: tox, kind: column, column: simulated_score, bounded: true}
transform: {scales: [logit], epsilon: 1.0e-12}
protocol:
  headline_scale: logit
  band_rule: all
  tolerances: {mean: 0.50, tvar: 1.00}
  thresholds: {headline: 0.95, band: [0.95, 0.97]}
  min_exceedances: 500
  stability:
    scan: {start: 0.90, stop: 0.97, step: 0.01}
    resamples: 0
    min_exceedances: 150
    tolerance: 0.5
  bootstrap: {resamples: 300}
  pairs: [[base, heavy]]
  sensitivity: {tolerance_multipliers: [1.0]}
  power_simulation: {delta_xi: [0.0], n_exc: [200], trials: 2, resamples: 10}
  operating_characteristics: {trials: 10}
"""

IMPORT_STUDY = """\
schema_version: 1
study: imported
seed: 99
sample_cap: 3000
accepted_power: 0
conditions:
  - name: a
  - name: b
    prompts: 2000
data:
  backend: import
  import:
    path: data/scores.csv
    columns: {prompt_id: id, condition: cond, completion: text, score: tox}
generation: {shards: 1}
scorers:
  - {name: tox, kind: column, column: tox, bounded: true}
transform: {scales: [logit], epsilon: 1.0e-12}
protocol:
  headline_scale: logit
  thresholds: {headline: 0.90, band: [0.90]}
  min_exceedances: 100
  stability: {scan: {start: 0.85, stop: 0.92, step: 0.01}, resamples: 0, min_exceedances: 50}
  bootstrap: {resamples: 100}
  pairs: [[a, b]]
  sensitivity: {tolerance_multipliers: [1.0]}
  power_simulation: {delta_xi: [0.0], n_exc: [100], trials: 2, resamples: 10}
  operating_characteristics: {trials: 10}
"""


def write_import_csv(path: Path, rows_b: int = 300, seed: int = 5) -> None:
    """3,000 rows of condition a and ``rows_b`` of b (b registers 2,000: a shortfall)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lines = ["id,cond,text,tox"]
    for cond, n in (("a", 3000), ("b", rows_b)):
        scores = 1.0 / (1.0 + np.exp(-rng.logistic(-4.0, 1.0, n)))
        lines += [f"{i},{cond},reply {i},{s:.12f}" for i, s in enumerate(scores)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@dataclass
class Project(StudyFiles):
    def snakemake(
        self,
        *args: str,
        env: dict | None = None,
        snakefile: Path | None = None,
        commit: bool = True,
    ):
        """``snakemake`` in the project, after committing its registration as a user does
        (``commit=False``: as it is, as an attacker would run it)."""
        if commit:
            commit_registration(self.root)
        cmd = [
            SNAKEMAKE, "-s", str(snakefile or REPO_ROOT / "Snakefile"),
            "-d", str(self.root), "--cores", "2", *args,
        ]  # fmt: skip
        return subprocess.run(
            cmd, capture_output=True, text=True, check=False,
            env={**os.environ, **(env or {})},
        )  # fmt: skip

    def cli(self, *args: str | Path) -> tuple[int, str]:
        """``tailgate ARGS`` from the project folder: (exit code, stdout + stderr)."""
        res = tailgate(*args, cwd=self.root, env=GIT_ENV)  # GIT_ENV: --tag commits
        return res.returncode, res.stdout + res.stderr

    def audit(self, *args: str) -> tuple[int, str]:
        return self.cli("audit", f"results/{self.name}", *args)

    def commit(self, message: str, *paths: str) -> str:
        return git_commit(self.root, message, *(paths or ("preregistrations",)))

    def verdict(self) -> dict:
        return json.loads((self.results / "verdict.json").read_text())

    def copy(self, dest: Path) -> Project:
        shutil.copytree(self.root, dest, symlinks=True)
        return Project(dest, self.name)


def make_project(root: Path, name: str, text: str) -> Project:
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    proj = Project(root, name)
    proj.prereg.write_text(text)
    return proj


def registered_and_run(root: Path, name: str, text: str) -> Project:
    """Freeze, commit the registration, run the workflow, commit nothing else."""
    proj = make_project(root, name, text)
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    proj.commit("Pre-register the study")
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


def forge_fresh_lock(proj: Project) -> None:
    """A new entry 0 for the file as it is now, written with the library as a forger would
    (past every refusal of ``freeze``)."""
    from tailgate.prereg.lock import make_entry, new_lock, write_lock
    from tailgate.prereg.study import load

    study = load(proj.prereg)
    entry = make_entry(
        seq=0, kind="freeze", previous_entry_hash=None, snapshot=study.data,
        raw_hash=study.raw_hash, derived={}, data_existed=False, git=None, pins={},
    )  # fmt: skip
    write_lock(new_lock(proj.lock, study.name, [entry]))


def head_commit(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()
