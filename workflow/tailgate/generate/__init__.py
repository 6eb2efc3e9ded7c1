"""Generation backends: ``simulate``, ``transformers`` and ``import`` (DESIGN: "The DAG").

Every backend implements the same shard interface (workflow/README.md)::

    generate_shard(study, condition, shard, out_path, *, options) -> None

and writes one Parquet table per (condition, shard) with the columns ``prompt_id``, ``prompt``,
``completion``, ``prompt_tokens``, ``completion_tokens``, ``finish_reason`` plus backend columns.
Shard ``k`` of ``K`` holds the prompt positions ``p`` with ``p % K == k``, one rule for every
backend: :func:`tailgate.generate.shards.shard_indices`.

Backends are imported lazily so that the ``transformers`` backend's heavy dependencies are only
loaded when a study uses it.
"""

from __future__ import annotations

import os
from typing import Any

from .spec import BACKENDS, DataInputError, condition_spec

__all__ = ["BACKENDS", "DataInputError", "condition_spec", "generate_shard"]


def generate_shard(
    study: Any,
    condition: str,
    shard: int,
    out_path: str | os.PathLike[str],
    *,
    options: dict[str, Any],
) -> None:
    """Write shard ``shard`` of ``condition`` to ``out_path`` with the study's registered backend.

    Dispatches on ``study.backend``: ``simulate`` →
    :func:`tailgate.generate.simulate.generate_shard`, ``import`` →
    :func:`tailgate.generate.importer.generate_shard`, ``transformers`` →
    ``tailgate.generate.transformers_backend.generate_shard``.
    """
    backend = study.backend
    if backend == "simulate":
        from .simulate import generate_shard as impl
    elif backend == "import":
        from .importer import generate_shard as impl
    elif backend == "transformers":
        from .transformers_backend import generate_shard as impl
    else:
        raise DataInputError(
            f"Field `data.backend` of study {study.name!r} is {backend!r}, which is not a "
            f"generation backend. Fix: set it to one of {', '.join(BACKENDS)}."
        )
    impl(study, condition, shard, out_path, options=options)
