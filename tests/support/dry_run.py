"""Reading a Snakemake dry run: each job's resources, by rule."""

from __future__ import annotations

import re


def jobs_by_rule(output: str) -> dict[str, list[dict[str, str]]]:
    """Each dry-run job's resources (``name=value`` pairs), by rule."""
    jobs: dict[str, list[dict[str, str]]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        head = re.match(r"(?:local)?rule (\w+):", block)
        res = re.search(r"^\s+resources: (.*)$", block, re.M)
        if head and res:
            pairs = dict(kv.split("=", 1) for kv in res.group(1).split(", "))
            jobs.setdefault(head.group(1), []).append(pairs)
    return jobs
