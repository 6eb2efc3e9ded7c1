"""Git for test projects: a fixed identity, commits of chosen paths, and the log."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "tailgate tests",
    "GIT_AUTHOR_EMAIL": "tests@example.org",
    "GIT_COMMITTER_NAME": "tailgate tests",
    "GIT_COMMITTER_EMAIL": "tests@example.org",
}


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; return stdout (assert on failure)."""
    res = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=False,
        env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    assert res.returncode == 0, f"git {' '.join(args)}: {res.stderr}"
    return res.stdout


def git_commit(root: Path, message: str, *paths: str) -> str:
    """Commit ``paths`` (creating the repository on first use); return the commit sha."""
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A", "--", *paths)
    git(root, "commit", "-q", "-m", message, "--", *paths)
    return git(root, "rev-parse", "HEAD").strip()


def commit_registration(root: Path) -> None:
    """Commit ``preregistrations/`` as it is now (creating the repository on first use): a
    confirmatory run needs its registration committed exactly as on disk, as a user commits
    after ``tailgate freeze`` or ``tailgate amend``. Nothing is committed when nothing changed
    (or nothing is registered)."""
    if not (root / "preregistrations").exists():
        return  # nothing registered to commit
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A", "--", "preregistrations")
    if git(root, "status", "--porcelain", "--", "preregistrations").strip():
        git(root, "commit", "-q", "-m", "Register the study", "--", "preregistrations")
