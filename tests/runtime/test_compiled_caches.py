"""Compiled code only from sources the record vouches for: every run compiles numba's kernels
into a new folder of its own.

numba's cache index files are pickles, unpickled when a kernel loads. A researcher who plants one
(with a payload that writes a marker) in a cache folder and points the run at it — the cache
beside the sources and ``NUMBA_CACHE_DIR`` are both where numba looks — must see it never read:
the workflow sets ``NUMBA_CACHE_DIR`` of every job and of the warm server to a fresh folder of the
run's, removed when the run ends.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numba
import pytest
from numba.core.caching import _CacheLocator

PACKAGE = Path(__file__).resolve().parents[2] / "workflow" / "tailgate"


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # unpickling writes the marker, then gives an index that never matches
        code = (
            f"__import__('pathlib').Path({str(self.marker)!r}).write_text('ran') and ((0, 0), {{}})"
        )
        return (eval, (code,))


def planted(folder: Path, marker: Path) -> int:
    """Plant, in ``folder`` as numba's ``NUMBA_CACHE_DIR`` lays it out, an index file with a
    payload for every kernel of the package that has one beside its source (the test process
    compiled the dominance and bootstrap kernels); the number planted."""
    count = 0
    for index in PACKAGE.rglob("__pycache__/*.nbi"):
        source_dir = index.parent.parent
        sub = _CacheLocator.get_suitable_cache_subpath(str(source_dir / "x.py"))
        target = folder / sub / index.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pickle.dumps(numba.__version__) + pickle.dumps(_Payload(marker)))
        count += 1
    return count


@pytest.fixture()
def cache(tmp_path) -> tuple[Path, Path]:
    folder, marker = tmp_path / "planted", tmp_path / "payload-ran"
    assert planted(folder, marker) >= 3
    return folder, marker


def test_a_planted_index_runs_where_numba_reads_it(cache):
    """The planted files are what the attack needs: numba unpickles them when a kernel loads."""
    folder, marker = cache
    code = "from tailgate.stats.draws import compiled, _warm_draws; compiled('draws', _warm_draws)"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    assert marker.read_text() == "ran"


def test_a_run_never_reads_a_cache_it_did_not_write(cache, imported):
    """The import study run again from the start with the planted folder as its cache."""
    folder, marker = cache
    res = imported.snakemake("--forceall", env={"NUMBA_CACHE_DIR": str(folder)})
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert not marker.exists()
    # the run's own folder is gone with the run
    assert list((imported.root / ".snakemake").glob("tailgate-numba-*")) == []
