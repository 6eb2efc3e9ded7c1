"""The contract, git read as data: the audited repository's own settings can run programs and
change what git shows (a clean filter in ``.git/config`` applied by ``.git/info/attributes``,
``log.showSignature`` with ``gpg.program``, ``core.fsmonitor``, ``core.worktree``,
``include.path``, ``git replace``, ``info/grafts``). None of them reaches the reviewer's git: the
programs never run, the bytes compared are the work tree's, a rewritten history fails the git
check naming it, and honest set-ups (a linked work tree, a SHA-256 repository, a repository
without commits) still pass. Each door is first shown open to plain git."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from attack_project import Project
from git_repo import git, git_commit
from tailgate.audit.registration import check_git
from tailgate.prereg.gitinfo import (
    NOT_IN_HEAD,
    clone_head,
    committed_versions,
    head_state,
    not_as_committed,
    repo_root,
    rewritten_history,
)

HONEST = b"band_rule: all\n"
LOOSER = b"band_rule: any\n"
AUDIT_FAILED = 4


def _repo(root: Path, *, init: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """A repository holding a committed registration and lock (honest bytes); their paths."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main", *init)
    (root / "preregistrations").mkdir()
    prereg, lock = root / "preregistrations" / "s.yaml", root / "preregistrations" / "s.lock.json"
    prereg.write_bytes(HONEST)
    lock.write_text("{}\n")
    git_commit(root, "Register the study", "preregistrations")
    return prereg, lock


def _program(path: Path, marker: Path, body: str = "") -> str:
    """An executable that leaves ``marker`` behind when it runs, then runs ``body``."""
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _git_check(prereg: Path, lock: Path) -> list[str]:
    return check_git(prereg, lock, None, None, no_git=False).failures


@pytest.mark.parametrize("via_include", [False, True], ids=["config", "include.path"])
def test_a_clean_filter_never_runs_and_the_work_tree_bytes_decide(tmp_path, via_include):
    """The doctored file is filtered back to the honest bytes for plain git; the reviewer's git
    never runs the filter and the git check sees the doctored bytes."""
    prereg, lock = _repo(tmp_path / "repo")
    root, marker = prereg.parents[1], tmp_path / "filter-ran"
    (tmp_path / "honest").write_bytes(HONEST)
    clean = _program(tmp_path / "clean", marker, f"cat '{tmp_path / 'honest'}'")
    settings = root / ".git" / "config"
    if via_include:
        (tmp_path / "more.config").write_text("")
        git(root, "config", "include.path", str(tmp_path / "more.config"))
        settings = tmp_path / "more.config"
    git(root, "config", "--file", str(settings), "filter.honest.clean", clean)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("*.yaml filter=honest\n")
    prereg.write_bytes(LOOSER)
    committed = git(root, "rev-parse", "HEAD:preregistrations/s.yaml").strip()
    shown = git(root, "hash-object", "--path", "preregistrations/s.yaml", str(prereg)).strip()
    assert shown == committed and marker.exists()  # the door is open to plain git
    marker.unlink()
    assert not_as_committed(prereg, lock) == [(prereg, "differs from HEAD")]
    assert any("s.yaml: differs from the committed version" in f for f in _git_check(prereg, lock))
    assert head_state(prereg)["dirty"] is True
    assert not marker.exists()


def test_a_signature_program_never_runs_when_the_history_is_read(tmp_path):
    """``log.showSignature`` with ``gpg.program`` runs the program for a signed commit on every
    ``git log``; the reviewer's history walk runs nothing."""
    prereg, lock = _repo(tmp_path / "repo")
    root, marker = prereg.parents[1], tmp_path / "gpg-ran"
    raw = git(root, "cat-file", "commit", "HEAD")
    header, _, message = raw.partition("\n\n")
    signature = " -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----"
    signed_text = f"{header}\ngpgsig{signature}\n\n{message}"
    (tmp_path / "signed").write_text(signed_text)
    signed = git(root, "hash-object", "-t", "commit", "-w", str(tmp_path / "signed")).strip()
    git(root, "update-ref", "refs/heads/main", signed)
    git(root, "config", "log.showSignature", "true")
    git(root, "config", "gpg.program", _program(tmp_path / "gpg", marker))
    git(root, "log", "-1")
    assert marker.exists()  # the door is open to plain git
    marker.unlink()
    versions = committed_versions(prereg)
    assert [v.commit for v in versions] == [signed] and versions[0].content == HONEST
    assert _git_check(prereg, lock) == []
    assert not marker.exists()


