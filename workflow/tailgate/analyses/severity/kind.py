"""Analysis kind ``severity`` (ERRORQUAKE (2026)): the modules of this folder (registration,
inputs, computation and criteria) as one :class:`~tailgate.analyses.base.AnalysisKind`."""

from __future__ import annotations

from ..base import FolderKind
from . import compute, criteria, inputs, spec

__all__ = ["SEVERITY"]

SEVERITY = FolderKind(
    "severity",
    {"spec": spec, "inputs": inputs, "compute": compute, "criteria": criteria},
    examples="'disjoint_pairs', 'b(a)', 'delta_b_pvalue(a, b)', 'per_million(a, 3.0)'",
)
