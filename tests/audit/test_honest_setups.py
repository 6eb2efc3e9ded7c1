"""Every honest set-up audits clean, with the run's warm server on (the default).

A false alarm costs as much trust as a hole: an honest study run the ways users run it must
audit 0. The set-ups: the README's (an editable install of this checkout); a second clone and a
``git worktree`` run with this checkout's environment (one environment for several working
copies: the run's warm server then starts from this checkout, the jobs import the other's code);
a regular, non-editable ``pip install``. The lowest declared versions have their own test
(``test_audit_other_versions.py``). The runtime check judges a loaded file by what it is (the
project's code digest, an installed distribution's ``RECORD``), not by where it lies; a file of
another copy of the code that differs anywhere from the recorded code still fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from attack_project import ATTACK_STUDY, REPO_ROOT, Project, make_project
from git_repo import git
from tailgate.runtime.installed import site_folders

#: the attack study with fewer bootstrap resamples: the same verdict, a shorter run
STUDY = ATTACK_STUDY.replace("bootstrap: {resamples: 300}", "bootstrap: {resamples: 100}")
#: the run's warm server on, whatever the environment the tests run in says
SERVER_ON = {"TAILGATE_FORKSERVER": "on"}


def _same_code():
    from tailgate.runtime import interpreter

    interpreter.forget()
    return interpreter._same_code


def _copy_of_the_code(dest: Path) -> Path:
    """The digested code of this checkout (package, rule files, Snakefile) copied to ``dest``;
    its ``tailgate`` package folder."""
    from tailgate.code import code_files

    for name, path in code_files():
        out = dest / (name if name == "Snakefile" or name.startswith("workflow/") else
                      f"workflow/{name}")  # fmt: skip
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, out)
    return dest / "workflow" / "tailgate"


def test_a_file_of_another_copy_of_the_recorded_code_is_the_project_s(tmp_path: Path) -> None:
    package = _copy_of_the_code(tmp_path / "other")
    assert _same_code()(str((package / "runtime/forkserver.py").resolve()))


def test_a_copy_that_differs_anywhere_vouches_for_none_of_its_files(tmp_path: Path) -> None:
    """One changed file the server runs from beside its own (the ``RECORD`` reader), a file the
    digest does not cover, and a file of no ``tailgate`` package: none is the project's."""
    package = _copy_of_the_code(tmp_path / "other")
    reader = package / "runtime" / "installed.py"
    reader.write_text(reader.read_text() + "\ndistributed = lambda *a: True\n")
    assert not _same_code()(str((package / "runtime/forkserver.py").resolve()))

    package = _copy_of_the_code(tmp_path / "another")
    (package / "planted.txt").write_text("print('planted')\n")
    (package / "planted.pyw").write_text("print('planted')\n")
    for name in ("planted.txt", "planted.pyw"):
        assert not _same_code()(str((package / name).resolve()))
    assert not _same_code()(
        str(Path(shutil.copy2(package / "runtime/forkserver.py", tmp_path)).resolve())
    )


def test_the_readme_set_up_audits_clean(honest_audit: tuple[int, str]) -> None:
    """An editable install of this checkout (the suite's own environment)."""
    assert os.environ.get("TAILGATE_FORKSERVER") != "off", "the suite runs with the server off"
    code, out = honest_audit
    assert code == 0, out


def _second_checkout(dest: Path) -> Path:
    """A clone of this repository holding its working tree's code as a commit: another
    checkout of the same code (the same code digest)."""
    from tailgate.code import code_digest, code_files, digest_of

    if not (REPO_ROOT / ".git").exists():
        pytest.skip("needs this project as a git checkout to clone")
    git(dest.parent, "clone", "-q", "--single-branch", str(REPO_ROOT), str(dest))
    listed = git(REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for rel in filter(None, listed.split("\0")):
        src, out = REPO_ROOT / rel, dest / rel
        if src.is_file() or src.is_symlink():
            out.parent.mkdir(parents=True, exist_ok=True)
            out.unlink(missing_ok=True)
            shutil.copy2(src, out, follow_symlinks=False)
        elif not src.exists():
            out.unlink(missing_ok=True)
    git(dest, "add", "-A")
    if git(dest, "status", "--porcelain").strip():
        git(dest, "commit", "-q", "-m", "The working tree's code")
    assert digest_of(code_files(dest / "workflow" / "tailgate")) == code_digest()
    return dest


def _study_in(checkout: Path, name: str) -> Project:
    """The study registered, frozen and committed inside ``checkout`` itself, as a user does."""
    proj = make_project(checkout, name, STUDY.replace("study: attack", f"study: {name}"))
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    proj.commit(f"Pre-register {name}")
    return proj


def _run_and_audit(proj: Project) -> None:
    res = proj.snakemake(
        "--config", f"study={proj.name}", "threads=1",
        snakefile=proj.root / "Snakefile", env=SERVER_ON,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    code, out = proj.audit()
    assert code == 0, out


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _second_checkout(tmp_path_factory.mktemp("setups") / "clone")


@pytest.mark.slow
def test_a_second_clone_run_with_this_checkouts_environment_audits_clean(clone: Path) -> None:
    _run_and_audit(_study_in(clone, "clone"))


@pytest.mark.slow
def test_a_git_worktree_run_with_this_checkouts_environment_audits_clean(clone: Path) -> None:
    tree = clone.parent / "worktree"
    git(clone, "worktree", "add", "-q", str(tree))
    assert (tree / ".git").is_file()
    _run_and_audit(_study_in(tree, "worktree"))


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]


def _installed_environment(where: Path, source: Path) -> Path:
    """A virtual environment with ``source`` installed by ``pip install`` (not editable); its
    dependencies are this environment's, named by a ``.pth`` file (``venv
    --system-site-packages`` would reach the base interpreter's, not this environment's); its
    python."""
    if find_spec("pip") is None:
        pytest.skip("needs pip in this environment to install the package")
    env = where / "installed"
    res = _run([sys.executable, "-m", "venv", "--without-pip", str(env)])
    assert res.returncode == 0, res.stderr[-2000:]
    python = env / "bin" / "python"
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    deps = site_folders(sys.path)  # every folder this environment's distributions are in
    (Path(site.stdout.strip()) / "_dependencies.pth").write_text("\n".join(deps) + "\n")
    install = ["-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(source)]
    res = _run([str(python), *install])
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return python


@pytest.mark.slow
def test_a_regular_pip_install_audits_clean(tmp_path: Path) -> None:
    checkout = _second_checkout(tmp_path / "checkout")
    python = _installed_environment(tmp_path, checkout)
    where = _run([str(python), "-c", "import tailgate; print(tailgate.__file__)"])
    assert "site-packages" in where.stdout, where.stdout + where.stderr  # not the checkout's
    proj = _study_in(checkout, "installed")
    environ = {**os.environ, **SERVER_ON}
    environ.pop("VIRTUAL_ENV", None)
    res = _run(
        [str(python), "-m", "snakemake", "-s", "Snakefile", "-d", ".", "--cores", "2",
         "--config", f"study={proj.name}", "threads=1"],
        cwd=checkout, env=environ,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    res = _run([str(python.with_name("tailgate")), "audit", f"results/{proj.name}"], cwd=checkout)
    assert res.returncode == 0, res.stdout + res.stderr
