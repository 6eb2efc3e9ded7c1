"""What a workflow job loads and how it ends, and the fit stage's shortcuts, without Snakemake.

Each Snakemake job is a fresh Python process, so what a stage module imports is paid by every
job: the rule adapter must not pull in the report package (and its plotting library) to know
which exceptions are user errors. The fit stage reads G5's side fits from the stability scan
(Section 6.3 of Zhou (2026)) instead of refitting them; that must give the values a refit gives.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from tailgate.errors import EXIT_INTERNAL, EXIT_INVALID, InputError
from tailgate.stages.rule import is_user_error, run

# the jobs of the analysis; report alone draws figures
ANALYSIS_STAGES = ["data", "transform", "fit", "bulk", "gates", "sensitivity", "verdict", "power"]


@pytest.mark.parametrize("stage", ANALYSIS_STAGES)
def test_stage_jobs_do_not_load_the_report_package(stage):
    code = (
        f"import sys, tailgate.stages.rule, tailgate.stages.{stage}\n"
        "print(sorted(m for m in ('matplotlib', 'tailgate.report.render', 'torch', 'transformers') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", out


def test_user_errors_are_recognised_from_loaded_modules_only():
    from tailgate.report.model import ReportInputError

    assert is_user_error(InputError("x")) and is_user_error(ReportInputError("x"))
    assert not is_user_error(ValueError("x")) and not is_user_error(KeyError("x"))


def _exit_code(tmp_path, exc: BaseException) -> tuple[int, str]:
    def stage() -> None:
        raise exc

    log = tmp_path / "job.log"
    with pytest.raises(SystemExit) as info:
        run(str(log), stage)
    return int(info.value.code), log.read_text()


def test_run_exits_2_without_traceback_on_a_user_error(tmp_path, capsys):
    code, log = _exit_code(tmp_path, InputError("results/x.json: the field is missing. Fix: y."))
    assert code == EXIT_INVALID
    assert "Traceback" not in log and "the field is missing" in log
    assert "the field is missing" in capsys.readouterr().err


def test_run_keeps_the_traceback_of_a_bug(tmp_path, capsys):
    code, log = _exit_code(tmp_path, ZeroDivisionError("boom"))
    assert code == EXIT_INTERNAL
    assert "Traceback" in log and "ZeroDivisionError" in log
    assert "see the traceback" in capsys.readouterr().err


def test_scan_sides_equal_a_refit_at_every_grid_point():
    from tailgate.stages.fit import scan_sides, side_xi
    from tailgate.stats.stability import stability_scan

    rng = np.random.default_rng(12)
    grid = [round(0.80 + 0.01 * i, 10) for i in range(20)]
    kinds = set()
    # an exponential sample: interior fits, and too few exceedances at the top of the grid (NaN);
    # the same capped at 3 (a pile-up at the bound): boundary fits (NaN), then ties at the cap
    for x in (rng.exponential(size=3_000), np.minimum(rng.exponential(size=3_000), 3.0)):
        scan = stability_scan(x, grid, min_exceedances=60, n_boot=0)
        sides = scan_sides(scan, grid)
        for q in grid:
            a, b = sides[q], side_xi(x, q, 60)
            assert (a is None and b is None) or (math.isnan(a) and math.isnan(b)) or a == b, q
            kinds.add("none" if b is None else "nan" if math.isnan(b) else "xi")
    # too few exceedances inside the data range is "not testable" (NaN), like a boundary fit
    assert kinds == {"nan", "xi"}


def test_fit_document_does_not_depend_on_worker_threads(tmp_path):
    from demo_scenarios import demo_study
    from tailgate.stages.fit import fit_condition

    study = demo_study(tmp_path, resamples=300)
    x = np.random.default_rng(3).standard_t(5, size=12_000)
    docs = [
        fit_condition(
            x, study=study, scorer="toxicity", scale="logit", condition="qwen",
            progress=False, workers=w,
        )
        for w in (1, 2)
    ]  # fmt: skip
    assert json.dumps(docs[0]) == json.dumps(docs[1])
    assert all(t["xi_ci"] is not None for t in docs[0]["thresholds"][:3])
