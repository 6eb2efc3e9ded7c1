"""What actually ran: the tailgate modules a job loaded, stale bytecode, and import hooks.

The code digest (:mod:`tailgate.code`) hashes the files on disk; it cannot see code that runs
without being one of them. Each provenance record therefore also carries a **runtime
fingerprint** (:func:`fingerprint`):

* ``modules`` — every loaded ``tailgate`` module with the SHA-256 of the file it was loaded from
  (a module loaded from outside the package, e.g. a shadowing copy earlier on ``sys.path``, is
  named by its absolute path);
* ``bytecode`` — compiled files in the package that Python would run but that are not their
  source's: a ``.pyc`` in ``__pycache__`` that passes its header check (an unchecked-hash one
  always does; a timestamp one when the source's time and size match) but whose code is not the
  compiled ``.py``, and a ``.pyc`` without a source beside it;
* ``hooks`` — code Python runs at start-up before any job: ``sitecustomize`` and
  ``usercustomize`` modules, and ``.pth`` files with ``import`` lines, each with its path and
  SHA-256; one is ``known`` only when its content is what a packaging tool writes (setuptools'
  ``distutils-precedence.pth``, editable-install and namespace-package files, virtualenv's), with
  the modules its lines import checked too, and otherwise says ``why``
  (:mod:`tailgate.runtime.startup`);
* ``startup`` — the interpreter's start-up state: environment variables that make Python import
  or run code, warning options that import a module, import hooks and loaded modules from
  outside the standard library, the project and the installed distributions
  (:mod:`tailgate.runtime.interpreter`);
* ``python`` — the interpreter version and implementation.

The ``bytecode`` scan covers the package and the workflow's rule scripts (their ``_tailgate``
helper is imported first by every job). Jobs keep Python's own bytecode caches: a fresh
``PYTHONPYCACHEPREFIX`` per run would have prevented a planted ``.pyc`` from running, but it makes
every job compile numpy, scipy, pandas and matplotlib from source (measured: 12 s instead of
4 s for their imports where ``PYTHONDONTWRITEBYTECODE`` is set), so planted bytecode is
detected instead: the audit (:func:`check_runtime`) fails on records made with an import hook
that is not known (naming the file, why, and what to do), with bytecode that is not its source,
or with a tailgate module loaded from outside the package, and on one module loaded as two
different sources within a study; records without a fingerprint are named in a note.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

import tailgate
from tailgate.files.safe_read import sha256_file
from tailgate.runtime.bytecode import Status, source_of, stale, status_key
from tailgate.runtime.forkserver import DIGESTS, JUDGED
from tailgate.runtime.interpreter import check_startup, startup_state
from tailgate.runtime.startup import fix_for, import_hooks

__all__ = [
    "check_runtime",
    "fingerprint",
    "import_hooks",
    "stale_bytecode",
]


def _package() -> Path:
    return Path(tailgate.__file__).resolve().parent


def loaded_modules() -> dict[str, str]:
    """Loaded ``tailgate`` modules → SHA-256 of the file each was loaded from (a module from
    outside the package: ``outside <path>`` prefixed)."""
    package = _package()
    out = {}
    for name, mod in sorted(sys.modules.items()):
        if name != "tailgate" and not name.startswith("tailgate."):
            continue
        origin = getattr(getattr(mod, "__spec__", None), "origin", None) or getattr(
            mod, "__file__", None
        )
        if not origin or not os.path.isfile(origin):
            continue
        path = Path(origin).resolve()
        digest = sha256_file(path)
        out[name] = digest if path.is_relative_to(package) else f"outside {path}: {digest}"
    return out


#: :func:`stale`'s answers in this process (and, in a job forked from the run's warm server,
#: the server's), keyed by :func:`status_key`
_JUDGED: dict[tuple[str, Status, Status], bool] = {}


def _stale(pyc: Path, source: Path) -> bool:
    """:func:`stale`, answered once for each status of the two files; False where either is
    missing or not a regular file (a FIFO is never read)."""
    key = status_key(pyc, source)
    if key is None:
        return False
    known = _JUDGED.get(key)
    if known is None:
        served = getattr(sys.modules.get(DIGESTS), JUDGED, None)
        known = served.get(key) if isinstance(served, dict) else None
    if not isinstance(known, bool):
        known = stale(pyc, source)
        if status_key(pyc, source) == key:
            _JUDGED[key] = known
    return known


def _compiled_files(root: str) -> list[tuple[str, ...]]:
    """Every ``*.pyc`` name under ``root`` (links to folders are not followed), as path parts
    relative to it, in path order."""
    out = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        parts = () if rel == "." else tuple(rel.split(os.sep))
        out += [(*parts, name) for name in (*dirs, *files) if name.endswith(".pyc")]
    return sorted(out)


def stale_bytecode(folder: Path | None = None) -> tuple[str, ...]:
    """Compiled files under ``folder`` (the package) that Python would run but that are not
    their source's (module docstring), as paths relative to it."""
    root = folder or _package()
    out = []
    for parts in _compiled_files(str(root)):
        pyc = root.joinpath(*parts)
        rel = "/".join(parts)
        if len(parts) > 1 and parts[-2] == "__pycache__":
            source = source_of(pyc)
            if _stale(pyc, source):
                out.append(f"{rel} (run in place of {source.name}, but not compiled from it)")
        elif not pyc.with_suffix(".py").is_file():
            out.append(f"{rel} (compiled code without a source)")
    return tuple(out)


