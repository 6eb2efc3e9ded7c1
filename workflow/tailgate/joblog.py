"""Snakemake's log of a workflow run, read: jobs per rule from its "Job stats" table and the jobs
that failed, with their log files. The run ledger (:mod:`tailgate.ledger`) stores both and the run
summary (:mod:`tailgate.summary`) prints them; test helpers count jobs with the same parser.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["job_stats", "jobs_from_log"]


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


def jobs_from_log(log: str | Path | None) -> tuple[dict[str, int], list[dict[str, str]]]:
    """Jobs per rule (:func:`job_stats`) and the failed jobs (rule, log) of a Snakemake log."""
    if log is None or not Path(log).is_file():
        return {}, []
    text = Path(log).read_text(errors="replace")
    lines = text.splitlines()
    failed: list[dict[str, str]] = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*Error in rule (\S+):", line)
        if not m:
            continue
        entry = {"rule": m.group(1), "log": ""}
        for follow in lines[i + 1 : i + 15]:
            lm = re.match(r"\s*log: (\S+)", follow)
            if lm:
                entry["log"] = lm.group(1)
                break
        failed.append(entry)
    return job_stats(text), failed
