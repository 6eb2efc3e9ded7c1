"""The jobs of a workflow run: jobs per rule from the "Job stats" table Snakemake prints (the jobs
it plans), and, from the Snakefile's ``workflow`` object when the run ends, the jobs that
finished and the rule and log of each of some jobs. The run ledger (:mod:`tailgate.runs.ledger`)
stores what ran and the run summary (:mod:`tailgate.runs.summary`) prints it; test helpers count
planned jobs with the table's parser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

__all__ = ["finished_jobs", "job_entries", "job_stats"]


def job_stats(log: str) -> dict[str, int]:
    """Jobs per rule from the first "Job stats" table Snakemake printed in ``log`` (text)."""
    lines = log.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "Job stats:"), None)
    jobs: dict[str, int] = {}
    if start is None:
        return jobs
    for line in lines[start + 3 :]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit() or parts[0] == "total":
            break
        jobs[parts[0]] = int(parts[1])
    return jobs


def finished_jobs(workflow: Any) -> dict[str, int]:
    """Jobs per rule that finished in this run (Snakemake's DAG marks a job finished once its
    outputs are checked): a run stopped or failed part-way counts what ran, not what was
    planned."""
    return dict(sorted(Counter(job.rule.name for job in workflow.dag.finished_jobs).items()))


def _single(jobs: Iterable[Any]) -> list[Any]:
    """The jobs, a group job as its jobs."""
    return [j for job in jobs for j in (job.jobs if job.is_group() else [job])]


def job_entries(jobs: Iterable[Any]) -> list[dict[str, str]]:
    """Each job's rule and first log file ("" without one), in the order of their job ids."""
    return [
        {"rule": j.rule.name, "log": str(j.log[0]) if j.log else ""}
        for j in sorted(_single(jobs), key=lambda j: j.jobid)
    ]
