"""Fixtures for the attack corpus: the honest studies, registered, committed and run once."""

from __future__ import annotations

import pytest
from attack_project import (
    ATTACK_STUDY,
    IMPORT_STUDY,
    Project,
    make_project,
    registered_and_run,
    write_import_csv,
)


@pytest.fixture(scope="session")
def honest_run(tmp_path_factory) -> Project:
    """The attack study, frozen, committed and run; its honest verdict is KILL."""
    return registered_and_run(tmp_path_factory.mktemp("attack"), "attack", ATTACK_STUDY)


@pytest.fixture()
def proj(honest_run, tmp_path) -> Project:
    """A private copy of the honest run (git history included) to attack."""
    return honest_run.copy(tmp_path / "attack")


@pytest.fixture(scope="session")
def import_run(tmp_path_factory) -> Project:
    """The import study: its data file is written and committed with the registration."""
    root = tmp_path_factory.mktemp("imported")
    proj = make_project(root, "imported", IMPORT_STUDY)
    write_import_csv(root / "data" / "scores.csv")
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    proj.commit("Pre-register the imported study", "preregistrations", "data")
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


@pytest.fixture()
def imported(import_run, tmp_path) -> Project:
    return import_run.copy(tmp_path / "imported")
