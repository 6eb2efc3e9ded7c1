"""The contract, start-up hooks: a ``.pth`` file is known by what it holds, never by its name. A
file named like one a packaging tool writes (``distutils-precedence.pth``, ``__editable__.*.pth``,
``*-nspkg.pth``, ``_virtualenv.pth``) but holding other code, or importing a module that is not
the tool's, is an unknown hook, and the audit fails naming it and what to do."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from tailgate.runtime import startup
from tailgate.runtime.fingerprint import check_runtime

DISTUTILS_LINE = (
    "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == "
    "'local'; enabled and __import__('_distutils_hack').add_shim(); \n"
)


@pytest.fixture
def site_dir(tmp_path, monkeypatch) -> Path:
    """An empty site directory, the only one scanned, first on the path, with no start-up module
    of the test process standing in for its own."""
    d = tmp_path / "site-packages"
    d.mkdir()
    monkeypatch.setattr(startup, "_site_dirs", lambda: [str(d)])
    monkeypatch.syspath_prepend(str(d))
    for name in ("_distutils_hack", "_virtualenv"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delenv("SETUPTOOLS_USE_DISTUTILS", raising=False)
    return d


def _hooks() -> dict[str, dict]:
    return {Path(h["path"]).name: h for h in startup.import_hooks() if h["kind"] == "pth"}


def _real_site() -> Path:
    """The site directory of this environment's setuptools (its distutils-precedence.pth)."""
    spec = importlib.util.find_spec("setuptools")
    if spec is None or spec.origin is None:
        pytest.skip("setuptools is not installed here")
    root = Path(spec.origin).parent.parent
    if not (root / "distutils-precedence.pth").is_file():
        pytest.skip(f"no distutils-precedence.pth beside setuptools in {root}")
    return root


def _copy_setuptools_hook(site: Path) -> None:
    """setuptools' own start-up files, copied from this environment."""
    real = _real_site()
    shutil.copy2(real / "distutils-precedence.pth", site)
    shutil.copytree(real / "_distutils_hack", site / "_distutils_hack")
    for info in real.glob("setuptools-*.dist-info"):
        shutil.copytree(info, site / info.name)


# --- this environment ---------------------------------------------------------------------


def test_this_environment_has_only_known_hooks():
    """The honest environment the tests run in (an editable install and setuptools) stays
    clean: every start-up hook in it is what a packaging tool wrote."""
    hooks = startup.import_hooks()
    assert all(h["known"] for h in hooks), [(h["path"], h.get("why")) for h in hooks]


# --- setuptools' distutils-precedence.pth -------------------------------------------------


def test_setuptools_distutils_hook_copied_from_this_environment_is_known(site_dir):
    _copy_setuptools_hook(site_dir)
    hook = _hooks()["distutils-precedence.pth"]
    assert hook["known"], hook.get("why")
    assert hook["sha256"] and hook["imports"][0]["module"] == "_distutils_hack"
    assert Path(hook["imports"][0]["path"]).is_relative_to(site_dir)


def test_a_planted_distutils_hook_runs_its_code(site_dir, tmp_path):
    """The attack is real: Python runs every import line of a file with the setuptools name."""
    (site_dir / "distutils-precedence.pth").write_text(
        DISTUTILS_LINE + "import os; os.environ['PLANTED'] = '1'\n"
    )
    code = "import site, os, sys; site.addsitedir(sys.argv[1]); print(os.environ.get('PLANTED'))"
    res = subprocess.run(
        [sys.executable, "-S", "-c", code, str(site_dir)],
        capture_output=True, text=True, check=True, cwd=tmp_path,
        env={**os.environ, "SETUPTOOLS_USE_DISTUTILS": "stdlib"},
    )  # fmt: skip
    assert res.stdout.strip() == "1"


@pytest.mark.parametrize(
    "content",
    [
        DISTUTILS_LINE + "import os; os.environ['PLANTED'] = '1'\n",  # a second line
        DISTUTILS_LINE.replace("add_shim(); ", "add_shim(); __import__('os').getcwd(); "),
        DISTUTILS_LINE.rstrip("\n") + "\rimport os\n",  # a line behind a bare carriage return
        "import os; os.environ['PLANTED'] = '1'\n",
    ],
    ids=["second-line", "extra-statement", "carriage-return", "other-code"],
)
def test_distutils_hook_with_other_content_is_not_known(site_dir, content):
    _copy_setuptools_hook(site_dir)
    (site_dir / "distutils-precedence.pth").write_text(content, newline="")
    hook = _hooks()["distutils-precedence.pth"]
    assert not hook["known"]
    assert "name of a packaging file (setuptools), content not" in hook["why"]


