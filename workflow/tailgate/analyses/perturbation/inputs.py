"""The artifacts a ``perturbation`` analysis reads: the severities of its scorer for every query
it names, read as yes/no answers, and, with an energy test, the embedded responses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.prereg.validated import Study

from ..base import severity_paths, shard_paths, sorted_values
from .spec import all_conditions, energy_conditions, settings

__all__ = ["inputs", "read_answers", "read_vectors"]


def inputs(
    spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
) -> dict[str, list[str]]:
    """The artifacts the analysis reads, by name, from the workflow's path templates."""
    st = settings(spec, study.data)
    out = {"severities": severity_paths(spec, layout, all_conditions(st))}
    if st["embedding"] is not None:
        tail = "/embeddings/{embedder}/{condition}/shard-{shard}.parquet"
        model = st["embedding"]["model"]
        out["embeddings"] = [
            path
            for c in energy_conditions(st)
            for path in shard_paths(study, layout, "embeddings", tail, embedder=model, condition=c)
        ]
    return out


def read_answers(st: Mapping[str, Any], paths: Sequence[str]) -> dict[str, np.ndarray]:
    """Each query's responses in prompt order as 1 ("yes": severity above the registered
    threshold) or 0."""
    from tailgate.data.severities import read_severities  # pyarrow loads with the first read

    yes: dict[str, np.ndarray] = {}
    for c, path in zip(all_conditions(st), paths, strict=True):
        ids, x = read_severities(path)
        yes[c] = (sorted_values(ids, x) > st["threshold"]).astype(np.int64)
    return yes


def read_vectors(st: Mapping[str, Any], paths: Sequence[str]) -> dict[str, np.ndarray]:
    """The embedded responses of each query of the energy test (its shards in order)."""
    from tailgate.data.score_files import read_embeddings

    conditions = energy_conditions(st)
    per = len(paths) // len(conditions)
    vectors: dict[str, np.ndarray] = {}
    for i, c in enumerate(conditions):
        _, x = read_embeddings(list(paths[i * per : (i + 1) * per]))
        vectors[c] = x
    return vectors
