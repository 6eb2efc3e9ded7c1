"""Analysis kind ``percentiles`` (Guo et al. (2025)): the modules of this folder (registration,
inputs, computation and criteria) as one :class:`~tailgate.analyses.base.AnalysisKind`."""

from __future__ import annotations

from ..base import FolderKind
from . import compute, criteria, inputs, spec

__all__ = ["PERCENTILES"]

PERCENTILES = FolderKind(
    "percentiles",
    {"spec": spec, "inputs": inputs, "compute": compute, "criteria": criteria},
    examples="'concordance', 'same_selection(mean, p50)', 'p50(step3)', 'z_p95(step3)'",
)
