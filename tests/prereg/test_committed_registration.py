"""Run only what is committed: peek-then-register needs a commit (or a labelled exploratory run).

A confirmatory run refuses (exit 3, at Snakemake's parse time and inside every stage) unless the
pre-registration and its lock are in ``HEAD`` exactly as on disk, compared by blob hash, so
``git update-index --skip-worktree`` cannot hide an uncommitted amendment. An exploratory run
(``--config exploratory=true``) is allowed anywhere, and is labelled in every record, in
``verdict.json``'s deviations, the terminal answer and the run ledger; the audit fails it, and
fails a later confirmatory run of the same study whose data were seen first.
"""

from __future__ import annotations

import json

import pytest
from attack_project import ATTACK_STUDY, make_project
from git_repo import git
from tailgate.errors import RefusalError


def _refused(res, *needles: str) -> None:
    assert res.returncode == 3, res.stdout[-2000:] + res.stderr[-2000:]
    for needle in needles:
        assert needle in res.stderr, (needle, res.stderr[-2000:])
    assert "Traceback" not in res.stderr


def test_a_frozen_but_uncommitted_registration_does_not_run(tmp_path) -> None:
    proj = make_project(tmp_path / "p", "attack", ATTACK_STUDY)
    git(proj.root, "init", "-q", "-b", "main")
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    res = proj.snakemake("-n", commit=False)
    _refused(res, "attack.yaml: not committed", "attack.lock.json: not committed", "git add")
    _refused(res, "exploratory=true")
    assert not proj.results.exists()


def test_outside_git_only_an_exploratory_run_is_allowed(tmp_path) -> None:
    proj = make_project(tmp_path / "p", "attack", ATTACK_STUDY)
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    _refused(proj.snakemake("-n", commit=False), "not in a git repository")
    res = proj.snakemake("-n", "--config", "exploratory=true", commit=False)
    assert res.returncode == 0, res.stderr[-2000:]


def test_an_uncommitted_amendment_is_refused_even_when_hidden_from_git_status(proj) -> None:
    proj.replace("tvar: 1.00", "tvar: 2.00")
    code, out = proj.cli("amend", proj.prereg, "--reason", "looser TVaR")
    assert code == 0, out
    _refused(proj.snakemake("-n", commit=False), "attack.lock.json: differs from HEAD")
    for f in (proj.prereg, proj.lock):
        git(proj.root, "update-index", "--skip-worktree", str(f.relative_to(proj.root)))
    assert not git(proj.root, "status", "--porcelain", "--", "preregistrations").strip()
    _refused(proj.snakemake("-n", commit=False), "--skip-worktree")


def test_every_stage_refuses_too(proj, monkeypatch) -> None:
    """A job started by hand (past the Snakefile) refuses in ``open_stage`` as well."""
    from tailgate.prereg.committed import MODE_ENV
    from tailgate.stages.common import open_stage

    proj.replace("tvar: 1.00", "tvar: 2.00")
    code, out = proj.cli("amend", proj.prereg, "--reason", "looser TVaR")
    assert code == 0, out
    monkeypatch.setenv(MODE_ENV, "confirmatory")
    with pytest.raises(RefusalError, match="differs from HEAD"):
        open_stage(proj.prereg, proj.results)
    monkeypatch.setenv(MODE_ENV, "exploratory")
    assert open_stage(proj.prereg, proj.results).study.name == "attack"


@pytest.mark.slow
def test_an_exploratory_run_is_labelled_everywhere_and_never_audits_clean(tmp_path) -> None:
    proj = make_project(tmp_path / "p", "attack", ATTACK_STUDY)
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    res = proj.snakemake("--config", "exploratory=true", commit=False)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "EXPLORATORY run" in res.stdout
    verdict = proj.verdict()
    assert verdict["deviations"][0]["what"].startswith("exploratory run")
    records = list((proj.results / "provenance").glob("*.json"))
    assert records and all(json.loads(r.read_text())["mode"] == "exploratory" for r in records)
    ledger = [json.loads(x) for x in (proj.results / "runs.jsonl").read_text().splitlines()]
    assert [r["mode"] for r in ledger] == ["exploratory"]
    assert "exploratory run" in (proj.results / "report.md").read_text()
    code, out = proj.cli("status", "attack")
    assert code == 0 and "EXPLORATORY run" in out, out
    code, out = proj.audit("--no-git")
    assert code == 4, out
    assert "made by an exploratory run" in out

    # committed afterwards: every job re-runs as confirmatory, but the data were seen first
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "EXPLORATORY" not in res.stdout
    assert not any(d["what"].startswith("exploratory") for d in proj.verdict()["deviations"])
    code, out = proj.audit()
    assert code == 4, out
    assert "run(s) 1 of this study were exploratory" in out
