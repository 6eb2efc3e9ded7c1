"""The report job draws its figures with the processes its rule lends it (rules/report.smk:
the run's cores), never more than the CPUs it may use; the bytes are those of one process
(tailgate.report.raster, tests/report/test_figure_layout.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from tailgate.report import figures
from tailgate.report import stage as report_stage_module


@pytest.mark.parametrize(("lent", "cpus", "drawing"), [(1, 8, 1), (2, 8, 2), (4, 2, 2)])
def test_the_report_job_draws_with_the_processes_it_is_lent(
    monkeypatch: pytest.MonkeyPatch, lent: int, cpus: int, drawing: int
) -> None:
    seen: list[int] = []
    recorded: list[str] = []

    def render(*_args: Any, **_kwargs: Any) -> list[tuple[str, list[str]]]:
        seen.append(figures._PROCESSES.get())
        return [("report.html", [])]

    ctx = SimpleNamespace(study=None, record=lambda out, **_kw: recorded.append(out))
    monkeypatch.setattr(report_stage_module, "open_stage", lambda *_a: ctx)
    monkeypatch.setattr(report_stage_module, "render_report", render)
    monkeypatch.setattr(report_stage_module, "available_processes", lambda: cpus)
    report_stage_module.report_stage(
        "p.yaml", "results/p", "verdict.json", [], None, "r.html", "r.md", {}, processes=lent
    )
    assert seen == [drawing] and recorded == ["report.html"]
    assert figures._PROCESSES.get() == 1  # and one process again after the job's drawing
