"""Which jobs of a study load a registered model (:mod:`tailgate.models`).

The workflow marks them (the ``models`` resource of the ``generate``, ``score`` and ``embed``
rules) so that a local run forks them from a server that has already imported PyTorch and
transformers (:mod:`tailgate.runtime.forkserver`); the mark decides nothing else: a marked job that
loads no model runs as it would in its own process, and an unmarked one imports the model stack
itself.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MODEL_SCORERS", "loads_model", "study_loads_models"]

#: scorer kinds that run a model (``profanity``, ``regex`` and ``column`` do not)
MODEL_SCORERS = frozenset({"detoxify", "token_nll", "judge"})


def loads_model(study: Any, stage: str, scorer: str | None = None) -> bool:
    """Whether a job of ``stage`` (``generate``, ``score`` of ``scorer``, ``embed``) loads one."""
    if stage == "generate":
        return study.backend == "transformers"
    if stage == "score":
        kinds = {s["name"]: s["kind"] for s in study.scorers()}
        return kinds.get(scorer) in MODEL_SCORERS
    return stage == "embed"


def study_loads_models(study: Any) -> bool:
    """Whether any job of the study loads a model (a run then starts the model server)."""
    return (
        bool(study.models())
        or loads_model(study, "generate")
        or any(s["kind"] in MODEL_SCORERS for s in study.scorers())
    )
