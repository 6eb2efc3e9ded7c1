"""Analysis kind ``dominance`` (Nitsure et al. (2024)): the modules of this folder (registration,
inputs, computation and criteria) as one :class:`~tailgate.analyses.base.AnalysisKind`."""

from __future__ import annotations

from ..base import FolderKind
from . import compute, criteria, inputs, spec

__all__ = ["DOMINANCE"]

DOMINANCE = FolderKind(
    "dominance",
    {"spec": spec, "inputs": inputs, "compute": compute, "criteria": criteria},
    examples=(
        "'r_ssd(a, b)' (relative test, pass if <= 0), 'eps_fsd_ucb(a, b)', 'rank_ssd(a)'; prefix "
        "'portfolio:', 'aggregate:' or '<scorer>:' with several scorers"
    ),
    protocol_defaults=("alpha", "headline_scale", "bootstrap", "tvar_level"),
    takes_target=True,
)
