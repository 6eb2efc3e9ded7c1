"""Refusal inside the workflow: `snakemake -n`, a run and `--report` all refuse at parse time,
naming the field. (Subprocesses on a study in tmp_path; the run after an amendment is
``tests/workflow/test_workflow.py``'s.)"""

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
