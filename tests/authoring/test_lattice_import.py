"""An LLM judge's 1–10 grades imported and run end to end under ``ties: lattice``: init proposes
the rule, design and freeze refuse a headline threshold with too few distinct exceedance values
(naming the count) until the registration accepts it, and the study runs through Snakemake to a
verdict whose fits use the discretised likelihood and that audits clean (methods note P10). The
same for a judge's probability grades (step 0.05) on the protocol's default headline scale, the
logit, where every exceedance keeps the image of its grade's cell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from git_repo import git_commit
from review_edits import FASTER
from scipy.special import expit
from wf_project import Project

ROWS = {"judge-a": 3000, "judge-b": 3000}


def judge_grades(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Grades 1–10 of condition ``k``: a latent 2 + Gamma score rounded to the nearest integer
    (judge-b's tail is heavier)."""
    return np.clip(np.round(2.0 + rng.gamma(2.0, 0.6 * (1.0, 1.3)[k], n)), 1, 10).astype(int)


def probability_grades(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Probability grades on the lattice 0, 0.05, …, 1 of condition ``k`` (a latent logistic
    score rounded; judge-b's tail a little heavier), a few at the top grade 1."""
    latent = expit(-2.0 + (1.0, 1.15)[k] * rng.logistic(0.0, 1.0, n))
    return np.round(np.round(latent / 0.05) * 0.05, 2)


def write_grades(path: Path, grades: Any = judge_grades, seed: int = 3) -> None:
    """Every condition's ``grades`` written with text prompt keys."""
    rng = np.random.default_rng(seed)
    parts = []
    for k, (cond, n) in enumerate(ROWS.items()):
        parts.append(
            pd.DataFrame(
                {
                    "prompt_key": [f"q-{i:05d}" for i in range(n)],
                    "model": cond,
                    "prompt": [f"prompt {i}" for i in range(n)],
                    "response": [f"reply {i} of {cond}" for i in range(n)],
                    "grade": grades(rng, n, k),
                }
            )
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.concat(parts).to_csv(path, index=False)


def init_project(tmp_path: Path, name: str, grades: Any = judge_grades) -> tuple[Project, Any]:
    """A project whose registration ``init --from-import`` wrote from imported ``grades``."""
    root = tmp_path / "proj"
    (root / "config").mkdir(parents=True)
    (root / "preregistrations").mkdir()
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    write_grades(root / "data" / "scores.csv", grades)
    res = tailgate(root, "init", name, "--from-import", "data/scores.csv")
    assert res.returncode == 0, res.stderr
    return Project(root, name), res


def tailgate(root: Path, *args: str):
    from cli_call import tailgate as run

    return run(*args, cwd=root)


@pytest.mark.slow
def test_judge_grades_run_end_to_end_under_the_lattice_rule_and_audit_clean(tmp_path):
    proj, res = init_project(tmp_path, "judges")
    root = proj.root
    assert "ties: lattice is written" in res.stdout + res.stderr
    text = proj.prereg.read_text()
    assert "    ties: lattice " in text
    # with it the G5 rule that keeps its size on a lattice (methods note P10)
    assert "    tolerance_rule: se " in text
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
    design = register_and_run(proj, min_levels=4)
    # the operating characteristics simulate the lattice rule on the coarsest lattice admitted
    assert "note: lattice rule: both samples rounded to a lattice of step" in design
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


def register_and_run(proj: Project, min_levels: int) -> str:
    """Register ``min_levels`` and the achieved power, design (exit 0), freeze, commit and run
    through Snakemake to an answer; design's output."""
    proj.replace("    ties: lattice ", f"    min_levels: {min_levels}\n    ties: lattice ")
    accept_achieved_power(proj)
    design = tailgate(proj.root, "design", proj.prereg)
    assert design.returncode == 0, design.stdout + design.stderr
    assert "registered: ties: lattice" in design.stdout
    res = tailgate(proj.root, "freeze", proj.prereg)
    assert res.returncode == 0, res.stdout + res.stderr
    git_commit(proj.root, "Pre-register the study", "preregistrations", "data", "config")
    run = proj.snakemake()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    verdict = json.loads((proj.results / "verdict.json").read_text())
    assert verdict["h1"]["verdict"] in ("PASS", "KILL")
    return design.stdout


def accept_achieved_power(proj: Project) -> None:
    """The user's explicit acceptance of the power the imported rows achieve, where design says
    the cap is below Eq. 2's bound (init never writes it)."""
    res = tailgate(proj.root, "design", proj.prereg, "--json")
    design = json.loads(res.stdout)["design"]
    if not design["cap_meets_bound"] or design["n_exc_planned"] < design["min_exceedances"]:
        accepted = design["supported_power"]
        proj.replace("accepted_power: null ", f"accepted_power: {accepted:g}".ljust(19))


@pytest.mark.slow
def test_probability_grades_on_the_logit_scale_register_run_and_answer(tmp_path):
    proj, res = init_project(tmp_path, "graded", probability_grades)
    # bounded grades on a lattice: init writes the rule, and the headline scale stays the logit
    assert "ties: lattice is written: grade (step 0.05)" in res.stdout + res.stderr
    text = proj.prereg.read_text()
    assert "    ties: lattice " in text and "  headline_scale: logit " in text
    for old, new in FASTER:
        proj.replace(old, new)
    proj.prereg.write_text(proj.prereg.read_text().replace("worse: null}", "worse: higher}"))
    register_and_run(proj, min_levels=5)
    fits = json.loads((proj.results / "fits" / "grade" / "logit" / "judge-a.json").read_text())
    assert fits["lattice"] == {
        "step": pytest.approx(0.05),
        "detected": True,
        "cells": "logit",
        "epsilon": 1e-6,
    }
    head = fits["thresholds"][0]
    assert head["status"] == "ok" and head["ad_method"] == "lattice_bootstrap"
    # the threshold is the logit of a point half-way between two grades
    assert (expit(head["u"]) / 0.05) % 1.0 == pytest.approx(0.5)
    assert head["side_reason"]["minus"] and head["side_reason"]["plus"]
    assert head["xi_minus"] not in (None, "nan")  # G5's lower side is fitted on its cells
    on_grades = json.loads((proj.results / "fits/grade/probability/judge-a.json").read_text())
    assert on_grades["lattice"] == {"step": pytest.approx(0.05), "detected": True}
    assert on_grades["thresholds"][0]["n_exc"] == head["n_exc"]
