"""``tailgate`` commands as the tests run them.

A ``python -m tailgate.cli`` process costs about 1.5 s of start-up and imports before it does
anything (matplotlib alone 1.3 s for an audit, which re-draws the report's figures), and the suite
runs a few hundred of them. The commands that start no other process but git are therefore run
in the test's own process through :func:`tailgate.cli.main`, as the installed ``tailgate``
script runs them, with the command's folder, its environment variables and its own standard
streams; what a command could leave behind is undone afterwards (folder, environment, streams
and the per-process caches of the code digest and the compiled-code scan). A command that
starts other processes (``audit --reproduce`` runs Snakemake) or an environment that changes
what Python loads (``PYTHONPATH`` and the like) runs in its own process as before.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: ``snakemake`` as a user runs it: the environment's console script (run as ``__main__``, which
#: the start-up state must vouch for), not ``python -m snakemake``
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

#: commands that start no child process but git (``export``'s MLflow client included: it keeps
#: no global state), run in this process
IN_PROCESS = frozenset(
    {"audit", "design", "freeze", "verify", "status", "amend", "env", "multiverse", "composite",
     "export", "init"}
)  # fmt: skip
#: options that make one of them start other processes
SPAWNING = frozenset({"--reproduce"})
#: variables a command may be given in this process (git's identity for ``--tag`` commits)
SAFE_VARIABLES = frozenset(
    {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}
)


def in_process(argv: Sequence[str], env: Mapping[str, str] | None = None) -> bool:
    """Whether ``tailgate ARGV`` (with ``env`` added to the environment) runs in this process."""
    verb = next((a for a in argv if not a.startswith("-")), None)
    return (
        verb in IN_PROCESS and not SPAWNING.intersection(argv) and set(env or {}) <= SAFE_VARIABLES
    )


def tailgate(
    *args: str | Path, cwd: Path, env: Mapping[str, str] | None = None, own_process: bool = False
) -> subprocess.CompletedProcess[str]:
    """``tailgate ARGS`` in ``cwd``, with ``env`` added to the environment: its exit code,
    stdout and stderr; ``own_process``: in its own process whatever the command, as a user runs
    it."""
    argv = [str(a) for a in args]
    if own_process or not in_process(argv, env):
        return subprocess.run(
            [sys.executable, "-m", "tailgate.cli", *argv],
            cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
            check=False,
        )  # fmt: skip
    from tailgate import code
    from tailgate.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update(env or {})
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # as the interpreter turns it into a status
                status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
                if not isinstance(exc.code, int | None):
                    print(exc.code, file=sys.stderr)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        code.code_digest.cache_clear()  # the files a later command reads may have changed
    return subprocess.CompletedProcess(["tailgate", *argv], status, out.getvalue(), err.getvalue())