def test_distutils_hook_variants_setuptools_writes_are_known(site_dir):
    """The ``stdlib`` default (as distributions patch it) and no trailing ``; ``; the line
    imports nothing while the variable is not ``local``, so no module is checked."""
    line = DISTUTILS_LINE.replace("'local') ==", "'stdlib') ==").replace("(); \n", "()")
    (site_dir / "distutils-precedence.pth").write_text(line)
    hook = _hooks()["distutils-precedence.pth"]
    assert hook["known"] and hook["imports"] == [], hook.get("why")


def test_edited_distutils_hack_is_not_known(site_dir):
    """The honest line imports ``_distutils_hack``: an edit there runs as surely."""
    _copy_setuptools_hook(site_dir)
    shutil.rmtree(site_dir / "_distutils_hack" / "__pycache__", ignore_errors=True)
    init = site_dir / "_distutils_hack" / "__init__.py"
    init.write_text(init.read_text() + "\nimport os\nos.environ['PLANTED'] = '1'\n")
    hook = _hooks()["distutils-precedence.pth"]
    assert not hook["known"] and "not the file setuptools installed" in hook["why"]


def test_distutils_hack_from_elsewhere_on_the_path_is_not_known(site_dir, tmp_path, monkeypatch):
    _copy_setuptools_hook(site_dir)
    shadow = tmp_path / "shadow"
    (shadow / "_distutils_hack").mkdir(parents=True)
    (shadow / "_distutils_hack" / "__init__.py").write_text("def add_shim():\n    pass\n")
    monkeypatch.syspath_prepend(str(shadow))
    hook = _hooks()["distutils-precedence.pth"]
    assert not hook["known"] and "runs from" in hook["why"] and str(shadow) in hook["why"]


def test_planted_bytecode_of_distutils_hack_is_not_known(site_dir, tmp_path):
    """An unchecked-hash ``.pyc`` compiled from other code runs in place of the untouched file."""
    _copy_setuptools_hook(site_dir)
    source = site_dir / "_distutils_hack" / "__init__.py"
    other = tmp_path / "other.py"
    other.write_text(source.read_text() + "\nPLANTED = True\n")
    py_compile.compile(
        str(other),
        cfile=importlib.util.cache_from_source(str(source)),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    hook = _hooks()["distutils-precedence.pth"]
    assert not hook["known"] and "not compiled from it" in hook["why"]


# --- setuptools' editable install ---------------------------------------------------------


def _editable(site: Path, mapping: dict[str, str], namespaces: dict | None = None) -> Path:
    """An editable install as setuptools writes it: the .pth and the finder module made by the
    installed setuptools' own template function."""
    editable_wheel = pytest.importorskip("setuptools.command.editable_wheel")
    name = "__editable__.demo_pkg-1.0.finder"
    finder = "__editable___demo_pkg_1_0_finder"
    text = editable_wheel._finder_template(name, mapping, namespaces or {})
    (site / f"{finder}.py").write_bytes(text.encode("utf-8"))
    (site / "__editable__.demo_pkg-1.0.pth").write_text(f"import {finder}; {finder}.install()")
    return site / f"{finder}.py"


def test_editable_install_as_setuptools_writes_it_is_known(site_dir, tmp_path):
    _editable(site_dir, {"demo_pkg": str(tmp_path / "src" / "demo_pkg")}, {"ns": []})
    (site_dir / "__editable__.plain-2.0.pth").write_text(f"{tmp_path / 'src'}\n")  # paths only
    hooks = _hooks()
    assert set(hooks) == {"__editable__.demo_pkg-1.0.pth"}
    hook = hooks["__editable__.demo_pkg-1.0.pth"]
    assert hook["known"], hook.get("why")
    assert hook["imports"][0]["module"] == "__editable___demo_pkg_1_0_finder"


def test_edited_editable_finder_is_not_known(site_dir, tmp_path):
    finder = _editable(site_dir, {"demo_pkg": str(tmp_path / "src" / "demo_pkg")})
    finder.write_text(finder.read_text() + "\nimport os\nos.environ['PLANTED'] = '1'\n")
    hook = _hooks()["__editable__.demo_pkg-1.0.pth"]
    assert not hook["known"]
    assert "is not the finder template of the setuptools" in hook["why"]
    assert str(finder) in hook["why"]


def test_editable_finder_with_an_edited_method_is_not_known(site_dir, tmp_path):
    """The same MAPPING and NAMESPACES, other code in a method."""
    finder = _editable(site_dir, {"demo_pkg": str(tmp_path / "src" / "demo_pkg")})
    text = finder.read_text()
    assert "        return None\n" in text
    other = "        return __import__('os').environ.setdefault('X', '1') and None\n"
    finder.write_text(text.replace("        return None\n", other, 1))
    hook = _hooks()["__editable__.demo_pkg-1.0.pth"]
    assert not hook["known"]


@pytest.mark.parametrize(
    "line",
    [
        "import __editable___demo_pkg_1_0_finder; __editable___demo_pkg_1_0_finder.install(); "
        "import os",
        "import __editable___other_finder; __editable___other_finder.install()",
        "import os; os.environ['PLANTED'] = '1'",
    ],
    ids=["extra-statement", "other-finder", "other-code"],
)
def test_editable_pth_with_other_content_is_not_known(site_dir, tmp_path, line):
    _editable(site_dir, {"demo_pkg": str(tmp_path / "src" / "demo_pkg")})
    (site_dir / "__editable__.demo_pkg-1.0.pth").write_text(line)
    hook = _hooks()["__editable__.demo_pkg-1.0.pth"]
    assert not hook["known"]
    assert "name of a packaging file (setuptools editable install)" in hook["why"]


def test_editable_finder_shadowed_on_the_path_is_not_known(site_dir, tmp_path, monkeypatch):
    finder = _editable(site_dir, {"demo_pkg": str(tmp_path / "src" / "demo_pkg")})
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / finder.name).write_text("def install():\n    pass\n")
    monkeypatch.syspath_prepend(str(shadow))
    hook = _hooks()["__editable__.demo_pkg-1.0.pth"]
    assert not hook["known"] and f"runs from {shadow / finder.name}" in hook["why"]


