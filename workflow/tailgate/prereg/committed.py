"""Run only what is committed: a confirmatory run needs its registration in ``HEAD``.

A registration is public from its first commit (README, "the contract"). A run whose
pre-registration or lock is not committed — never added, edited since, hidden from
``git status`` by ``git update-index --skip-worktree``/``--assume-unchanged``, reached through a
link, or outside any git repository — would make results that no commit ties to a plan: the
researcher could read them, delete them with the lock, and register another plan as if it came
first. So the Snakefile (at parse time, before any job) and every stage refuse such a run
(:class:`~tailgate.errors.RefusalError`, exit 3) and say how to commit.

The bytes are compared, not git's status: each file's blob hash is computed from the work tree
and compared with ``HEAD:<path>`` (:func:`tailgate.prereg.gitinfo.work_tree_hidden`).

**Exploratory runs.** A pilot, a try-out before registering, or a project outside git can run
with ``snakemake --config exploratory=true``. The run's mode travels to every job (the
environment variable :data:`MODE_ENV`, set from the Snakefile's config at parse time, and a
parameter of every rule, so that switching modes re-runs the jobs); each provenance record
names it, ``verdict.json`` lists it as a deviation from the registered plan, the report and the
terminal answer show it first, the run ledger marks the run, and ``tailgate audit`` fails such
results as not confirmatory — and fails a confirmatory result whose study had an exploratory run
before it, because its data were seen before the registration was committed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tailgate.errors import RefusalError

__all__ = [
    "CONFIRMATORY",
    "EXPLORATORY",
    "MODE_ENV",
    "commit_registration",
    "exploratory_deviation",
    "require_committed",
    "run_mode",
    "set_run_mode",
    "uncommitted",
]

CONFIRMATORY = "confirmatory"
EXPLORATORY = "exploratory"

#: The run's mode, as the Snakefile set it from ``config["exploratory"]`` for its jobs.
MODE_ENV = "TAILGATE_RUN_MODE"


def run_mode() -> str:
    """``"exploratory"`` when this run was started with ``exploratory=true``, else
    ``"confirmatory"``."""
    return EXPLORATORY if os.environ.get(MODE_ENV) == EXPLORATORY else CONFIRMATORY


def set_run_mode(exploratory: bool) -> str:
    """Set this process's (and its jobs') run mode; return it."""
    mode = EXPLORATORY if exploratory else CONFIRMATORY
    os.environ[MODE_ENV] = mode
    return mode


def uncommitted(prereg_path: str | Path, lock_path: str | Path) -> list[str]:
    """Why the registration (pre-registration and lock) is not committed as it is on disk, one
    line per problem; empty when both files are ``HEAD``'s bytes."""
    from tailgate.prereg.gitinfo import NOT_IN_HEAD, not_as_committed, repo_root
    from tailgate.prereg.gitreview import linked_registration

    prereg, lock = Path(prereg_path), Path(lock_path)
    links = linked_registration(prereg, lock)
    if links:
        return links
    if repo_root(prereg) is None:
        return [f"{prereg.parent}: not in a git repository"]
    return [
        f"{p}: not committed (it is in no commit of HEAD)" if why == NOT_IN_HEAD else f"{p}: {why}"
        for p, why in not_as_committed(prereg, lock)
    ]


def require_committed(study: Any) -> None:
    """Refuse (exit 3) a confirmatory run whose registration is not committed as on disk."""
    if run_mode() == EXPLORATORY:
        return
    problems = uncommitted(study.path, study.lock_path)
    if not problems:
        return
    files = f"{study.path} {study.lock_path}"
    raise RefusalError(
        f"Refusing to run study '{study.name}': a confirmatory run needs its registration "
        "committed exactly as it is on disk, so that a commit ties the results to the plan "
        "registered before them. " + "; ".join(problems) + ".\n"
        f"Fix: commit both files — 'git add {files} && git commit -m \"Register "
        f"{study.name}\"' — and run again. For a pilot or a try-out, run it as exploratory "
        f"instead: 'snakemake --config study={study.name} exploratory=true' (labelled "
        "exploratory in the answer, verdict.json and the report; the audit never passes it as "
        "confirmatory)."
    )


def exploratory_deviation() -> dict[str, Any]:
    """``verdict.json``'s deviation entry of an exploratory run."""
    return {
        "what": "exploratory run (snakemake --config exploratory=true): the registration was "
        "not required to be committed, so no commit shows that the plan came before these "
        "results; they are not a confirmatory test of the registered plan",
        "amendment": None,
    }


def commit_registration(root: str | Path, paths: list[str]) -> None:
    """Commit ``paths`` of a scratch project at ``root`` (a new repository when it has none),
    as ``tailgate audit --reproduce`` does with the registration it copies, so that its re-run is
    confirmatory like the run it reproduces. git runs as :func:`~tailgate.prereg.gitinfo.own_git`
    runs it (no configuration or hook of the user's). Raises ``OSError`` naming the git error."""
    from tailgate.prereg.gitinfo import own_git

    ident = ["-c", "user.name=tailgate audit", "-c", "user.email=audit@tailgate.invalid"]
    if not (Path(root) / ".git").exists():
        own_git(root, "init", "-q")
    own_git(root, "add", "--", *paths)
    if own_git(root, "status", "--porcelain", "--", *paths).strip():  # a kept scratch may hold it
        own_git(root, *ident, "commit", "-q", "--no-verify", "-m", "registration", "--", *paths)
