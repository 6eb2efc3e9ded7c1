"""Small pieces shared by the analysis kinds of ERRORQUAKE (2026), Guo et al. (2025) and
Acharyya et al. (2025): registration checks of conditions and scorers, JSON-safe numbers, and
the reading of a condition's scored rows."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .base import Problem

__all__ = [
    "condition_problems",
    "num",
    "scorer_problems",
    "seed_key",
    "severity_paths",
    "sorted_values",
    "unknown_args",
]


def num(value: Any) -> float | None:
    """A float for statistics JSON; None for NaN and infinities (JSON has neither)."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def condition_problems(
    names: Sequence[str], data: Mapping[str, Any], key: str = "conditions"
) -> list[Problem]:
    """A problem for every name in ``names`` (the spec's ``key`` list) that is not registered."""
    registered = [c["name"] for c in data["conditions"]]
    return [
        Problem(
            (key, i),
            f"'{c}' is not a registered condition",
            f"use names from 'conditions' ({', '.join(registered)})",
        )
        for i, c in enumerate(names)
        if c not in registered
    ]


def scorer_problems(spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
    """The spec's ``scorer`` must be registered and analysed on the spec's ``scale``."""
    scorers = {s["name"]: s for s in data["scorers"]}
    name = spec["scorer"]
    if name not in scorers:
        return [
            Problem(
                ("scorer",),
                f"'{name}' is not a registered scorer",
                f"use one of {', '.join(scorers)}",
            )
        ]
    scale = spec.get("scale", "identity")
    have = (
        [str(s) for s in data["transform"]["scales"]]
        if scorers[name].get("bounded", True)
        else ["identity"]
    )
    if scale not in have:
        return [
            Problem(
                ("scale",),
                f"scorer '{name}' is not analysed on the {scale} scale",
                f"use one of {', '.join(have)}",
            )
        ]
    return []


def severity_paths(
    spec: Mapping[str, Any], layout: Mapping[str, str], conditions: Sequence[str]
) -> list[str]:
    """The severities artifacts of the spec's scorer and scale (absent: identity)."""
    scale = spec.get("scale", "identity")
    return [
        layout["severities"].format(scorer=spec["scorer"], scale=scale, condition=c)
        for c in conditions
    ]


def unknown_args(args: Sequence[str], allowed: Sequence[str]) -> str | None:
    """Why a criterion's arguments are not among ``allowed`` conditions (None if they are)."""
    for a in args:
        if a not in allowed:
            return f"names '{a}', which is not among the analysis's conditions"
    return None


def seed_key(*parts: object) -> tuple[object, ...]:
    """The key of a random stream of an analysis: ("analysis", name, …) as the protocol asks."""
    return ("analysis", *parts)


def sorted_values(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Values in prompt-id order (rows of an artifact are not guaranteed sorted)."""
    return values[np.argsort(ids, kind="stable")]
