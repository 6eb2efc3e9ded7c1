"""Analysis kind ``perturbation`` (Acharyya et al. (2025)): the modules of this folder
(registration, inputs, computation and criteria) as one
:class:`~tailgate.analyses.base.AnalysisKind`."""

from __future__ import annotations

from ..base import FolderKind
from . import compute, criteria, inputs, spec

__all__ = ["PERTURBATION"]

PERTURBATION = FolderKind(
    "perturbation",
    {"spec": spec, "inputs": inputs, "compute": compute, "criteria": criteria},
    examples="'reject(t)' (1 when the composite test rejects), 'pvalue(t)', 'size', "
    "'average_power'",
    protocol_defaults=("alpha",),
)