def test_editable_finder_without_setuptools_is_not_known(site_dir, tmp_path, monkeypatch):
    _editable(site_dir, {"demo_pkg": str(tmp_path / "src" / "demo_pkg")})
    real = startup._package_dir
    monkeypatch.setattr(startup, "_package_dir", lambda n: None if n == "setuptools" else real(n))
    hook = _hooks()["__editable__.demo_pkg-1.0.pth"]
    assert not hook["known"] and "cannot be checked: setuptools" in hook["why"]


# --- setuptools' namespace packages -------------------------------------------------------


def _nspkg_lines(*packages: str, root: str | None = None) -> str:
    """Namespace lines made by the installed setuptools' own installer (``root``: a develop
    install's folder; else the site directory)."""
    namespaces = pytest.importorskip("setuptools.namespaces")
    installer = object.__new__(namespaces.DevelopInstaller if root else namespaces.Installer)
    installer.egg_path = root
    return "".join(installer._gen_nspkg_line(pkg) for pkg in packages)


#: a line of an older setuptools, as wheels it built still install it (protobuf 3.x)
OLD_NSPKG = (
    "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join("
    "sys._getframe(1).f_locals['sitedir'], *('google',));importlib = has_mfs and "
    "__import__('importlib.util');has_mfs and __import__('importlib.machinery');m = has_mfs and "
    "sys.modules.setdefault('google', importlib.util.module_from_spec("
    "importlib.machinery.PathFinder.find_spec('google', [os.path.dirname(p)])));m = m or not "
    "has_mfs and sys.modules.setdefault('google', types.ModuleType('google'));mp = (m or []) and "
    "m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)\n"
)


def _honest_nspkg(kind: str) -> str:
    if kind == "site":
        return _nspkg_lines("google", "google.cloud")
    if kind == "develop":
        return _nspkg_lines("mpl_toolkits", root="/opt/src/matplotlib")
    return OLD_NSPKG


def _edited_nspkg(kind: str) -> str:
    line = _nspkg_lines("google")
    if kind == "extra-statement":
        return line.rstrip("\n") + ";__import__('os').environ.setdefault('X', '1')\n"
    if kind == "code-as-root":
        line = _nspkg_lines("google", root="/opt/src")
        return line.replace("'/opt/src'", "__import__('os').environ.setdefault('X', '/opt/src')")
    if kind == "second-line":
        return line + "import os; os.environ['PLANTED'] = '1'\n"
    return line.replace("*('google',)", "*('goog',)")


@pytest.mark.parametrize("kind", ["site", "develop", "older-setuptools"])
def test_namespace_lines_setuptools_writes_are_known(site_dir, kind):
    (site_dir / "demo-1.0-py3.11-nspkg.pth").write_text(_honest_nspkg(kind))
    hook = _hooks()["demo-1.0-py3.11-nspkg.pth"]
    assert hook["known"], hook.get("why")


@pytest.mark.parametrize("kind", ["extra-statement", "code-as-root", "second-line", "other-path"])
def test_edited_namespace_lines_are_not_known(site_dir, kind):
    content = _edited_nspkg(kind)
    assert content != _nspkg_lines("google")
    (site_dir / "demo-1.0-py3.11-nspkg.pth").write_text(content)
    hook = _hooks()["demo-1.0-py3.11-nspkg.pth"]
    assert not hook["known"]
    assert "name of a packaging file (setuptools namespace package)" in hook["why"]


# --- virtualenv ---------------------------------------------------------------------------

