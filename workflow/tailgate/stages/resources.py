"""What a job asks of a cluster, as a function of the rows it reads.

The jobs whose cost grows with the data — ``transform`` (every condition of a scorer), ``fit``
and ``bulk`` (one condition) and ``operating`` (the whole-procedure simulation at the registered
prompts per condition) — request memory and time from the registered rows (a condition's
``prompts``) instead of a fixed amount, so that a cluster profile holds at 10⁷ rows per condition
what it holds at 10⁴. The rules pass these as Snakemake resources (``mem_mb``, ``runtime``);
executors that schedule by them (SLURM) request them, a local run ignores them unless
``--resources`` caps them. Nothing here enters a pre-registration or a result.

The per-row costs are peak resident memory and CPU-seconds measured through Snakemake
(``tests/benchmarks/bench_scale.py``; the table in ``workflow/docs/benchmarks.md``): a request is
``HEADROOM`` times the measured fixed part plus rows times the per-row part, never below the
floors (the profile's defaults), and both grow with the attempt, as the profile's own defaults
do, so that a job killed for memory or time is retried with more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["COSTS", "FLOOR_MB", "FLOOR_MINUTES", "HEADROOM", "Cost", "memory_mb", "runtime_min"]

#: the profile's default request (workflow/profiles/slurm): a small study asks exactly this
FLOOR_MB = 4000
FLOOR_MINUTES = 60
#: requests over the measured cost: room for another machine's allocator, libraries and speed
HEADROOM = 2.0


@dataclass(frozen=True)
class Cost:
    """A job's measured cost: ``base_mb`` + ``bytes_per_row`` × rows of peak resident memory
    and ``cpu_s_per_row`` × rows (plus start-up) CPU-seconds, at the registered design's
    defaults (B = 10,000 bootstrap resamples, one thread)."""

    base_mb: float
    bytes_per_row: float
    cpu_s_per_row: float


#: measured per stage (rows: the registered rows the job reads; ``bulk``: a condition's rows times
#: its scales, every one of which it bootstraps), the largest of the runs at 10⁵ to 10⁷ rows per
#: condition (fit and operating: 10⁷ through SLURM); workflow/docs/benchmarks.md has the runs
COSTS: dict[str, Cost] = {
    "transform": Cost(base_mb=200, bytes_per_row=60, cpu_s_per_row=2e-6),
    "fit": Cost(base_mb=280, bytes_per_row=345, cpu_s_per_row=93e-6),
    "bulk": Cost(base_mb=160, bytes_per_row=340, cpu_s_per_row=60e-6),
    "operating": Cost(base_mb=310, bytes_per_row=615, cpu_s_per_row=32e-6),
}


def _check(stage: str, rows: int, attempt: int) -> Cost:
    if stage not in COSTS:
        raise KeyError(f"no measured cost for stage {stage!r} (known: {', '.join(COSTS)})")
    if rows < 0 or attempt < 1:
        raise ValueError(f"rows ({rows}) must be >= 0 and attempt ({attempt}) >= 1")
    return COSTS[stage]


def memory_mb(stage: str, rows: int, attempt: int = 1) -> int:
    """Memory (MB) for a job of ``stage`` reading ``rows`` rows, on its ``attempt``-th try:
    ``attempt`` × max(floor, headroom × measured peak), rounded up to 500 MB."""
    cost = _check(stage, rows, attempt)
    need = HEADROOM * (cost.base_mb + rows * cost.bytes_per_row / 2**20)
    return attempt * max(FLOOR_MB, 500 * math.ceil(need / 500))


def runtime_min(stage: str, rows: int, attempt: int = 1) -> int:
    """Time limit (minutes) for a job of ``stage`` reading ``rows`` rows, on its
    ``attempt``-th try: ``attempt`` × max(floor, headroom × measured CPU time)."""
    cost = _check(stage, rows, attempt)
    need = HEADROOM * rows * cost.cpu_s_per_row / 60
    return attempt * max(FLOOR_MINUTES, math.ceil(need))
