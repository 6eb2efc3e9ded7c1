"""Start-up hooks: code Python runs before any job, and whether a packaging tool wrote it.

Before a job's own code, Python runs a ``sitecustomize`` and a ``usercustomize`` module if it
finds one, and every ``import`` line of the ``.pth`` files in its site directories (with the
modules those lines import). :func:`import_hooks` lists them for the runtime fingerprint
(:mod:`tailgate.runtime.fingerprint`), each with ``kind``, ``path``, ``sha256``, ``known``, the
modules its lines import (``imports``: ``module``, ``path``, ``sha256``) and, when not known,
``why``.

A file's name is the researcher's to choose, so a hook is ``known`` only when its **content** is
what a packaging tool writes:

* ``distutils-precedence.pth`` (setuptools): the one line setuptools writes (default ``local``,
  or ``stdlib`` as some distributions patch it). Where that line imports ``_distutils_hack`` (the
  variable is ``local``, or the module is loaded), the package must be the one in the same site
  directory, found first on the path, and its ``__init__.py`` must have the SHA-256 that
  setuptools' own ``RECORD`` in that directory lists for it;
* ``__editable__.<name>.pth`` (setuptools' editable install, ``pip install -e``): lines that are
  paths, or exactly ``import F; F.install()`` where ``F`` is the finder module setuptools names
  after the file (``__editable___<name>_finder``). ``F.py`` must be in the same site directory,
  found first on the path, and byte for byte the installed setuptools' finder template
  (``setuptools/command/editable_wheel.py``, read, not imported) filled with the file's own
  ``MAPPING`` and ``NAMESPACES``. Without setuptools, or with a setuptools whose template differs
  from the one that wrote the finder, it cannot be checked and is not known;
* ``<dist>-nspkg.pth`` (setuptools' namespace packages): every line one of setuptools' templates
  (the current one and the two ``has_mfs`` ones of older setuptools, which built many wheels
  still installed), regenerated from the line's package name and root and compared;
* ``_virtualenv.pth`` (virtualenv, uv): exactly ``import _virtualenv``, and ``_virtualenv.py`` in
  the same site directory equal to the copy in the ``virtualenv`` package found on the path.
  Without that package it cannot be checked and is not known (an environment made by
  ``python -m venv`` has no such hook).

A ``.pth`` line that is not an ``import`` line only names a folder to append to ``sys.path``;
such lines make no hook. A compiled file that Python would run in place of a module checked here
(its ``__pycache__`` entry when it passes the header check but is not compiled from the source)
makes the hook unknown too. ``sitecustomize`` and ``usercustomize`` are never known.

Where no reference is at hand the check fails rather than passes: an environment the check
cannot vouch for is named, with what to do, rather than trusted. The references themselves
(setuptools' template and ``RECORD``, virtualenv's copy) are files of the environment: they catch
a planted or edited start-up file, not an installed distribution edited together with them,
which is editing the environment itself (recorded by version, as numpy is).
"""

from __future__ import annotations

import ast
import csv
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import re
import site
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from tailgate.runtime.bytecode import stale
from tailgate.runtime.installed import record_digest

__all__ = ["PACKAGING_PTH", "fix_for", "import_hooks"]

#: names of the ``.pth`` files packaging tools write (their content is what makes one known)
PACKAGING_PTH = ("distutils-precedence.pth", "__editable__.*.pth", "*-nspkg.pth", "_virtualenv.pth")

_DISTUTILS_LINE = re.compile(
    r"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; "
    r"enabled = os\.environ\.get\(var, '(?P<default>local|stdlib)'\) == 'local'; "
    r"enabled and __import__\('_distutils_hack'\)\.add_shim\(\)(?:; ?)?"
)

