"""Fixtures for the data backends, transform, diagnostics and report tests."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class FakeStudy:
    """The attributes a backend reads from a loaded pre-registration."""

    data: dict[str, Any]
    name: str = "unit"
    canonical_hash: str = field(default="0" * 64)
    # relative paths resolve against the project root of this (absent) file: the working folder
    path: Path = Path("preregistrations/unit.yaml")


BASE = {
    "seed": 20260615,
    "sample_cap": 4000,
    "conditions": [
        {
            "name": "clean",
            "prompts": 4000,
            "simulate": {
                "bulk": {"loc": -6.0, "scale": 1.0},
                "tail": {"xi": 0.0, "sigma": 1.0, "share": 0.05},
            },
        },
        {
            "name": "heavy",
            "simulate": {
                "bulk": {"loc": -6.0, "scale": 1.0},
                "tail": {"xi": 0.3, "sigma": 0.7, "share": 0.05},
            },
        },
    ],
    "data": {"backend": "simulate"},
    "generation": {"shards": 4},
    "scorers": [
        {"name": "toxicity", "kind": "column", "column": "simulated_score", "bounded": True}
    ],
    "transform": {"scales": ["probability", "logit"], "epsilon": 1.0e-6},
}


@pytest.fixture
def make_study():
    """Build a FakeStudy from BASE with top-level overrides."""

    def build(**overrides: Any) -> FakeStudy:
        data = copy.deepcopy(BASE)
        data.update(copy.deepcopy(overrides))
        return FakeStudy(data=data)

    return build