def test_an_fsmonitor_program_never_runs_and_cannot_hide_an_edit(tmp_path):
    prereg, lock = _repo(tmp_path / "repo")
    root, marker = prereg.parents[1], tmp_path / "fsmonitor-ran"
    git(root, "config", "core.fsmonitor", _program(tmp_path / "fsmonitor", marker))
    git(root, "status", "--porcelain")
    assert marker.exists()  # the door is open to plain git
    marker.unlink()
    prereg.write_bytes(LOOSER)
    assert head_state(prereg)["dirty"] is True
    assert not_as_committed(prereg, lock) == [(prereg, "differs from HEAD")]
    assert not marker.exists()


def test_a_replace_ref_of_the_registration_commit_fails_named(tmp_path):
    """``git replace`` of the registration commit by a twin holding a looser plan: plain git
    shows the twin; the reviewer's git reads the commit as it is and the git check fails, naming
    the replace ref."""
    prereg, lock = _repo(tmp_path / "repo")
    root = prereg.parents[1]
    original = git(root, "rev-parse", "HEAD").strip()
    prereg.write_bytes(LOOSER)
    git(root, "add", "preregistrations")
    tree = git(root, "write-tree").strip()
    twin = git(root, "commit-tree", tree, "-m", "Register the study").strip()
    git(root, "read-tree", "HEAD")
    git(root, "replace", original, twin)
    assert git(root, "show", "HEAD:preregistrations/s.yaml").encode() == LOOSER  # door open
    assert committed_versions(prereg)[0].content == HONEST
    assert rewritten_history(prereg) == [
        f"replace ref refs/replace/{original} (shows {twin[:12]} in place of {original[:12]})"
    ]
    fails = _git_check(prereg, lock)
    assert any(
        f.startswith(f"replace ref refs/replace/{original}")
        and "the history is rewritten locally" in f
        and "audit a fresh clone" in f
        for f in fails
    ), fails
    assert any("s.yaml: differs from the committed version" in f for f in fails), fails


def test_a_grafts_file_fails_named_and_the_hidden_commit_is_still_read(tmp_path):
    """A grafts file makes a later commit a root, hiding the registration commit before it."""
    prereg, lock = _repo(tmp_path / "repo")
    root = prereg.parents[1]
    prereg.write_bytes(LOOSER)
    later = git_commit(root, "loosen", "preregistrations")
    grafts = root / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(later + "\n")
    assert git(root, "rev-list", "HEAD").split() == [later]  # the door is open to plain git
    assert [v.content for v in committed_versions(prereg)] == [HONEST, LOOSER]
    fails = _git_check(prereg, lock)
    assert any(
        f.startswith(f"grafts file {grafts.resolve()}: the history is rewritten locally")
        for f in fails
    ), fails


def test_core_worktree_in_the_repository_config_redirects_nothing(tmp_path):
    """``core.worktree`` pointing at a folder holding the honest files: plain git compares that
    folder; the reviewer's git the work tree the repository is found in."""
    prereg, lock = _repo(tmp_path / "repo")
    root, elsewhere = prereg.parents[1], tmp_path / "elsewhere"
    (elsewhere / "preregistrations").mkdir(parents=True)
    for p in (prereg, lock):
        (elsewhere / "preregistrations" / p.name).write_bytes(p.read_bytes())
    git(root, "config", "core.worktree", str(elsewhere))
    prereg.write_bytes(LOOSER)
    assert git(root, "status", "--porcelain") == ""  # the door is open to plain git
    assert repo_root(prereg) == root.resolve()
    assert not_as_committed(prereg, lock) == [(prereg, "differs from HEAD")]
    assert any("s.yaml: differs from the committed version" in f for f in _git_check(prereg, lock))


def test_an_inherited_git_dir_redirects_nothing(tmp_path, monkeypatch):
    prereg, lock = _repo(tmp_path / "repo")
    other, _ = _repo(tmp_path / "other")
    prereg.write_bytes(LOOSER)
    monkeypatch.setenv("GIT_DIR", str(other.parents[1] / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.parents[1]))
    assert not_as_committed(prereg, lock) == [(prereg, "differs from HEAD")]


