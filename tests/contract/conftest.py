"""Fixtures for the attack corpus: the honest studies, registered, committed and run once."""

from __future__ import annotations

import shutil
from pathlib import Path

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
def honest_reproduction(honest_run, tmp_path_factory) -> tuple[Path, int, str]:
    """``audit --reproduce --keep`` of the honest run: the kept scratch project (the auditor's
    own re-run from the registration and the regenerated data), the exit code and the output.
    """
    kept = tmp_path_factory.mktemp("reproduction") / "scratch"
    code, out = honest_run.audit("--reproduce", "--keep", str(kept))
    return kept, code, out


@pytest.fixture()
def reproduce(honest_reproduction, tmp_path):
    """``audit --reproduce`` of an attacked copy whose registration and data are the honest
    run's: the auditor's re-run starts from a copy of the kept honest reproduction (mtimes
    kept), in which Snakemake finds every output up to date, so the comparison is the one a
    fresh scratch project would give, made by the same code from the same registration."""
    kept = honest_reproduction[0]

    def run(proj: Project) -> tuple[int, str]:
        scratch = tmp_path / "reproduction"
        shutil.copytree(kept, scratch, symlinks=True)
        return proj.audit("--reproduce", "--keep", str(scratch))

    return run


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
