"""Cluster requests that grow with the registered rows (``tailgate.stages.resources``).

The jobs whose cost grows with the data (transform, fit, bulk, operating) ask the SLURM profile
for memory and time from their rows; checked on the function itself (floors, attempt, slope)
and on the dry-run DAG of one study registered at 2.4 · 10⁴ and at 10⁷ rows per condition through
``--profile workflow/profiles/slurm``, where every such job's request must be what the function
gives for the rows it reads, and cover the measured peak at those rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dry_run import jobs_by_rule
from tailgate.stages.resources import (
    COSTS,
    FLOOR_MB,
    FLOOR_MINUTES,
    HEADROOM,
    memory_mb,
    runtime_min,
)
from wf_project import SMALL_STUDY, make_project

PROFILE = Path(__file__).resolve().parents[2] / "workflow" / "profiles" / "slurm"


def test_small_jobs_ask_the_profile_defaults_and_retries_ask_more():
    for stage in COSTS:
        assert memory_mb(stage, 10_000) == FLOOR_MB
        assert runtime_min(stage, 10_000) == FLOOR_MINUTES
        big = 50_000_000
        assert memory_mb(stage, big, attempt=2) == 2 * memory_mb(stage, big)
        assert runtime_min(stage, big, attempt=3) == 3 * runtime_min(stage, big)


@pytest.mark.parametrize("stage", sorted(COSTS))
def test_requests_grow_linearly_with_the_rows(stage):
    """Past the floor, ten times the rows ask about ten times the per-row part."""
    cost = COSTS[stage]
    n = 100_000_000
    slope_mb = (memory_mb(stage, 2 * n) - memory_mb(stage, n)) / n
    assert slope_mb == pytest.approx(HEADROOM * cost.bytes_per_row / 2**20, abs=500 / n)
    # the request covers the measured peak with room to spare, never less
    for rows in (10**5, 10**6, 10**7, 10**8):
        peak = cost.base_mb + rows * cost.bytes_per_row / 2**20
        assert memory_mb(stage, rows) >= HEADROOM * peak
        assert runtime_min(stage, rows) * 60 >= HEADROOM * rows * cost.cpu_s_per_row


def test_bad_arguments_are_refused():
    with pytest.raises(KeyError, match="no measured cost"):
        memory_mb("gates", 10)
    with pytest.raises(ValueError):
        runtime_min("fit", 10, attempt=0)


def _study(rows: int) -> str:
    """The workflow's small study (three conditions, two scales) registered at ``rows``."""
    return SMALL_STUDY.replace("sample_cap: 12000", f"sample_cap: {rows}").replace(
        "  - name: twin\n", f"  - name: twin\n    prompts: {rows // 2}\n"
    )


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory) -> dict[int, dict[str, list[dict[str, str]]]]:
    out = {}
    for rows in (24_000, 10_000_000):
        proj = make_project(tmp_path_factory.mktemp(f"rows-{rows}"), _study(rows))
        res = proj.snakemake("-n", "--profile", str(PROFILE), "--slurm-no-account", cores=1)
        text = res.stdout + res.stderr
        assert res.returncode == 0, text[-3000:]
        out[rows] = jobs_by_rule(text)
    return out


def test_the_dry_run_requests_follow_the_registered_rows(dry_runs):
    rows_of = {"base": 1, "twin": 0.5, "heavy": 1}  # fractions of sample_cap (twin: its prompts)
    for cap, jobs in dry_runs.items():
        rows = {c: int(cap * f) for c, f in rows_of.items()}
        protocol = ("base", "twin", "heavy")  # the registered pairs name all three
        expect = {
            "transform": [rows[c] for c in rows for _ in range(2)],  # one scorer, two scales
            "transform_summary": [max(rows.values())] * 2,  # a condition at a time
            "fit": sorted(rows[c] for c in rows for _ in range(2)),
            "bulk": sorted(2 * rows[c] for c in rows),  # both scales of one condition
            "operating": [max(rows[c] for c in protocol)],
        }
        for stage, read in expect.items():
            got = sorted((int(j["mem_mb"]), int(j["runtime"])) for j in jobs[stage])
            cost = "transform" if stage == "transform_summary" else stage  # the same reading
            want = sorted((memory_mb(cost, n), runtime_min(cost, n)) for n in read)
            assert got == want, (cap, stage, got, want)
        for rule in ("gates", "sensitivity", "verdict", "report", "power"):
            assert {j["mem_mb"] for j in jobs[rule]} == {str(FLOOR_MB)}, rule  # the defaults
    small, large = dry_runs[24_000], dry_runs[10_000_000]
    assert {j["mem_mb"] for j in small["bulk"]} == {str(FLOOR_MB)}
    big_bulk = max(int(j["mem_mb"]) for j in large["bulk"])
    # 2 × 10⁷ rows (two scales of one condition) at the measured bytes per row, with headroom
    assert big_bulk >= HEADROOM * 2e7 * COSTS["bulk"].bytes_per_row / 2**20 > FLOOR_MB