def test_a_linked_work_tree_passes_and_is_read_as_its_own(tmp_path):
    """``git worktree add``: the checkout's ``.git`` is a file naming its git folder, whose
    ``commondir`` names the shared objects and refs."""
    prereg, lock = _repo(tmp_path / "repo")
    root, linked = prereg.parents[1], tmp_path / "linked"
    git(root, "worktree", "add", "-q", "-b", "side", str(linked))
    wt_prereg, wt_lock = (
        linked / "preregistrations" / "s.yaml",
        linked / "preregistrations" / "s.lock.json",
    )
    wt_prereg.write_bytes(LOOSER)
    side = git_commit(linked, "loosen on the side branch", "preregistrations")
    assert (linked / ".git").is_file()
    assert repo_root(wt_prereg) == linked.resolve()
    assert head_state(wt_prereg) == {"commit": side, "dirty": False}
    assert not_as_committed(wt_prereg, wt_lock) == []
    assert _git_check(wt_prereg, wt_lock) == []
    assert not_as_committed(prereg, lock) == []  # the main checkout is still HONEST
    wt_prereg.write_bytes(HONEST)
    assert not_as_committed(wt_prereg, wt_lock) == [(wt_prereg, "differs from HEAD")]


def test_a_sha256_repository_passes(tmp_path):
    prereg, lock = _repo(tmp_path / "repo", init=("--object-format=sha256",))
    assert len(head_state(prereg)["commit"]) == 64
    assert not_as_committed(prereg, lock) == []
    prereg.write_bytes(LOOSER)
    assert not_as_committed(prereg, lock) == [(prereg, "differs from HEAD")]


def test_a_repository_without_commits_reads_as_nothing_committed(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "s.yaml").write_bytes(HONEST)
    assert repo_root(root / "s.yaml") == root.resolve()
    assert head_state(root / "s.yaml") is None
    assert not_as_committed(root / "s.yaml") == [(root / "s.yaml", NOT_IN_HEAD)]
    assert committed_versions(root / "s.yaml") == []


def test_a_clone_holds_the_commits_and_none_of_the_settings(tmp_path):
    """:func:`clone_head` (a fresh clone for a re-run): the committed files as committed, no
    replace ref, no setting of the source repository."""
    prereg, _ = _repo(tmp_path / "repo")
    root, marker = prereg.parents[1], tmp_path / "filter-ran"
    git(root, "config", "filter.honest.smudge", _program(tmp_path / "smudge", marker, "cat"))
    git(root, "config", "filter.honest.clean", "cat")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("* filter=honest\n")
    git(root, "replace", "HEAD", git(root, "commit-tree", "HEAD^{tree}", "-m", "twin").strip())
    clone_head(prereg, tmp_path / "clone")
    cloned = tmp_path / "clone" / "preregistrations" / "s.yaml"
    assert cloned.read_bytes() == HONEST
    assert rewritten_history(cloned) == [] and not marker.exists()
    assert "filter" not in (tmp_path / "clone" / ".git" / "config").read_text()


def test_no_program_of_the_repository_runs_during_a_whole_audit(proj: Project, tmp_path):
    """Every door at once in an audited study (a clean filter on every file showing the
    committed registration, a signature program and an fsmonitor): the audit fails on the
    doctored registration, naming it, and none of the programs ran."""
    marker = tmp_path / "ran"
    committed = proj.prereg.read_bytes()
    proj.prereg.write_bytes(committed.replace(b"band_rule: all", b"band_rule: any"))
    (tmp_path / "honest").write_bytes(committed)
    rel = proj.prereg.relative_to(proj.root).as_posix()
    clean = _program(tmp_path / "clean", marker, f"cat '{tmp_path / 'honest'}'")
    for key, value in (
        ("filter.honest.clean", clean),
        ("core.fsmonitor", _program(tmp_path / "fsmonitor", marker)),
        ("log.showSignature", "true"),
        ("gpg.program", _program(tmp_path / "gpg", marker)),
    ):
        git(proj.root, "config", key, value)
    (proj.root / ".git" / "info").mkdir(exist_ok=True)
    (proj.root / ".git" / "info" / "attributes").write_text(f"{rel} filter=honest\n")
    assert git(proj.root, "status", "--porcelain", "--untracked-files=no") == ""
    assert marker.exists()  # the doors are open to plain git
    marker.unlink()
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert f"{rel}: differs from the committed version" in out
    assert not marker.exists()
