"""Shared fixtures: the repository root and the shipped demo pre-registration."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (holds Snakefile, preregistrations/, workflow/)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def demo_prereg_path() -> Path:
    """preregistrations/protocol-demo.yaml of the repository (frozen; its lock is committed)."""
    return REPO_ROOT / "preregistrations" / "protocol-demo.yaml"


@pytest.fixture()
def demo_study(demo_prereg_path):
    """The loaded demo study (validated, defaults applied)."""
    from tailgate.prereg import load

    return load(demo_prereg_path)
