"""The ``judge`` scorer: a registered rubric sent to a local model, its reply parsed onto a grid.

ERRORQUAKE (2026) grades each response on an error-severity scale 0, 0.5, …, 4 with LLM judges
(Section 2, "Dual-judge scoring"; the rubric's anchors are its App. K). tailgate registers the
whole rule before any reply exists:

- ``judge``: the key of a local model under ``models`` (greedy decoding, ``max_new_tokens``
  [8]);
- ``rubric``: the prompt, with ``{prompt}`` and ``{completion}`` replaced by the graded row's;
- ``parse``: a regular expression whose first group is the grade [the first number in the
  reply], and ``grid`` {``step`` [0.5], ``top`` [4.0]}: a grade that is not a grid value is
  unparseable, as is a reply without a match;
- ``on_unparseable`` [error]: ``error`` refuses the shard naming the row and reply; ``drop``
  leaves the row unscored and lists it in ``<shard>.unparseable.json`` (counted, audited).

Several judges are several scorers; the severity analysis combines them.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tailgate.files.atomic import write_json
from tailgate.score.common import ScorerSpec, ScoringError

__all__ = [
    "DEFAULT_PARSE",
    "Grades",
    "judge_replies",
    "parse_grades",
    "unparseable_rows_path",
    "write_unparseable_rows",
]

#: the first number in the reply
DEFAULT_PARSE = r"(-?\d+(?:\.\d+)?)"


@dataclass(frozen=True)
class Grades:
    """Parsed grades (NaN where unparseable) and the rows that could not be parsed."""

    values: np.ndarray
    unparseable: np.ndarray  # row indices

    @property
    def parsed(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.values.size), self.unparseable)


def parse_grades(replies: list[str], fields: dict, scorer: str) -> Grades:
    """Each reply's grade by the registered ``parse`` rule, kept only if it is a grid value."""
    try:
        rx = re.compile(fields.get("parse", DEFAULT_PARSE))
    except re.error as exc:
        raise ScoringError(
            f"Scorer {scorer!r}: the registered parse rule is not a valid regular expression "
            f"({exc}). Fix the scorer's 'parse' in the pre-registration."
        ) from None
    grid = fields.get("grid") or {}
    step, top = float(grid.get("step", 0.5)), float(grid.get("top", 4.0))
    values = np.full(len(replies), math.nan)
    for i, reply in enumerate(replies):
        m = rx.search(reply)
        if m is None:
            continue
        try:
            v = float(m.group(1) if m.groups() else m.group(0))
        except (TypeError, ValueError):  # an empty or non-numeric capture
            continue
        k = round(v / step)
        if abs(k * step - v) < 1e-9 and 0 <= k * step <= top + 1e-9:
            values[i] = k * step
    return Grades(values, np.flatnonzero(np.isnan(values)))


def judge_replies(
    lm: Any, rubric: str, prompts: list[str], completions: list[str], *, max_new_tokens: int,
    batch_size: int,
) -> list[str]:  # fmt: skip
    """The judge's greedy reply to the rubric filled in for each row, in row order."""
    import torch

    from tailgate.generate.transformers_backend import _completions, _left_pad, sampling_config
    from tailgate.models import encode_prompts, length_sorted_batches

    texts = [
        rubric.replace("{prompt}", p).replace("{completion}", c)
        for p, c in zip(prompts, completions, strict=True)
    ]
    encoded = encode_prompts(lm, texts)
    config = sampling_config({"temperature": 0.0, "max_new_tokens": max_new_tokens}, lm)
    replies = [""] * len(texts)
    with torch.inference_mode():
        for idx in length_sorted_batches([len(e) for e in encoded], batch_size):
            input_ids, mask = _left_pad(
                [encoded[i] for i in idx], lm.tokenizer.pad_token_id, lm.device
            )
            out = lm.model.generate(
                input_ids=input_ids, attention_mask=mask, generation_config=config
            )
            decoded, _, _ = _completions(lm, out[:, input_ids.shape[1] :].cpu())
            for i, text in zip(idx, decoded, strict=True):
                replies[i] = text
    return replies


def unparseable_rows_path(out_path: str | os.PathLike[str]) -> Path:
    """``<out>.unparseable.json`` beside a score shard."""
    out = Path(out_path)
    return out.with_name(out.name.removesuffix(".parquet") + ".unparseable.json")


def write_unparseable_rows(
    out_path: str | os.PathLike[str],
    spec: ScorerSpec,
    condition: str,
    prompt_ids: np.ndarray,
    replies: list[str],
    grades: Grades,
) -> Path | None:
    """The ``drop`` sidecar: how many rows the judge's replies left ungraded, and which."""
    path = unparseable_rows_path(out_path)
    if spec.fields.get("on_unparseable", "error") != "drop":
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return None
    bad = grades.unparseable
    write_json(
        path,
        {
            "scorer": spec.name,
            "condition": condition,
            "on_unparseable": "drop",
            "rows": int(grades.values.size),
            "unparseable": int(bad.size),
            "prompt_ids": [int(prompt_ids[i]) for i in bad],
            "replies": [replies[i] for i in bad],
        },
    )
    return path


def check_unparseable(
    spec: ScorerSpec, condition: str, prompt_ids: np.ndarray, replies: list[str], grades: Grades
) -> None:
    """Under ``on_unparseable: error`` (the default) refuse a shard with an ungraded reply."""
    policy = spec.fields.get("on_unparseable", "error")
    if policy == "error" and grades.unparseable.size:
        i = int(grades.unparseable[0])
        raise ScoringError(
            f"Scorer {spec.name!r}: the judge's reply to prompt_id {int(prompt_ids[i])} of "
            f"condition {condition!r} has no grade on the registered grid ({replies[i]!r}; "
            f"{grades.unparseable.size} such row(s) in this shard). Fix: register "
            f"`on_unparseable: drop` on scorer {spec.name!r} to leave such rows unscored and "
            "counted (an amendment once the study is frozen), or change the rubric or parse rule "
            "before freezing."
        )