VIRTUALENV_PATCH = (
    '"""Patches that are applied at runtime to the virtual environment."""\n\nX = 1\n'
)


def _virtualenv_package(tmp_path: Path, monkeypatch, text: str) -> Path:
    """A virtualenv package on the path holding its copy of ``_virtualenv.py``."""
    root = tmp_path / "tools"
    ref = root / "virtualenv" / "create" / "via_global_ref"
    ref.mkdir(parents=True)
    (root / "virtualenv" / "__init__.py").write_text("")
    (ref / "_virtualenv.py").write_text(text)
    monkeypatch.syspath_prepend(str(root))
    return ref / "_virtualenv.py"


def test_virtualenv_hook_equal_to_the_packages_copy_is_known(site_dir, tmp_path, monkeypatch):
    _virtualenv_package(tmp_path, monkeypatch, VIRTUALENV_PATCH)
    (site_dir / "_virtualenv.pth").write_text("import _virtualenv")
    (site_dir / "_virtualenv.py").write_text(VIRTUALENV_PATCH)
    hook = _hooks()["_virtualenv.pth"]
    assert hook["known"], hook.get("why")


def test_virtualenv_script_dir_filled_in_is_known(site_dir, tmp_path, monkeypatch):
    template = VIRTUALENV_PATCH + 'SCRIPT_DIR = "__SCRIPT_DIR__"\n'
    _virtualenv_package(tmp_path, monkeypatch, template)
    (site_dir / "_virtualenv.pth").write_text("import _virtualenv")
    (site_dir / "_virtualenv.py").write_text(template.replace('"__SCRIPT_DIR__"', "'../../bin'"))
    assert _hooks()["_virtualenv.pth"]["known"]
    code = template.replace('"__SCRIPT_DIR__"', "__import__('os').getcwd()")
    (site_dir / "_virtualenv.py").write_text(code)
    assert not _hooks()["_virtualenv.pth"]["known"]


def test_edited_virtualenv_hook_is_not_known(site_dir, tmp_path, monkeypatch):
    _virtualenv_package(tmp_path, monkeypatch, VIRTUALENV_PATCH)
    (site_dir / "_virtualenv.pth").write_text("import _virtualenv")
    (site_dir / "_virtualenv.py").write_text(VIRTUALENV_PATCH + "import os\n")
    hook = _hooks()["_virtualenv.pth"]
    assert not hook["known"] and "is not virtualenv's" in hook["why"]
    (site_dir / "_virtualenv.py").write_text(VIRTUALENV_PATCH)
    (site_dir / "_virtualenv.pth").write_text("import _virtualenv; import os")
    hook = _hooks()["_virtualenv.pth"]
    assert not hook["known"] and "content not the line virtualenv writes" in hook["why"]


def test_virtualenv_hook_without_virtualenv_cannot_be_checked(site_dir, monkeypatch):
    real = startup._package_dir
    monkeypatch.setattr(startup, "_package_dir", lambda n: None if n == "virtualenv" else real(n))
    (site_dir / "_virtualenv.pth").write_text("import _virtualenv")
    (site_dir / "_virtualenv.py").write_text(VIRTUALENV_PATCH)
    hook = _hooks()["_virtualenv.pth"]
    assert not hook["known"] and "cannot be checked: the virtualenv package" in hook["why"]


# --- any other name, and the audit --------------------------------------------------------


def test_other_pth_with_import_lines_is_not_known_and_path_lines_are_no_hook(site_dir):
    (site_dir / "evil.pth").write_text("import os\n")
    (site_dir / "paths.pth").write_text("/opt/lib\n# a comment\n")
    hooks = _hooks()
    assert set(hooks) == {"evil.pth"}
    assert (
        not hooks["evil.pth"]["known"] and "not a file a packaging tool" in hooks["evil.pth"]["why"]
    )


def test_the_audit_fails_naming_the_file_why_and_what_to_do(site_dir):
    _copy_setuptools_hook(site_dir)
    pth = site_dir / "distutils-precedence.pth"
    pth.write_text(DISTUTILS_LINE + "import os; os.environ['PLANTED'] = '1'\n")
    record = SimpleNamespace(
        path=Path("results/s/provenance/verdict.json"),
        content={"runtime": {"hooks": startup.import_hooks(), "modules": {}, "bytecode": []}},
    )
    fails, notes = check_runtime([record])
    assert len(fails) == 1, fails
    assert str(pth) in fails[0] and "verdict.json" in fails[0]
    assert "content not the line setuptools writes" in fails[0]
    assert "pip install --force-reinstall setuptools" in fails[0]
    pth.write_text(DISTUTILS_LINE)
    record.content["runtime"]["hooks"] = startup.import_hooks()
    fails, notes = check_runtime([record])
    assert fails == [] and any("distutils-precedence.pth" in n for n in notes)
