"""Fixtures of the analyses tests: the small workflow study with a dominance analysis."""

from __future__ import annotations

import shutil

import pytest
from wf_project import SMALL_STUDY, Project, make_project

#: base and twin share their truth; heavy has a GPD(0.4, 0.6) tail of the same share and mean
#: excess, so its far tail is heavier: base and twin are almost first-order safer than heavy
#: (the means are equal, so second order is decided by noise in the bulk and is not a criterion).
ANALYSES = """\
analyses:
  ranking:
    kind: dominance
    conditions: [base, twin, heavy]
    scorers: [tox]
    scale: logit
    resamples: 200
    eps0: [0.25]
    criteria:
      - {name: base-safer-than-heavy, statistic: "r_fsd(base, heavy)", comparison: "<=",
         threshold: 0.0}
      - {name: heavy-not-safer, statistic: "r_fsd(heavy, base)", comparison: "<=",
         threshold: 0.0}
      - {name: heavy-ranked-last, statistic: "rank_fsd(heavy)", comparison: "==", threshold: 3,
         borderline: 0.5}
"""


@pytest.fixture(scope="session")
def analysis_run(tmp_path_factory) -> Project:
    """The small study with a dominance analysis, run once through Snakemake; read-only."""
    proj = make_project(tmp_path_factory.mktemp("analyses"), SMALL_STUDY + ANALYSES)
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


@pytest.fixture()
def analysis_copy(analysis_run, tmp_path) -> Project:
    """A private copy of the finished run (to edit or tamper with)."""
    dest = tmp_path / "copy"
    shutil.copytree(analysis_run.root, dest, symlinks=True)
    return Project(dest)
