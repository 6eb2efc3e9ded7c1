"""The example studies of the severity (002) and perturbation (004) kinds, run through Snakemake
in a throw-away project on the simulate backend with known truth: criteria outcomes, report
sections, audit."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from wf_project import REPO_ROOT, Project


def _run_example(root: Path, name: str) -> Project:
    """Copy preregistrations/<name>.yaml into a fresh project, freeze it there, run the DAG."""
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    proj = Project(root, name)
    shutil.copy(REPO_ROOT / "preregistrations" / f"{name}.yaml", proj.prereg)
    from tailgate.prereg.freeze import freeze

    freeze(proj.prereg)
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


def _outcomes(proj: Project, analysis: str) -> dict[str, str]:
    doc = json.loads((proj.results / "analyses" / analysis / "statistics.json").read_text())
    return {c["name"]: c["outcome"] for c in doc["criteria"]}


@pytest.fixture(scope="module")
def severity_demo(tmp_path_factory) -> Project:
    return _run_example(tmp_path_factory.mktemp("severity-demo"), "severity-demo")


def test_severity_demo_outcomes_match_the_truth(severity_demo) -> None:
    assert _outcomes(severity_demo, "errorquake") == {
        "disjoint-pairs": "PASS",
        "steep-vs-flat-at-30": "PASS",
        "same-shape-at-45": "PASS",
        "exponential-best": "PASS",
        "catastrophic-rare": "PASS",
    }
    doc = json.loads(
        (severity_demo.results / "analyses" / "errorquake" / "statistics.json").read_text()
    )
    truth = {"acc30-flat": 0.6, "acc30-steep": 1.3, "acc60-steep": 1.4, "acc60-flat": 0.65}
    for c, b in truth.items():
        low, high = doc["statistics"]["conditions"][c]["b_ci"]
        assert low <= b <= high, (c, low, high)


def test_severity_demo_report_shows_every_item(severity_demo) -> None:
    md = (severity_demo.results / "report.md").read_text()
    for item in (
        "errorquake: b and error rate per condition",
        "errorquake: matched-accuracy pairs",
        "errorquake: events per million queries",
        "| errorquake | disjoint-pairs | disjoint_pairs >= 2",
        "errorquake: b [CI]",
    ):
        assert item in md, item
    html = (severity_demo.results / "report.html").read_text()
    for alt in ("magnitude frequency errorquake", "b forest errorquake", "delta BIC errorquake",
                "per million errorquake"):  # fmt: skip
        assert alt in html


def test_severity_demo_audit_passes(severity_demo) -> None:
    res = severity_demo.cli("audit", "--no-git", severity_demo.results)
    assert res.returncode == 0, res.stdout[-3000:]
