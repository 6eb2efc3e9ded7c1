"""The artifacts a ``dominance`` analysis reads: the severities of each of its scorers for each
of its conditions, oriented so that larger is safer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.prereg.validated import Study

from .spec import settings

__all__ = ["inputs", "read_samples"]


def inputs(
    spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
) -> dict[str, list[str]]:
    """The artifacts the analysis reads, by name, from the workflow's path templates."""
    st = settings(spec, study.data)
    return {
        "severities": [
            layout["severities"].format(scorer=s, scale=st["scale"][s], condition=c)
            for s in st["scorers"]
            for c in st["conditions"]
        ]
    }


def read_samples(st: dict[str, Any], paths: Sequence[str]) -> dict[str, list[np.ndarray]]:
    """Each scorer's severities per condition, in prompt order and negated (so that "dominates"
    means "safer"); refused where the conditions must share prompts and do not."""
    from tailgate.data.severities import read_severities  # pyarrow loads with the first read

    it = iter(paths)
    by_scorer: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for s in st["scorers"]:
        by_scorer[s] = [read_severities(next(it)) for _ in st["conditions"]]
    aligned_needed = st["resampling"] == "paired" or len(st["scorers"]) > 1
    ref_ids = None
    out: dict[str, list[np.ndarray]] = {}
    for s, rows in by_scorer.items():
        sign = -1.0 if st["orientation"][s] == "higher_is_worse" else 1.0
        vals = []
        for c, (ids, x) in zip(st["conditions"], rows, strict=True):
            order = np.argsort(ids, kind="stable")
            if aligned_needed:
                if ref_ids is None:
                    ref_ids = ids[order]
                elif not np.array_equal(ids[order], ref_ids):
                    why = (
                        "resampling is 'paired'"
                        if st["resampling"] == "paired"
                        else "a portfolio joins the scorers' rows on prompt"
                    )
                    raise InputError(
                        f"dominance analysis: condition '{c}' (scorer '{s}') is not on the "
                        f"same prompts as the first condition, but {why}. Fix: register "
                        "conditions on the same prompts, or 'resampling: independent' with "
                        "a single scorer (an amendment if frozen)."
                    )
            vals.append(sign * x[order])
        out[s] = vals
    return out
