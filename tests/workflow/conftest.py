"""Fixtures for the protocol-workflow tests (helpers in :mod:`wf_project`)."""

from __future__ import annotations

import shutil

import pytest
from wf_project import Project, make_project


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Project:
    """The small study, frozen and run once through Snakemake (--cores 2); read-only."""
    proj = make_project(tmp_path_factory.mktemp("small"))
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    proj.first_run = res  # what the run printed
    return proj


@pytest.fixture()
def small_copy(small_run, tmp_path) -> Project:
    """A private copy of the finished small run (to edit, amend or tamper with)."""
    dest = tmp_path / "copy"
    shutil.copytree(small_run.root, dest, symlinks=True)
    return Project(dest)
