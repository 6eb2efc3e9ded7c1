"""The ``regex`` scorer: a registered regular expression turns a reply into a binary response.

Acharyya et al. (2025) works with binary responses (its motivating example asks a model to answer
"yes" or
"no"); the registered ``pattern`` (Python ``re`` syntax, searched anywhere in the completion;
``ignore_case`` absent = false) gives 1.0 when it matches and 0.0 otherwise. The rule is frozen
with the study, so which replies count as "yes" is decided before any reply exists.
"""

from __future__ import annotations

import re

import numpy as np

from tailgate.score.common import ScoringError

__all__ = ["compile_pattern", "regex_scores"]


def compile_pattern(fields: dict, scorer: str) -> re.Pattern[str]:
    """The scorer's compiled ``pattern``; a clear error naming the scorer if it is invalid."""
    pattern = fields.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ScoringError(
            f"Scorer {scorer!r} of kind 'regex' registers no 'pattern'. Register the regular "
            "expression that marks a 'yes' reply, e.g. pattern: '^\\s*yes\\b'."
        )
    try:
        return re.compile(pattern, re.IGNORECASE if fields.get("ignore_case", False) else 0)
    except re.error as exc:
        raise ScoringError(
            f"Scorer {scorer!r}: the registered pattern {pattern!r} is not a valid regular "
            f"expression ({exc}). Fix the pattern in the pre-registration."
        ) from None


def regex_scores(texts: list[str], fields: dict, scorer: str) -> np.ndarray:
    """1.0 where the pattern is found in the text, else 0.0, in input order."""
    rx = compile_pattern(fields, scorer)
    return np.fromiter((1.0 if rx.search(t) else 0.0 for t in texts), np.float64, len(texts))
