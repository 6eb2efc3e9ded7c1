"""The artifacts a ``severity`` analysis reads: the severities of its scorer (and of the
secondary judge, when registered) for each of its conditions, and their grades."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.prereg.validated import Study

from ..base import severity_paths

__all__ = ["inputs", "read_grades"]


def inputs(
    spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
) -> dict[str, list[str]]:
    """The artifacts the analysis reads, by name, from the workflow's path templates."""
    out = {"severities": severity_paths(spec, layout, spec["conditions"])}
    if spec.get("secondary") is not None:
        second = {**spec, "scorer": spec["secondary"]}
        out["secondary"] = severity_paths(second, layout, spec["conditions"])
    return out


def read_grades(paths: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(prompt ids, grades) of each condition's severities artifact."""
    from tailgate.data.severities import read_severities  # pyarrow loads with the first read

    return [read_severities(p) for p in paths]
