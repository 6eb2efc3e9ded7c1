"""The contract, git read as a skeptical reviewer: a side branch merged with ``-s ours``, a moved
``preregistrations/`` with a link at the old place, a shallow clone, an edit hidden with
``skip-worktree`` or ``assume-unchanged``, an entry in no commit, a backdated commit. Each fails
the audit (exit 4) naming the commit or file, and the honest history still passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from attack_project import Project, forge_fresh_lock, head_commit
from git_repo import git

AUDIT_FAILED = 4
LOOSER = ("band_rule: all", "band_rule: any")


def test_a_side_branch_merged_with_ours_is_seen(proj):
    """A fresh lock committed on a side branch, merged with ``git merge -s ours`` (the main line
    never shows it): the walk over every parent finds the rival chain."""
    git(proj.root, "checkout", "-q", "-b", "side")
    proj.replace(*LOOSER)
    forge_fresh_lock(proj)
    side = proj.commit("Register the study")
    git(proj.root, "checkout", "-q", "main")
    git(proj.root, "merge", "-q", "-s", "ours", "side", "-m", "merge side")
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert side[:12] in out and "rewrites the chain" in out and "entry 0 replaced" in out


def test_a_moved_registration_with_a_link_at_the_old_place_fails(proj):
    """``git mv preregistrations moved`` and a link named preregistrations: links are refused,
    and the moved file's history is followed back through the rename."""
    from tailgate.prereg.history import lock_history

    first = git(proj.root, "log", "--format=%H", "--", "preregistrations").split()[-1]
    git(proj.root, "mv", "preregistrations", "moved")
    os.symlink("moved", proj.root / "preregistrations")
    git(proj.root, "add", "preregistrations")
    git(proj.root, "commit", "-q", "-m", "move the registrations")
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert "preregistrations: is a link" in out
    history = lock_history(proj.root / "moved" / proj.lock.name)
    assert history.versions[0][0] == first  # followed through the rename
    assert not history.violations


def test_a_shallow_clone_fails_and_says_how_to_fetch_the_history(honest_run, tmp_path):
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{honest_run.root}", str(clone))
    shutil.copytree(honest_run.results, clone / "results" / honest_run.name)
    proj = Project(clone, honest_run.name)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert "shallow clone" in out and "git fetch --unshallow" in out


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_hidden_from_git_status_fails(proj, flag):
    """An uncommitted amendment hidden from ``git status`` by an index flag: the work-tree blob
    is compared with ``HEAD:path``, so the flag is named and the audit fails."""
    proj.replace(*LOOSER)
    assert proj.cli("amend", proj.prereg, "--reason", "looser")[0] == 0
    for p in (proj.prereg, proj.lock):
        git(proj.root, "update-index", flag, str(p.relative_to(proj.root)))
    assert git(proj.root, "status", "--porcelain", "--untracked-files=no") == ""
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert f"hidden from git status by 'git update-index {flag}'" in out
    assert "entry 1" in out and "is in no commit" in out


def test_an_entry_in_no_commit_fails_naming_it(proj):
    proj.replace(*LOOSER)
    assert proj.cli("amend", proj.prereg, "--reason", "looser")[0] == 0
    entry = json.loads(proj.lock.read_text())["chain"][1]["entry_hash"]
    code, out = proj.audit()
    assert code == AUDIT_FAILED
    assert f"entry 1 ({entry[:12]}…) is in no commit" in out


def test_a_backdated_commit_is_not_proof_of_time(proj):
    """A commit date can be set at will: the audit says its dates are the committer's and asks
    for a trusted timestamp; it never reports the registration time as proven from git."""
    proj.replace('title: "honest', 'title: "still honest')
    assert proj.cli("amend", proj.prereg, "--reason", "title")[0] == 0
    git(proj.root, "add", "preregistrations")
    res = subprocess.run(
        ["git", "commit", "-q", "-m", "backdated"], cwd=proj.root, check=False,
        env={**os.environ, "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z",
             "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@e"},
    )  # fmt: skip
    assert res.returncode == 0
    _, out = proj.audit()
    assert "entry 1 first committed in" in out and "2001-01-01" in out
    assert "git dates are the committer's own clock" in out
    assert "registration time proven" not in out
    assert head_commit(proj.root)  # the history is whole
