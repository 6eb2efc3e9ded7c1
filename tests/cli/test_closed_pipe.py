"""A reader that stops early (``tailgate … | head -1``) is not an internal error: the command
finishes its work, returns its own exit code and prints no traceback."""

from __future__ import annotations

import os
import subprocess
import sys


def test_a_closed_pipe_is_not_an_internal_error(tmp_path):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        res = subprocess.run(
            [sys.executable, "-m", "tailgate.cli", "init", "piped"],
            cwd=tmp_path,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write)
    assert res.returncode == 0, res.stderr
    assert "internal error" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr
    assert (tmp_path / "preregistrations" / "piped.yaml").exists()  # the work was done
