"""The energy test of ``dcor`` (Székely & Rizzo), computed in a fresh interpreter.

``dcor`` compiles numba kernels when it is imported. In a test process that has already loaded
PyTorch (the model tests build and run tiny models in-process) a numba compilation can abort the
whole process: PyTorch and llvmlite each bring a copy of LLVM (numba issue 9996), and a test
worker that dies takes its scheduled tests with it. The reference therefore runs in its own
interpreter, which loads numpy and dcor only, with a numba cache of its own: two of them
writing dcor's shared cache at once (two test workers, a clean installation) left one reading
the other's half-written kernels ("LLVM ERROR: Symbol not found"). The references run one at a
time, under a file lock, and share that cache (one user's, in the temporary folder), so only
the first compiles dcor's kernels (the two tests took 50 s and 36 s on a clean installation,
against 48 s and 46 s each compiling).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

_SCRIPT = """
import json, sys
import numpy as np
import dcor

data = np.load(sys.argv[1])
resamples = int(sys.argv[2])
out = []
for i in range(len(data.files) // 2):
    res = dcor.homogeneity.energy_test(
        data[f"x{i}"], data[f"y{i}"], num_resamples=resamples, random_state=0
    )
    out.append([float(res.statistic), float(res.pvalue)])
json.dump(out, sys.stdout)
"""


def energy_tests(
    pairs: list[tuple[np.ndarray, np.ndarray]], resamples: int = 0
) -> list[tuple[float, float]]:
    """``dcor.homogeneity.energy_test`` of each pair: (statistic, permutation p-value)."""
    cache = Path(tempfile.gettempdir()) / f"tailgate-dcor-numba-{os.getuid()}"
    cache.mkdir(exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="tailgate-dcor-") as tmp,
        open(cache / ".lock", "w") as lock,
    ):
        arrays = Path(tmp) / "pairs.npz"
        named = {f"x{i}": x for i, (x, _) in enumerate(pairs)}
        named |= {f"y{i}": y for i, (_, y) in enumerate(pairs)}
        np.savez(arrays, **named)
        fcntl.flock(lock, fcntl.LOCK_EX)  # one writer of the cache at a time
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, str(arrays), str(resamples)],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "NUMBA_CACHE_DIR": str(cache)},  # see the module docstring
        )
    if done.returncode != 0:
        raise AssertionError(f"the dcor reference failed:\n{done.stderr}")
    return [(s, p) for s, p in json.loads(done.stdout)]