#: setuptools' ``-nspkg.pth`` line templates: the current one (``setuptools/namespaces.py``) and
#: the two of older setuptools (with ``has_mfs``)
_NSPKG_TEMPLATES = (
    (
        "import sys, types, os",
        "p = os.path.join(%(root)s, *%(pth)r)",
        "importlib = __import__('importlib.util')",
        "__import__('importlib.machinery')",
        "m = sys.modules.setdefault(%(pkg)r, importlib.util.module_from_spec("
        "importlib.machinery.PathFinder.find_spec(%(pkg)r, [os.path.dirname(p)])))",
        "m = m or sys.modules.setdefault(%(pkg)r, types.ModuleType(%(pkg)r))",
        "mp = (m or []) and m.__dict__.setdefault('__path__',[])",
        "(p not in mp) and mp.append(p)",
    ),
    *(
        (
            "import sys, types, os",
            "has_mfs = sys.version_info > (3, 5)",
            "p = os.path.join(%(root)s, *%(pth)r)",
            "importlib = has_mfs and __import__('importlib.util')",
            "has_mfs and __import__('importlib.machinery')",
            "m = has_mfs and sys.modules.setdefault(%(pkg)r, importlib.util.module_from_spec("
            "importlib.machinery.PathFinder.find_spec(%(pkg)r, [os.path.dirname(p)])))",
            f"m = m or {guard}sys.modules.setdefault(%(pkg)r, types.ModuleType(%(pkg)r))",
            "mp = (m or []) and m.__dict__.setdefault('__path__',[])",
            "(p not in mp) and mp.append(p)",
        )
        for guard in ("", "not has_mfs and ")
    ),
)
_NSPKG_CHILD = "m and setattr(sys.modules[%(parent)r], %(child)r, m)"
_SITEDIR_ROOT = "sys._getframe(1).f_locals['sitedir']"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _site_dirs() -> list[str]:
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _lines(data: bytes) -> list[str]:
    """The lines of a ``.pth`` file as ``site`` splits them (universal newlines), without their
    ends; a byte-order mark is dropped, so a line behind one counts as an ``import`` line."""
    text = data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    return re.split(r"\r\n|\r|\n", text)


def _is_import(line: str) -> bool:
    return line.startswith(("import ", "import\t"))


def import_hooks() -> list[dict[str, Any]]:
    """Code run at interpreter start-up (module docstring): ``kind``, ``path``, ``sha256``,
    ``known``, ``imports`` and, when not known, ``why``."""
    out: list[dict[str, Any]] = []
    for name in ("sitecustomize", "usercustomize"):
        mod = sys.modules.get(name)
        origin = getattr(mod, "__file__", None) if mod is not None else None
        if origin is None:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            origin = spec.origin if spec is not None else None
        if origin and os.path.isfile(origin):
            why = f"a {name} module runs before every job; no packaging tool installs one"
            out.append(
                {"kind": name, "path": origin, "sha256": _sha(Path(origin)), "known": False,
                 "imports": [], "why": why}
            )  # fmt: skip
    for d in _site_dirs():
        for pth in sorted(Path(d).glob("*.pth")):
            try:
                data = pth.read_bytes()
            except OSError:
                continue
            lines = _lines(data)
            if not any(_is_import(line) for line in lines):
                continue
            hook: dict[str, Any] = {
                "kind": "pth",
                "path": str(pth),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
            imports: list[dict[str, Any]] = []
            why = _judge_pth(pth, lines, imports)
            hook.update(known=why is None, imports=imports)
            if why is not None:
                hook["why"] = why
            out.append(hook)
    return out


def _judge_pth(pth: Path, lines: list[str], imports: list[dict[str, Any]]) -> str | None:
    """Why the ``.pth`` file is not what a packaging tool writes (None: it is); the modules its
    lines import are appended to ``imports``."""
    name = pth.name
    code = [line for line in lines if line.strip() and not line.startswith("#")]
    if name == "distutils-precedence.pth":
        m = _DISTUTILS_LINE.fullmatch(code[0]) if len(code) == 1 else None
        if m is None:
            return "name of a packaging file (setuptools), content not the line setuptools writes"
        loaded = "_distutils_hack" in sys.modules and _on_path(pth.parent)
        if os.environ.get("SETUPTOOLS_USE_DISTUTILS", m["default"]) != "local" and not loaded:
            return None  # the line imports nothing here
        return _check_distutils_hack(pth.parent, imports)
    if name.startswith("__editable__.") and name.endswith(".pth"):
        finder = re.sub(r"\W|^(?=\d)", "_", f"{name[: -len('.pth')]}.finder")
        expected = f"import {finder}; {finder}.install()"
        found = [line for line in code if _is_import(line)]
        if found != [expected]:
            return (
                "name of a packaging file (setuptools editable install), content not what "
                f"setuptools writes (paths, or the one line {expected!r})"
            )
        return _check_finder(pth.parent, finder, imports)
    if name.endswith("-nspkg.pth"):
        bad = next((line for line in code if not _is_nspkg_line(line)), None)
        if bad is not None:
            return (
                "name of a packaging file (setuptools namespace package), content not "
                f"setuptools' namespace line: {bad[:80]!r}"
            )
        return None
    if name == "_virtualenv.pth":
        if code != ["import _virtualenv"]:
            return (
                "name of a packaging file (virtualenv), content not the line virtualenv writes "
                "('import _virtualenv')"
            )
        return _check_virtualenv(pth.parent, imports)
    return "not a file a packaging tool writes (setuptools, virtualenv): its import lines run code"


def _is_nspkg_line(line: str) -> bool:
    """Whether ``line`` is setuptools' namespace-package line for some package and root,
    regenerated from both and compared."""
    m = re.search(r"types\.ModuleType\(('[A-Za-z_][\w.]*')\)\)", line)
    if m is None:
        return False
    pkg = ast.literal_eval(m[1])
    pth = tuple(pkg.split("."))
    head = "p = os.path.join("
    start = line.find(head)
    end = line.find(f", *{pth!r})", start)
    if start < 0 or end < 0:
        return False
    root = line[start + len(head) : end]
    if root != _SITEDIR_ROOT:
        try:
            value = ast.literal_eval(root)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return False
        if not isinstance(value, str) or repr(value) != root:
            return False
    parent, _, child = pkg.rpartition(".")
    fields = {"root": root, "pth": pth, "pkg": pkg, "parent": parent, "child": child}
    for template in _NSPKG_TEMPLATES:
        parts = template + ((_NSPKG_CHILD,) if parent else ())
        if line == ";".join(parts) % fields:
            return True
    return False


def _on_path(sitedir: Path) -> bool:
    want = os.path.realpath(sitedir)
    return any(os.path.realpath(p or os.curdir) == want for p in sys.path)


def _startup_path(sitedir: Path) -> list[str]:
    """Where Python looked when the site directory's ``.pth`` files ran: ``sys.path`` up to the
    site directory (all of it and then the directory, when it is not on the path)."""
    want = os.path.realpath(sitedir)
    for i, p in enumerate(sys.path):
        if os.path.realpath(p or os.curdir) == want:
            return sys.path[: i + 1]
    return [*sys.path, str(sitedir)]


def _check_module(
    name: str, sitedir: Path, expected: Path, imports: list[dict[str, Any]]
) -> str | None:
    """Why module ``name`` is not run from ``expected`` (None: it is): the module loaded at
    start-up (when the site directory is on the path) or the one found first, and a compiled
    file run in its place that is not compiled from it. The module is appended to ``imports``."""
    entry: dict[str, Any] = {"module": name, "path": None, "sha256": None}
    imports.append(entry)
    mod = sys.modules.get(name) if _on_path(sitedir) else None
    origin = getattr(mod, "__file__", None) if mod is not None else None
    if origin is None:
        importlib.invalidate_caches()
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, _startup_path(sitedir))
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
    if origin is None or not os.path.isfile(origin):
        return f"imports {name}, which is not found in {sitedir}"
    entry.update(path=str(origin), sha256=_sha(Path(origin)))
    if os.path.realpath(origin) != os.path.realpath(expected):
        return f"imports {name}, which runs from {origin} instead of {expected}"
    pyc = Path(importlib.util.cache_from_source(str(expected)))
    if pyc.is_file() and stale(pyc, expected):
        return f"imports {name}, in whose place {pyc} runs, which is not compiled from it"
    return None


