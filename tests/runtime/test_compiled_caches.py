"""Compiled code only from sources the record vouches for: numba's kernels load only from the
user's own kernel cache (:mod:`tailgate.user_cache`).

numba's cache index files are pickles, unpickled when a kernel loads. A researcher who plants one
(with a payload that writes a marker) in a cache folder and points the run at it — the cache
beside the sources and ``NUMBA_CACHE_DIR`` are both where numba looks — must see it never read:
every run, its jobs and the ``tailgate`` command point numba at a folder of the user's cache,
named by the code digest, that only the user can have written; where that folder is not the
user's alone, at a new empty folder of the run's.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numba
import pytest
from tailgate.code import code_digest
from tailgate.user_cache import KEEP_FOLDERS, kernel_cache


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
    payload for every kernel of the package that the test process compiled (the dominance and
    bootstrap kernels, into the kernel cache ``tests/conftest.py`` set); the number planted."""
    count = 0
    compiled_into = Path(os.environ["NUMBA_CACHE_DIR"])
    for index in compiled_into.rglob("*.nbi"):
        target = folder / index.relative_to(compiled_into)  # numba's layout: the same sources
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


def test_a_run_never_reads_a_cache_it_did_not_write(cache, imported, tmp_path):
    """The import study run again from the start with the planted folder as its cache: its
    jobs compile into the user's kernel cache instead, and never read the planted index."""
    folder, marker = cache
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    env = {"NUMBA_CACHE_DIR": str(folder), "XDG_CACHE_HOME": str(xdg)}
    res = imported.snakemake("--forceall", env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert not marker.exists()
    kernels = xdg / "tailgate" / "kernels" / code_digest()[:16]
    assert len(list(kernels.rglob("*.nbi"))) >= 3  # the bootstrap kernels, compiled there
    assert list((imported.root / ".snakemake").glob("tailgate-numba-*")) == []


def test_the_command_points_numba_at_the_kernel_cache_even_after_numba_loaded(cache, tmp_path):
    """``use_kernel_cache`` (what the ``tailgate`` command and every run call first) wins over
    ``NUMBA_CACHE_DIR``, and over numba's own setting where numba was loaded before it."""
    folder, marker = cache
    code = (
        "import numba; from tailgate.user_cache import use_kernel_cache; use_kernel_cache(); "
        "from tailgate.stats.draws import compiled, _warm_draws; compiled('draws', _warm_draws)"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder), "XDG_CACHE_HOME": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    assert not marker.exists()
    assert list((tmp_path / "tailgate" / "kernels" / code_digest()[:16]).rglob("*.nbi"))


@pytest.fixture()
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "tailgate" / "kernels"


def test_the_kernel_cache_is_private_and_named_by_the_code(home):
    folder = kernel_cache()
    assert folder == home / code_digest()[:16]
    for f in (home.parent, home, folder):
        assert f.stat().st_mode & 0o777 == 0o700
    assert kernel_cache() == folder


@pytest.mark.parametrize("which", ["tailgate", "kernels", "code"])
def test_a_folder_others_may_write_is_not_used(home, which):
    folder = kernel_cache()
    target = {"tailgate": home.parent, "kernels": home, "code": folder}[which]
    target.chmod(0o777)
    assert kernel_cache() is None


def test_a_missing_cache_folder_is_made(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "new" / "cache"))
    assert (
        kernel_cache() == tmp_path / "new" / "cache" / "tailgate" / "kernels" / (code_digest()[:16])
    )


def test_a_link_is_not_used(home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    home.parent.mkdir(mode=0o700)
    home.symlink_to(elsewhere)
    assert kernel_cache() is None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_not_used(home):
    folder = kernel_cache()
    os.chown(folder, 65534, 65534)
    assert kernel_cache() is None


def _aged(home: Path, hours: list[float]) -> list[Path]:
    now = time.time()
    folders = []
    for i, h in enumerate(hours):
        f = home / f"{i:016d}"
        f.mkdir(parents=True, mode=0o700)
        os.utime(f, (now - 3600 * h, now - 3600 * h))
        folders.append(f)
    return folders


def test_beyond_the_folders_used_last_those_unused_for_a_day_are_removed(home):
    """Folders of other code: the KEEP_FOLDERS used last stay, and the others go once no run
    used them for a day."""
    folders = _aged(home, [1, 2, 3] + [24 * d for d in range(2, KEEP_FOLDERS + 4)])
    assert kernel_cache() is not None
    assert [f.exists() for f in folders] == [i < KEEP_FOLDERS for i in range(len(folders))]


def test_folders_used_in_the_last_day_stay_however_many(home):
    """A run of other code may still load from its folder."""
    folders = _aged(home, [0.5 * h for h in range(1, KEEP_FOLDERS + 6)])
    assert kernel_cache() is not None
    assert all(f.is_dir() for f in folders)
