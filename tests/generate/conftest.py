"""Fixtures for the data backends, transform, diagnostics and report tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from tailgate.prereg.validated import Study


def fake_study(data: dict[str, Any], name: str = "unit") -> Study:
    """A loaded pre-registration of ``data`` as the backends read it (not validated; relative
    paths resolve against the working folder)."""
    return Study(Path("preregistrations/unit.yaml"), {"study": name, **data}, "0" * 64, "0" * 64)


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
    """Build a study from BASE with top-level overrides."""

    def build(**overrides: Any) -> Study:
        data = copy.deepcopy(BASE)
        data.update(copy.deepcopy(overrides))
        return fake_study(data)

    return build
