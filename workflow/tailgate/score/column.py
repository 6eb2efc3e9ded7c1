"""The ``column`` scorer: severities already present in the generations table.

For imported data that arrives with its own scores; the column is read as float64 and
validated like any other scorer's output (finite, and within [0, 1] when bounded).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.score.common import ScoringError

__all__ = ["column_scores"]


def column_scores(
    table: pa.Table, column: str, *, scorer: str, condition: str, path: Any
) -> np.ndarray:
    """The ``column`` values as float64; nulls and non-numeric types are refused by row."""
    values = table.column(column)
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
        raise ScoringError(
            f"Scorer {scorer!r} reads column {column!r} of {str(path)!r} (condition "
            f"{condition!r}), but it holds {values.type}, not numbers. Register a numeric column."
        )
    if values.null_count:
        row = next(i for i, v in enumerate(values.is_null().to_pylist()) if v)
        pid = table.column("prompt_id")[row].as_py()
        raise ScoringError(
            f"Scorer {scorer!r}: row {row} (prompt_id {pid}) of condition {condition!r} in "
            f"{str(path)!r} has no value in column {column!r}. Fill it or remove the row."
        )
    return values.cast(pa.float64()).to_numpy()
