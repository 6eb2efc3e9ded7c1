"""An LLM judge's 1–10 grades imported and run end to end under ``ties: lattice``: init proposes
the rule, design and freeze refuse a headline threshold with too few distinct exceedance values
(naming the count) until the registration accepts it, and the study runs through Snakemake to a
verdict whose fits use the discretised likelihood and that audits clean (methods note P10)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

TESTS = Path(__file__).resolve().parents[1]
for helper in (TESTS, TESTS / "workflow"):
    if str(helper) not in sys.path:
        sys.path.insert(0, str(helper))

from git_repo import git_commit  # noqa: E402
from review_edits import FASTER  # noqa: E402
from wf_project import Project  # noqa: E402

ROWS = {"judge-a": 3000, "judge-b": 3000}


def write_grades(path: Path, seed: int = 3) -> None:
    """Grades 1–10: a latent 2 + Gamma score rounded to the nearest integer (judge-b's tail is
    heavier), written with text prompt keys."""
    rng = np.random.default_rng(seed)
    parts = []
    for (cond, n), scale in zip(ROWS.items(), (1.0, 1.3), strict=True):
        grade = np.clip(np.round(2.0 + rng.gamma(2.0, 0.6 * scale, n)), 1, 10)
        parts.append(
            pd.DataFrame(
                {
                    "prompt_key": [f"q-{i:05d}" for i in range(n)],
                    "model": cond,
                    "prompt": [f"prompt {i}" for i in range(n)],
                    "response": [f"reply {i} of {cond}" for i in range(n)],
                    "grade": grade.astype(int),
                }
            )
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.concat(parts).to_csv(path, index=False)


def tailgate(root: Path, *args: str):
    from cli_call import tailgate as run

    return run(*args, cwd=root)


@pytest.mark.slow
def test_judge_grades_run_end_to_end_under_the_lattice_rule_and_audit_clean(tmp_path):
    name = "judges"
    root = tmp_path / "proj"
    (root / "config").mkdir(parents=True)
    (root / "preregistrations").mkdir()
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    proj = Project(root, name)
    write_grades(root / "data" / "scores.csv")
    res = tailgate(root, "init", name, "--from-import", "data/scores.csv")
    assert res.returncode == 0, res.stderr
    assert "ties: lattice is written" in res.stdout + res.stderr
    text = proj.prereg.read_text()
    assert "    ties: lattice " in text
    for old, new in FASTER:
        proj.replace(old, new)
    # the review a user makes: judge grades of error severity, the higher the worse
    proj.prereg.write_text(proj.prereg.read_text().replace("worse: null}", "worse: higher}"))
    # four distinct grades above the 0.95-quantile: fewer than the default minimum of 30
    for verb in ("design", "freeze"):
        res = tailgate(root, verb, proj.prereg)
        assert res.returncode == 2, res.stdout + res.stderr
        assert "leaves 4 distinct exceedance values" in res.stdout + res.stderr
        assert "protocol.thresholds.min_levels" in res.stdout + res.stderr
        assert "Traceback" not in res.stderr
    proj.replace("    ties: lattice ", "    min_levels: 4\n    ties: lattice ")
    accept_achieved_power(proj)
    res = tailgate(root, "design", proj.prereg)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "registered: ties: lattice" in res.stdout
    # the operating characteristics simulate the lattice rule on the coarsest lattice admitted
    assert "note: lattice rule: both samples rounded to a lattice of step" in res.stdout
    res = tailgate(root, "freeze", proj.prereg)
    assert res.returncode == 0, res.stdout + res.stderr
    git_commit(root, "Pre-register the judge study", "preregistrations", "data", "config")
    run = proj.snakemake()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    verdict = json.loads((proj.results / "verdict.json").read_text())
    assert verdict["h1"]["verdict"] in ("PASS", "KILL")
    fits = json.loads((proj.results / "fits" / "grade" / "identity" / "judge-a.json").read_text())
    assert fits["lattice"] == {"step": 1.0, "detected": True}
    head = fits["thresholds"][0]
    assert head["u"] % 1.0 == 0.5  # the threshold lies half-way between two grades
    assert head["status"] == "ok" and head["ad_method"] == "lattice_bootstrap"
    assert head["side_reason"]["minus"] and head["side_reason"]["plus"]
    # init proposed the G1/G2 tolerances from the data: the registration and the report say so
    assert "    proposed: data " in proj.prereg.read_text()
    report = next(proj.results.glob("**/report.md")).read_text()
    assert "proposed from the data by init" in report
    audit = tailgate(root, "audit", proj.results)
    assert audit.returncode == 0, audit.stdout[-3000:] + audit.stderr[-2000:]


def accept_achieved_power(proj: Project) -> None:
    """The user's explicit acceptance of the power the imported rows achieve, where design says
    the cap is below Eq. 2's bound (init never writes it)."""
    res = tailgate(proj.root, "design", proj.prereg, "--json")
    design = json.loads(res.stdout)["design"]
    if not design["cap_meets_bound"] or design["n_exc_planned"] < design["min_exceedances"]:
        accepted = math.floor(design["achieved_power"] * 1000) / 1000
        proj.replace("accepted_power: null ", f"accepted_power: {accepted:g}".ljust(19))
