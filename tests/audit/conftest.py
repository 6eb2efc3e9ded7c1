"""Fixtures for the review bundle: a cheap honest study, run once, and its bundle."""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_project import ATTACK_STUDY, Project, registered_and_run

#: the attack corpus's honest study with a smaller bootstrap: the demo's shape, seconds cheaper
BUNDLED_STUDY = ATTACK_STUDY.replace("bootstrap: {resamples: 300}", "bootstrap: {resamples: 100}")


@pytest.fixture(scope="session")
def bundled_run(tmp_path_factory) -> Project:
    """The study frozen, committed and run once; read-only (copy it to change it)."""
    return registered_and_run(tmp_path_factory.mktemp("bundled"), "attack", BUNDLED_STUDY)


@pytest.fixture(scope="session")
def honest_bundle(bundled_run, tmp_path_factory) -> Path:
    """``tailgate bundle`` of the honest run, written outside the project; read-only."""
    out = tmp_path_factory.mktemp("deposit") / "attack.tar.gz"
    code, text = bundled_run.cli("bundle", bundled_run.prereg, "-o", out)
    assert code == 0, text
    return out
