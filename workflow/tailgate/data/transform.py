"""Severity scales: identity, probability and logit with a registered clipping ε.

Section 6.2 of Zhou (2026) fixes bounded-support contamination of probability scores with the
logit map s' = log(s / (1 - s)). Scores of exactly 0 or 1 (float32 classifier heads saturate)
have no finite logit, so the pre-registration fixes a clipping ε (``transform.epsilon``): scores
are clipped to [ε, 1 - ε] first, and the number of clipped values is recorded so that a report
can show how much of the tail sits on the clip (a large count means ε is part of the result).

Scales:

* ``identity`` — severities as scored (unbounded scorers such as token NLL).
* ``probability`` — identity for bounded scores; checks they lie in [0, 1].
* ``logit`` — clip to [ε, 1 - ε], then ``scipy.special.logit``.

**The bad tail.** Severities are oriented so that larger is worse: the protocol's GPD fits and
every analysis study the upper tail of the severities, which is the tail of the worse outcomes.
A scorer registered ``worse: lower`` (a log-likelihood, an accuracy:
:func:`tailgate.prereg.study.worse_of`) is turned round before its scale is applied: ``-s`` on
the identity scale, ``1 - s`` on the probability scale and ``logit(1 - s)`` (= ``-logit(s)``,
the same clipping) on the logit scale. The orientation is a reflection, so every statistic of the
bad tail (exceedances, ξ̂, TVaR) is that of the scores' low tail read with the sign turned.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from scipy.special import logit

from tailgate.errors import InputError
from tailgate.files.atomic import write_json, write_parquet
from tailgate.files.parquet import read_parquet

__all__ = [
    "SCALES",
    "TransformError",
    "TransformResult",
    "TransformSummary",
    "transform_scores",
    "write_severities",
]

SCALES = ("identity", "probability", "logit")


class TransformError(InputError, ValueError):
    """Scores or transform settings that cannot be put on the requested scale (exit code 2)."""


@dataclass(frozen=True)
class TransformSummary:
    """What a transform did: scale, ε and how many values were clipped at each end."""

    scale: str
    epsilon: float
    n: int
    n_clipped_low: int
    n_clipped_high: int
    worse: str = "higher"

    def to_dict(self) -> dict[str, Any]:
        """Plain values; ``worse`` only where the scores were turned round (``lower``), so a
        study registered before the field existed writes the same bytes."""
        out: dict[str, Any] = {
            "scale": self.scale,
            "epsilon": self.epsilon,
            "n": self.n,
            "n_clipped_low": self.n_clipped_low,
            "n_clipped_high": self.n_clipped_high,
        }
        if self.worse != "higher":
            out["worse"] = self.worse
        return out


@dataclass(frozen=True)
class TransformResult:
    """Severities on ``summary.scale`` (``values``) and the :class:`TransformSummary`."""

    values: np.ndarray
    summary: TransformSummary

    @property
    def n_clipped_low(self) -> int:
        return self.summary.n_clipped_low

    @property
    def n_clipped_high(self) -> int:
        return self.summary.n_clipped_high


def _check_epsilon(epsilon: float) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
        raise TransformError(
            f"Field `transform.epsilon` must be a number in (0, 0.5), got {epsilon!r}. Fix: e.g. "
            f"`epsilon: 1.0e-6`."
        )
    if not (math.isfinite(epsilon) and 0.0 < epsilon < 0.5):
        raise TransformError(
            f"Field `transform.epsilon` must lie in (0, 0.5), got {epsilon!r}. Fix: e.g. "
            f"`epsilon: 1.0e-6` (scores are clipped to [ε, 1 - ε] before the logit)."
        )
    return float(epsilon)


def transform_scores(
    scores: np.ndarray,
    scale: str,
    epsilon: float = 1e-6,
    *,
    source: str = "scores",
    worse: str = "higher",
) -> TransformResult:
    """Put ``scores`` on ``scale`` (one of :data:`SCALES`); ``source`` names them in errors.

    ``worse``: the scorer's bad tail (``higher`` or ``lower``); with ``lower`` the severities
    are the scores turned round first (module docstring), so that larger is always worse.
    For ``logit``, values below ε or above 1 - ε (of the oriented probabilities) are clipped to
    [ε, 1 - ε] and counted in ``n_clipped_low`` / ``n_clipped_high``; values equal to ε or
    1 - ε are not counted.
    """
    if worse not in ("higher", "lower"):
        raise TransformError(
            f"{source}: the scorer's bad tail `worse` is {worse!r}. Fix: register `worse: higher` "
            f"(larger scores are worse outcomes) or `worse: lower`."
        )
    result = _on_scale(scores, scale, epsilon, source)
    if worse == "higher":
        return result
    # -s, 1 - p, and logit(1 - p) = -logit(p) with the clipped ends swapped (only the logit
    # scale clips, so the swap leaves the other scales' zero counts as they are)
    values = 1.0 - result.values if scale == "probability" else -result.values
    s = result.summary
    summary = TransformSummary(s.scale, s.epsilon, s.n, s.n_clipped_high, s.n_clipped_low, "lower")
    return TransformResult(values, summary)


def _on_scale(scores: np.ndarray, scale: str, epsilon: float, source: str) -> TransformResult:
    """``scores`` on ``scale``, as the scorer wrote them (:func:`transform_scores`)."""
    if scale not in SCALES:
        raise TransformError(
            f"Scale {scale!r} (field `transform.scales`) is unknown. Fix: use one of "
            f"{', '.join(SCALES)}."
        )
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise TransformError(f"{source}: expected a 1-D array of scores, got shape {values.shape}.")
    finite = np.isfinite(values)
    if not finite.all():
        first = int(np.flatnonzero(~finite)[0])
        raise TransformError(
            f"{source}: {int((~finite).sum())} score(s) are NaN or infinite (first at row "
            f"{first + 1}). Fix: drop or rescore those rows before transforming."
        )
    n = int(values.size)
    if scale == "identity":
        return TransformResult(values.copy(), TransformSummary(scale, 0.0, n, 0, 0))
    outside = (values < 0.0) | (values > 1.0)
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise TransformError(
            f"{source}: scale {scale!r} needs probability scores in [0, 1], but "
            f"{int(outside.sum())} lie outside (first at row {first + 1}: {values[first]!r}). "
            f"Fix: register the scorer with `bounded: false` and use the `identity` scale."
        )
    if scale == "probability":
        return TransformResult(values.copy(), TransformSummary(scale, 0.0, n, 0, 0))
    eps = _check_epsilon(epsilon)
    low = int((values < eps).sum())
    high = int((values > 1.0 - eps).sum())
    clipped = np.clip(values, eps, 1.0 - eps)
    return TransformResult(logit(clipped), TransformSummary(scale, eps, n, low, high))


def write_severities(
    scores: str | os.PathLike[str] | pa.Table,
    out_path: str | os.PathLike[str],
    *,
    scale: str,
    epsilon: float,
    score_column: str = "score",
    summary_path: str | os.PathLike[str] | None = None,
    source: str | None = None,
    worse: str = "higher",
) -> TransformSummary:
    """Put scores (``prompt_id`` + ``score_column``: a table, or a file holding one) on
    ``scale`` and write ``prompt_id, severity`` (oriented by ``worse``: larger is worse).

    The output is sorted by ``prompt_id``; ``summary_path`` (optional) receives the
    :class:`TransformSummary` as JSON. Both files are written atomically. ``source`` names the
    scores in messages (default: the file).
    """
    table = scores if isinstance(scores, pa.Table) else read_parquet(scores)
    source = source or str(scores if not isinstance(scores, pa.Table) else "scores")
    for column in ("prompt_id", score_column):
        if column not in table.column_names:
            raise TransformError(
                f"Scores {source} have no column {column!r} (they have "
                f"{', '.join(table.column_names)}). Fix: point the transform at score shards, "
                f"or set the registered scorer's column name."
            )
    table = table.sort_by("prompt_id")
    values = table.column(score_column).to_numpy(zero_copy_only=False).astype(np.float64)
    result = transform_scores(values, scale, epsilon, source=source, worse=worse)
    out = pa.table(
        {
            "prompt_id": table.column("prompt_id").cast(pa.int64()),
            "severity": pa.array(result.values, pa.float64()),
        }
    )
    write_parquet(out_path, out)
    if summary_path is not None:
        write_json(summary_path, result.summary.to_dict())
    return result.summary
