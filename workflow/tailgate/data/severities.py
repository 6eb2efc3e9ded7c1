"""Reading a severities artifact, ``severities/<scorer>/<scale>/<condition>.parquet``.

The transform stage writes one per scorer, scale and condition: the prompt ids and each row's
severity (larger is worse). The protocol's stages and every analysis kind read it through
:func:`read_severities`, which names the file and the fix when it cannot be read.
"""

from __future__ import annotations

import os

import numpy as np

from tailgate.errors import InputError
from tailgate.files.parquet import read_parquet

__all__ = ["read_severities"]


def read_severities(path: str | os.PathLike[str]) -> tuple[np.ndarray, np.ndarray]:
    """(prompt_id, severity) of a ``severities/<scorer>/<scale>/<condition>.parquet`` file."""
    try:
        table = read_parquet(path, columns=["prompt_id", "severity"])
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(
            f"{path}: cannot read the severities table (columns prompt_id, severity): {exc}. "
            "Fix: delete it and re-run the transform stage."
        ) from None
    ids = table.column("prompt_id").to_numpy()
    x = table.column("severity").to_numpy().astype(np.float64)
    return ids, x