def _check_distutils_hack(sitedir: Path, imports: list[dict[str, Any]]) -> str | None:
    source = sitedir / "_distutils_hack" / "__init__.py"
    why = _check_module("_distutils_hack", sitedir, source, imports)
    if why is not None:
        return why
    listed = _record_hash(sitedir, "setuptools", "_distutils_hack/__init__.py")
    if listed is None:
        return (
            f"imports _distutils_hack, which cannot be checked: no setuptools RECORD in {sitedir} "
            "lists it"
        )
    if record_digest(hashlib.sha256(source.read_bytes()).digest()) != listed:
        return f"imports _distutils_hack, whose {source} is not the file setuptools installed"
    return None


def _record_hash(sitedir: Path, dist: str, rel: str) -> str | None:
    """The SHA-256 (URL-safe base64, as in ``RECORD``) that distribution ``dist``'s ``RECORD`` in
    ``sitedir`` lists for ``rel``."""
    for record in sorted(sitedir.glob(f"{dist}-*.dist-info/RECORD")):
        try:
            rows = list(csv.reader(io.StringIO(record.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, csv.Error):
            continue
        for row in rows:
            if len(row) > 1 and row[0] == rel and row[1].startswith("sha256="):
                return row[1][len("sha256=") :]
    return None


def _package_dir(name: str) -> Path | None:
    """The folder of package ``name`` found on the path, without importing it."""
    try:
        spec = importlib.machinery.PathFinder.find_spec(name, sys.path)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=4)
def _finder_template(source: Path) -> str | None:
    """``_FINDER_TEMPLATE`` of setuptools' ``editable_wheel.py`` at ``source``, read from its
    syntax tree (setuptools is not imported)."""
    try:
        tree = ast.parse(source.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and node.targets else None
        if isinstance(target, ast.Name) and target.id == "_FINDER_TEMPLATE":
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    return None


def _finder_values(source: bytes) -> tuple[str, Any, Any] | None:
    """The finder module's name (in ``PATH_PLACEHOLDER``), ``MAPPING`` and ``NAMESPACES``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        if target.id in ("MAPPING", "NAMESPACES"):
            try:
                values[target.id] = ast.literal_eval(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None
        elif target.id == "PATH_PLACEHOLDER":
            left = value.left if isinstance(value, ast.BinOp) else None
            if isinstance(left, ast.Constant) and isinstance(left.value, str):
                values["name"] = left.value
    mapping, namespaces = values.get("MAPPING"), values.get("NAMESPACES")
    if "name" not in values or not isinstance(mapping, dict) or not isinstance(namespaces, dict):
        return None
    return values["name"], mapping, namespaces


def _check_finder(sitedir: Path, finder: str, imports: list[dict[str, Any]]) -> str | None:
    source = sitedir / f"{finder}.py"
    why = _check_module(finder, sitedir, source, imports)
    if why is not None:
        return why
    setuptools = _package_dir("setuptools")
    if setuptools is None:
        return (
            f"imports {finder}, which cannot be checked: setuptools, whose template it must "
            "match, is not installed here"
        )
    wheel = setuptools / "command" / "editable_wheel.py"
    template = _finder_template(wheel)
    if template is None:
        return f"imports {finder}, which cannot be checked: {wheel} has no finder template"
    data = source.read_bytes()
    values = _finder_values(data)
    made = None
    if values is not None:
        name, mapping, namespaces = values
        try:
            mapping = dict(sorted(mapping.items(), key=lambda kv: kv[0]))
            made = template.format(name=name, mapping=mapping, namespaces=namespaces)
        except (KeyError, IndexError, ValueError, TypeError):
            made = None
    if made is None or made.encode("utf-8") != data:
        return (
            f"imports {finder}, whose file {source} is not the finder template of the setuptools "
            f"at {setuptools} filled with its own MAPPING and NAMESPACES (edited, or written by "
            "another setuptools version)"
        )
    return None


def _check_virtualenv(sitedir: Path, imports: list[dict[str, Any]]) -> str | None:
    source = sitedir / "_virtualenv.py"
    why = _check_module("_virtualenv", sitedir, source, imports)
    if why is not None:
        return why
    virtualenv = _package_dir("virtualenv")
    if virtualenv is None:
        return (
            "imports _virtualenv, which cannot be checked: the virtualenv package, whose copy it "
            "must equal, is not installed here"
        )
    reference = virtualenv / "create" / "via_global_ref" / "_virtualenv.py"
    try:
        want = reference.read_bytes().replace(b"\r\n", b"\n")
    except OSError:
        return f"imports _virtualenv, which cannot be checked: {reference} cannot be read"
    have = source.read_bytes().replace(b"\r\n", b"\n")
    if have == want or _script_dir_filled(want, have):
        return None
    return f"imports _virtualenv, whose {source} is not virtualenv's {reference}"


def _script_dir_filled(template: bytes, have: bytes) -> bool:
    """Whether ``have`` is ``template`` with its ``"__SCRIPT_DIR__"`` replaced by a string literal
    (as older virtualenv writes it)."""
    marker = b'"__SCRIPT_DIR__"'
    if template.count(marker) != 1:
        return False
    head, tail = template.split(marker)
    if not (have.startswith(head) and have.endswith(tail)) or len(have) < len(head) + len(tail):
        return False
    literal = have[len(head) : len(have) - len(tail)].decode("utf-8", errors="replace")
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return isinstance(value, str) and repr(value) == literal


def fix_for(kind: str, path: str) -> str:
    """What to do about a start-up hook that is not known, by its kind and file name."""
    name = Path(path).name
    if kind != "pth":
        return f"remove {path} (or take its folder off PYTHONPATH)"
    if name == "distutils-precedence.pth":
        return (
            "reinstall setuptools with pip (pip install --force-reinstall setuptools) or remove "
            f"{path}"
        )
    if name.startswith("__editable__."):
        return (
            "reinstall the package with pip (pip install -e <its project folder>, with "
            "--no-build-isolation to write the finder with the setuptools installed here) or "
            f"remove {path}"
        )
    if name.endswith("-nspkg.pth"):
        dist = name.split("-", 1)[0]
        return f"reinstall {dist} with pip (pip install --force-reinstall {dist}) or remove {path}"
    if name == "_virtualenv.pth":
        return (
            f"remove {path} and the _virtualenv.py beside it, or make the environment with "
            "python -m venv, which writes no start-up code"
        )
    return f"remove {path} from the environment"
