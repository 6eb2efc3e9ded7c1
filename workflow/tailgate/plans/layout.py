"""The results layout: :data:`LAYOUT`, the one place the path of every artifact a plan's
stages write is written down, relative to the plan's folder (``results/<study>``, or its
``registered/`` folder for the registered plan's own jobs), the study's design and outcome
(power, verdict, report) among them, which only the main folder holds. The rules write to its
patterns (:meth:`tailgate.plans.branch.Plan.pattern`); the stages, the report, the audit and the
commands read through :class:`Layout`."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path

__all__ = ["FIGURES", "LAYOUT", "WRITER", "Layout", "wildcards_of", "writer_of"]

#: artifact kind -> (the stage, i.e. rule, that writes it, its files relative to the plan's folder)
_ARTIFACTS: dict[str, tuple[str, str]] = {
    "prompts": ("select_prompts", "prompts.parquet"),
    "prompts_digest": ("select_prompts", "prompts.digest.json"),
    "generations": ("generate", "generations/{condition}/shard-{shard}.parquet"),
    "scores": ("score", "scores/{scorer}/{condition}/shard-{shard}.parquet"),
    "embeddings": ("embed", "embeddings/{embedder}/{condition}/shard-{shard}.parquet"),
    "severities": ("transform", "severities/{scorer}/{scale}/{condition}.parquet"),
    "transform_summary": ("transform_summary", "severities/{scorer}/{scale}/transform.json"),
    "fits": ("fit", "fits/{scorer}/{scale}/{condition}.json"),
    "bulk": ("bulk", "bulk/{scorer}/{condition}.parquet"),
    "gates": ("gates", "gates/{scorer}/{scale}.json"),
    "sensitivity": ("sensitivity", "sensitivity/{scorer}/{scale}.json"),
    # an analysis's statistics, then the statistics graded against its registered criteria
    "measures": ("analysis", "analyses/{analysis}/measures.json"),
    "analysis": ("grade", "analyses/{analysis}/statistics.json"),
    # the study's design and outcome, written once, in the main folder
    "power": ("power", "power.json"),
    "operating": ("operating", "operating.json"),
    "verdict": ("verdict", "verdict.json"),
    "report": ("report", "report.html"),
    "report_md": ("report", "report.md"),
    "figure": ("report", "figures/{figure}.png"),
    # what a figure plots (:mod:`tailgate.report.content`): the audit compares these
    "figure_content": ("report", "figures/{figure}.json"),
}
#: the standalone figures of a study that registers the protocol (``figure``, ``figure_content``)
FIGURES = ("power", "stability")
LAYOUT: dict[str, str] = {kind: pattern for kind, (_, pattern) in _ARTIFACTS.items()}
WRITER: dict[str, str] = {kind: stage for kind, (stage, _) in _ARTIFACTS.items()}


def wildcards_of(kind: str, rel: str) -> dict[str, str] | None:
    """The wildcards of ``rel`` (a path relative to a plan's folder) as a file of artifact
    ``kind``; None when it is not one."""
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(LAYOUT[kind]))
    found = re.fullmatch(pattern, rel)
    return None if found is None else found.groupdict()


def writer_of(rel: str) -> str | None:
    """The stage (rule) that writes ``rel``, a path relative to a plan's folder; None for a
    file of no artifact kind."""
    return next((WRITER[kind] for kind in LAYOUT if wildcards_of(kind, rel) is not None), None)


class Layout:
    """The files of one results folder ``root``, each from its :data:`LAYOUT` pattern."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def file(self, kind: str, **wildcards: object) -> Path:
        """The file of artifact ``kind`` for one job's wildcards."""
        return self.root / LAYOUT[kind].format(**wildcards)

    def every(self, kind: str) -> list[Path]:
        """Every file of artifact ``kind`` present under the folder, sorted."""
        return sorted(self.root.glob(LAYOUT[kind].format_map(defaultdict(lambda: "*"))))

    def folder(self, kind: str) -> Path:
        """The folder that holds every file of artifact ``kind``."""
        return self.root / LAYOUT[kind].split("/")[0]

    def fits(self, scorer: str, scale: str, condition: str) -> Path:
        return self.file("fits", scorer=scorer, scale=scale, condition=condition)

    def bulk(self, scorer: str, condition: str) -> Path:
        return self.file("bulk", scorer=scorer, condition=condition)

    def gates(self, scorer: str, scale: str) -> Path:
        return self.file("gates", scorer=scorer, scale=scale)

    def analysis(self, name: str) -> Path:
        return self.file("analysis", analysis=name)