def fingerprint() -> dict[str, Any]:
    """The runtime fingerprint a provenance record carries (module docstring)."""
    hooks = import_hooks()
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "modules": loaded_modules(),
        "bytecode": [*stale_bytecode(), *_stale_scripts()],
        "hooks": hooks,
        "startup": startup_state(hooks),
    }


def _stale_scripts() -> tuple[str, ...]:
    """:func:`stale_bytecode` of the workflow's rule scripts (``workflow/scripts``), named as
    ``scripts/<path>``."""
    scripts = _package().parent / "scripts"
    if not scripts.is_dir():
        return ()
    return tuple(f"scripts/{s}" for s in stale_bytecode(scripts))


def check_runtime(records: list[Any]) -> tuple[list[str], list[str]]:
    """The audit's failures and notes over the records' runtime fingerprints."""
    fails: list[str] = []
    notes: list[str] = []
    missing: list[str] = []
    sources: dict[str, dict[str, str]] = {}
    hooks_seen: dict[str, str] = {}
    for r in records:
        rt = r.content.get("runtime")
        where = str(r.path)
        if not isinstance(rt, dict):
            missing.append(where)
            continue
        for h in rt.get("hooks") or []:
            key = f"{h.get('kind')} {h.get('path')}"
            if h.get("known") is True:
                hooks_seen.setdefault(key, where)
            else:
                why = f": {h['why']}" if h.get("why") else ""
                fix = fix_for(str(h.get("kind")), str(h.get("path")))
                fails.append(
                    f"{where}: made with an import hook ({key}, SHA-256 "
                    f"{str(h.get('sha256'))[:12]}…) that runs code before any job{why}. Fix: "
                    f"{fix}, then re-run the workflow"
                )
        for b in rt.get("bytecode") or []:
            fails.append(
                f"{where}: made with compiled tailgate code that is not its source ({b}). Fix: "
                "delete the package's __pycache__ folders and re-run the workflow"
            )
        for name, digest in (rt.get("modules") or {}).items():
            if str(digest).startswith("outside "):
                fails.append(f"{where}: module {name} was loaded from {str(digest)[8:]}")
            sources.setdefault(name, {}).setdefault(str(digest), where)
    for name, digests in sorted(sources.items()):
        if len(digests) > 1:
            fails.append(
                f"module {name} ran as {len(digests)} different sources in one study, e.g. "
                + "; ".join(f"{d[:12]}… in {w}" for d, w in list(digests.items())[:3])
            )
    if missing:
        notes.append(
            f"{len(missing)} record(s) carry no runtime fingerprint, e.g. {missing[0]} (made by "
            "an older tailgate)"
        )
    more, more_notes = check_startup(records)
    fails += more
    notes += more_notes
    for key, where in sorted(hooks_seen.items()):
        notes.append(f"start-up code from packaging tools (content checked): {key} (e.g. {where})")
    return fails, notes
