"""The review edits a user may make to what ``tailgate init --from-import`` writes, each an
(old, new) text replacement; they keep a test's run small (the stability scan's display
intervals are already Wald ones, with no resamples). With the project, CLI call and review
that the import tests (tests/authoring, tests/generate) share."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_call import tailgate as run
from wf_project import Project

FASTER = [
    ("    resamples: 10000 ", "    resamples: 200   "),
    ("    trials: 80\n", "    trials: 4\n"),
    ("  min_exceedances: 500 ", "  min_exceedances: 100 "),
    ("  band: [0.95, 0.96, 0.97, 0.98, 0.99]", "  band: [0.95, 0.97]"),
    (
        "  # operating_characteristics:",
        "  operating_characteristics: {trials: 20, resamples: 20}\n  #",
    ),
]


def tailgate(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run(*args, cwd=root)


def project(root: Path, name: str) -> Project:
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    return Project(root, name)


def review(proj: Project, worse: str | None = "higher") -> None:
    """The review edits a user makes after init: the smaller run of :data:`FASTER`, the bad
    tail of every scorer whose direction the file did not give (``worse``), and the explicit
    acceptance of the power the imported rows achieve (the value design suggests)."""
    for old, new in FASTER:
        proj.replace(old, new)
    if worse is not None:
        proj.prereg.write_text(proj.prereg.read_text().replace("worse: null}", f"worse: {worse}}}"))
    res = tailgate(proj.root, "design", proj.prereg, "--json")
    design = json.loads(res.stdout)["design"]
    if not design["cap_meets_bound"] or design["n_exc_planned"] < design["min_exceedances"]:
        accepted = design["supported_power"]
        proj.replace("accepted_power: null ", f"accepted_power: {accepted:g}".ljust(19))
