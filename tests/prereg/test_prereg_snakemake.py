"""Refusal inside the workflow: `snakemake -n`, a run and `--report` all refuse at parse time,
naming the field; an amendment lets the run proceed. (Subprocesses on a study in tmp_path.)"""

from __future__ import annotations

import pytest

# a representative subset of the edit kinds tested for every entry point in test_prereg_refusal
SUBSET = {
    "tolerance": ("mean: 0.10", "mean: 0.20", "protocol.tolerances.mean"),
    "condition_renamed": ("name: noisy", "name: noisier", "conditions[noisy].name"),
    "bootstrap": ("resamples: 10000", "resamples: 1000", "protocol.bootstrap.resamples"),
}


def assert_refused(res, field):
    text = res.stdout + res.stderr
    assert res.returncode == 3, text  # the CLI's refusal code, through Snakemake
    assert "Traceback" not in text and 'File "' not in text
    assert "Refusing to run study 'study'" in text
    assert field in text
    assert "tailgate amend" in text and "restore the registered file" in text
    assert "Job stats" not in text  # no job was scheduled


@pytest.mark.parametrize("edit", sorted(SUBSET))
def test_dry_run_refuses_a_changed_prereg(with_data, edit):
    old, new, field = SUBSET[edit]
    with_data.replace(old, new)
    assert_refused(with_data.snakemake("-n"), field)


def test_run_and_report_refuse(with_data):
    with_data.replace("delta_floor: 0.10", "delta_floor: 0.09")
    before = sorted(p.name for p in with_data.results.rglob("*"))
    assert_refused(with_data.snakemake(), "protocol.delta_floor")
    assert_refused(with_data.snakemake("--report", "report.html"), "protocol.delta_floor")
    assert not (with_data.root / "report.html").exists()
    assert sorted(p.name for p in with_data.results.rglob("*")) == before


def test_unfrozen_study_is_refused(project):
    res = project.snakemake("-n")
    assert res.returncode != 0 and "not frozen" in res.stdout + res.stderr


@pytest.fixture()
def light(project):
    """The small study with light resampling and 12,000 prompts a condition, so the whole DAG
    runs in seconds (the refusals and the amendment are what is tested, not the verdict)."""
    project.replace("resamples: 10000", "resamples: 200")
    project.replace("sample_cap: 40000", "sample_cap: 12000\naccepted_power: 0.05")
    project.replace("accepted_power: null\n", "")
    project.replace(
        "scan: {start: 0.70, stop: 0.985, step: 0.005}",
        "scan: {start: 0.85, stop: 0.97, step: 0.03}",
    )
    project.replace(
        "trials: 10, resamples: 10}",
        "trials: 4, resamples: 10}\n  operating_characteristics: {trials: 10, resamples: 10}",
    )
    project.freeze()
    return project


def test_run_then_amend_then_run_again(light):
    """The honest path in git: commit the registration, run, audit; amend after data, commit
    the amendment, run, audit — it passes and shows the amendment as after data."""
    frozen = light
    frozen.commit("Pre-register study")
    res = frozen.snakemake()
    assert res.returncode == 0, res.stderr
    code, out, _ = frozen.cli("audit", frozen.results)
    assert code == 0, out
    frozen.replace("mean: 0.10", "mean: 0.20")
    assert_refused(frozen.snakemake("-n"), "protocol.tolerances.mean")
    code, _, _ = frozen.cli("amend", frozen.prereg, "--reason", "why")
    assert code == 0
    frozen.commit("Amend study")
    res = frozen.snakemake()  # the decision stages re-run under the new head
    assert res.returncode == 0, res.stderr
    code, out, _ = frozen.cli("audit", frozen.results)
    assert code == 0, out
    assert "amendment 1" in out and "after data existed" in out
