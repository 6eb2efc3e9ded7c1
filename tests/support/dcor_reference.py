"""The energy test of ``dcor`` (Székely & Rizzo), computed in a fresh interpreter.

``dcor`` compiles numba kernels when it is imported. In a test process that has already loaded
PyTorch (the model tests build and run tiny models in-process) a numba compilation can abort the
whole process: PyTorch and llvmlite each bring a copy of LLVM (numba issue 9996), and a test
worker that dies takes its scheduled tests with it. The reference therefore runs in its own
interpreter, which loads numpy and dcor only.

The kernels compiled at import are those of the fast distance covariance (``_fast_dcov_avl``,
``_fast_dcov_mergesort``: most of the time ``import dcor`` takes), which the energy test does
not use. The interpreter loads ``dcor.homogeneity`` and the modules it imports
(``distances``, ``_energy``, ``_hypothesis``, ``_utils``) without running the package's
``__init__``: the same code, in about a tenth of the time. Should a version of
``homogeneity`` itself need numba, its kernels use a numba cache of their own: two
interpreters writing dcor's shared cache at once left one reading the other's half-written
kernels ("LLVM ERROR: Symbol not found"), so the references run one at a time, under a file
lock, and share that cache (one user's, in the temporary folder).
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
import importlib.util, json, sys, types
import numpy as np

# the package without its __init__ (see the module docstring), then the energy test's module
spec = importlib.util.find_spec("dcor")
package = types.ModuleType("dcor")
package.__path__ = list(spec.submodule_search_locations)
package.__spec__ = spec
sys.modules["dcor"] = package
import dcor.homogeneity

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
