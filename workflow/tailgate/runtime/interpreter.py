"""What the interpreter ran before and beside a job's code: its start-up state.

Start-up files (:mod:`tailgate.runtime.startup`) are only one way to run code in a job without
changing a file of the project. Python also imports or runs code because of its environment
variables (a ``PYTHONPATH`` folder shadows an installed package; ``PYTHONWARNINGS`` or ``-W``
naming a category ``mod.Category`` makes Python import ``mod`` at start-up, before the job's own
code), and any code that ran can leave an import hook in ``sys.meta_path`` or
``sys.path_hooks`` or a module loaded from anywhere. :func:`startup_state` therefore records,
for every provenance record, what actually ran:

* ``variables`` — the set environment variables that make Python import or run code, or move
  where it reads code from: ``PYTHONPATH``, ``PYTHONHOME``, ``PYTHONUSERBASE``,
  ``PYTHONPLATLIBDIR``, ``PYTHONPYCACHEPREFIX`` (compiled code read from a folder the bytecode
  check does not scan), ``PYTHONSTARTUP`` (run by an interactive interpreter only),
  ``PYTHONWARNINGS``, ``PYTHONBREAKPOINT``, ``PYTHONSAFEPATH`` and ``LD_PRELOAD`` (native code
  loaded into every process), with their values;
* ``warning_imports`` — the modules the warning options (``PYTHONWARNINGS`` and ``-W``, as
  ``sys.warnoptions`` holds them) name as a category's module, which Python imports at start-up;
* ``hooks`` — the entries of ``sys.meta_path`` and ``sys.path_hooks`` that are not the
  interpreter's and whose defining module is not vouched for (below): setuptools' editable
  finder, ``_distutils_hack``'s finder or tailgate's own are vouched for by their files;
* ``foreign_modules`` — every loaded module whose file is neither the standard library, nor a
  file of the project's digested code (:mod:`tailgate.code`) or of another copy of it with the
  same code digest (judged by what the code is, not where it lies: one environment serving
  several working copies), nor a file that an installed distribution's ``RECORD`` lists with
  the file's SHA-256, nor a start-up module the start-up check found to be a packaging tool's;
  each with its path and SHA-256.

The ``RECORD`` files of a site folder are read once a process, only a loaded file outside the
standard library is hashed, and each module's file is judged once a process (a later record of
the same job judges only the modules loaded since). A job forked from the run's warm server takes
the server's judgement of every file the server loaded, while the file has the status the server
hashed (one ``stat`` a file). A job's own script, which Snakemake writes as a copy of a
rule script with a preamble, is vouched for when it ends with the bytes of a digested rule script.

The audit (:func:`check_startup`) fails on a record made with any of these: a variable of
:data:`FLAGGED` (``PYTHONSTARTUP`` where the interpreter was interactive), a warning option that
imports a module, a hook or a foreign module, naming each. What it cannot see is what left no
trace in the process: a patch that removed itself from ``sys.modules`` and the environment after
running, or a record written by hand. Only ``tailgate audit --reproduce`` on the reviewer's own
machine rules those out (threat model).
"""

from __future__ import annotations

import hashlib
import os
import sys
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from tailgate.code import code_digest, code_files, digest_of
from tailgate.runtime.forkserver import DIGESTS, RECORDS, VOUCHED
from tailgate.runtime.installed import (
    distributed,
    record_digest,
    record_statuses,
    site_folders,
    site_records,
    status_of,
    stdlib_folders,
)

__all__ = ["FLAGGED", "check_startup", "forget", "startup_state"]

#: variables that make Python import or run code, or move where it reads code from, and why
FLAGGED = {
    "PYTHONPATH": "puts folders before the installed packages on the import path",
    "PYTHONHOME": "moves the standard library to another folder",
    "PYTHONUSERBASE": "moves the user site folder, whose .pth files run at start-up",
    "PYTHONPLATLIBDIR": "moves the platform library folder",
    "PYTHONPYCACHEPREFIX": "reads compiled code from a folder the bytecode check does not scan",
    "PYTHONSTARTUP": "runs a file at the start of an interactive interpreter",
    "LD_PRELOAD": "loads native code into every process",
}
#: recorded beside them: they name code but run none in a job by themselves
_RECORDED = ("PYTHONWARNINGS", "PYTHONBREAKPOINT", "PYTHONSAFEPATH", "PYTHONNOUSERSITE")
_INTERPRETER = frozenset(
    {"_frozen_importlib", "_frozen_importlib_external", "zipimport", "importlib._bootstrap"}
    | {"importlib._bootstrap_external", "importlib.machinery"}
)


def _real(path: str | Path) -> str:
    """``os.path.realpath``; in a job forked from the run's warm server, for the file a
    preloaded module names, the real path the server found (:func:`_server_real`)."""
    return _server_real(path) or os.path.realpath(path)


def _server_real(path: str | Path) -> str | None:
    """The real path the run's warm server found for the file a module it loaded names, while
    the file ``path`` leads to is the one the server hashed (one status, not one a path
    component); else None."""
    origins = getattr(sys.modules.get(DIGESTS), "origins", None)
    real = origins.get(path) if isinstance(origins, dict) else None
    return real if isinstance(real, str) and _preloaded(real, through=path) is not None else None


@lru_cache(maxsize=1)
def _stdlib() -> tuple[str, ...]:
    return stdlib_folders()


@lru_cache(maxsize=1)
def _site_dirs() -> tuple[str, ...]:
    """Folders that may hold installed distributions (:func:`site_folders` of this process's
    import path), found once a process."""
    return site_folders(sys.path)


@cache
def _records(sitedir: str) -> dict[str, str]:
    """Every file the ``RECORD`` files in ``sitedir`` list → its SHA-256 (URL-safe base64), read
    once a process (:func:`tailgate.runtime.installed.site_records`); in a job forked from the run's
    warm server, the server's reading while every ``RECORD`` there has the status it had then."""
    table = getattr(sys.modules.get(DIGESTS), RECORDS, None)
    entry = table.get(sitedir) if isinstance(table, dict) else None
    if (
        isinstance(entry, tuple)
        and len(entry) == 2
        and isinstance(entry[1], dict)
        and entry[0] == record_statuses(sitedir)
    ):
        return entry[1]
    return site_records(sitedir)[1]


@cache
def _digest(path: str) -> tuple[str, str] | None:
    """(hex, URL-safe base64 as in ``RECORD``) SHA-256 of a file, once a process: in a job
    forked from the run's warm server, the server's digest of a file it loaded where the file's
    status is still the one it hashed (:data:`tailgate.runtime.forkserver.DIGESTS`)."""
    digest = _preloaded(path)
    if digest is None:
        try:
            with open(path, "rb") as fh:
                digest = hashlib.file_digest(fh, "sha256").digest()
        except OSError:
            return None
    return digest.hex(), record_digest(digest)


def _preloaded(path: str, through: str | Path | None = None) -> bytes | None:
    """The warm server's SHA-256 of ``path`` (a real path), where its device, inode, size and
    modification time (or those of the file ``through`` leads to) are those the server hashed;
    else None."""
    files = getattr(sys.modules.get(DIGESTS), "files", None)
    entry = files.get(path) if isinstance(files, dict) else None
    if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], bytes)):
        return None
    try:
        st = os.stat(path if through is None else through)
    except OSError:
        return None
    return entry[1] if entry[0] == status_of(st) else None


@lru_cache(maxsize=1)
def _project() -> tuple[frozenset[str], tuple[bytes, ...]]:
    """The digested code's files, and the bytes of the rule scripts."""
    files = code_files()
    scripts = tuple(
        p.read_bytes() for name, p in files if name.startswith("workflow/scripts/") and p.is_file()
    )
    # the folders code_files walks are real paths: only a file that is a link leads elsewhere
    return frozenset(_real(p) if os.path.islink(p) else str(p) for _, p in files), scripts


def _vouched(path: str, known_hook_files: frozenset[str]) -> bool:
    """Whether the file a module was loaded from is the standard library, the project's code,
    a distribution's file with the hash its ``RECORD`` lists, or a known start-up module."""
    judged = _judged(path)
    if judged is None:
        return False
    real, verdict = judged
    return verdict or real in _project()[0] or real in known_hook_files or _same_code(real)


@cache
def _same_code(real: str) -> bool:
    """Whether the file at ``real`` (a real path) is one of the digested files of another copy
    of the project's code whose code digest is the project's: the same code in another place
    (a second clone or ``git worktree`` run with the first checkout's environment, whose
    editable install starts the run's warm server from the first checkout). The copy is the
    ``tailgate`` package folder nearest above the file, judged whole: every file it runs from
    its own folder (the server's ``RECORD`` reader and bytecode check) is the project's too."""
    package = next((p for p in Path(real).parents if p.name == "tailgate"), None)
    if package is None or not (package / "__init__.py").is_file():
        return False
    try:
        files = code_files(package)
        return any(str(p) == real for _, p in files) and digest_of(files) == code_digest()
    except OSError:
        return False


@cache
def _judged(path: str) -> tuple[str, bool] | None:
    """The real path of the file a module names and whether where it lies vouches for it (the
    standard library, a distribution's file listed with its hash, a copy of a rule script that
    Snakemake wrote), once a process; None where it is not a file. In a job forked from the
    run's warm server, a file the server loaded and judged takes the server's judgement at one
    status (:func:`_server_real`, :func:`_served`)."""
    real = _server_real(path)
    served = _served() if real is not None else None
    if served is not None and isinstance(served.get(real), bool):
        return real, served[real]
    if not os.path.isfile(path):
        return None
    real = real or os.path.realpath(path)
    verdict = _installed(real)
    if verdict is not None:
        return real, verdict
    scripts = _project()[1]
    if scripts and real.endswith(".py") and f"{os.sep}.snakemake{os.sep}scripts{os.sep}" in real:
        try:
            data = Path(real).read_bytes()
        except OSError:
            return real, False
        return real, any(data.endswith(s) for s in scripts)
    return real, False


@cache
def _installed(real: str) -> bool | None:
    """:func:`distributed` for this process's folders and listings, once a process (as the
    digests it compares)."""
    return distributed(real, _stdlib(), _site_dirs(), _records, _listed_digest)


@lru_cache(maxsize=1)
def _served() -> dict[str, Any] | None:
    """The warm server's judgements (:data:`tailgate.runtime.forkserver.VOUCHED`) where it judged
    with this process's standard library and site folders and every site folder's ``RECORD``
    listing is the server's reading (each ``RECORD`` as it was read); else None."""
    table = sys.modules.get(DIGESTS)
    entry = getattr(table, VOUCHED, None)
    sites = getattr(table, RECORDS, None)
    if not (isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[2], dict)):
        return None
    if not isinstance(sites, dict) or (entry[0], entry[1]) != (_stdlib(), _site_dirs()):
        return None
    for d in entry[1]:
        served = sites.get(d)
        if not (isinstance(served, tuple) and len(served) == 2 and _records(d) is served[1]):
            return None
    return entry[2]


def _listed_digest(real: str) -> str | None:
    digest = _digest(real)
    return digest[1] if digest is not None else None


#: what this process keeps of what it read and judged
_KEPT = (_stdlib, _site_dirs, _records, _digest, _installed, _served, _judged, _same_code)


def forget() -> None:
    """Forget what this process has read and judged (folders, listings, digests, judgements):
    for a long-lived process whose files changed, such as a test's."""
    for cached in _KEPT:
        cached.cache_clear()


def _named_file(module: Any) -> str | None:
    """The file a module names as its origin (its spec's, else ``__file__``)."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) if spec is not None else None
    origin = origin or getattr(module, "__file__", None)
    return origin if isinstance(origin, str) else None


def _origin(module: Any) -> str | None:
    origin = _named_file(module)
    return origin if origin is not None and os.path.isfile(origin) else None


def _hook_entries(known: frozenset[str]) -> list[dict[str, Any]]:
    out = []
    for kind, entries in (("meta_path", sys.meta_path), ("path_hooks", sys.path_hooks)):
        for e in list(entries):
            owner = e if isinstance(e, type) or hasattr(e, "__qualname__") else type(e)
            modname = str(getattr(owner, "__module__", None) or type(e).__module__)
            name = str(getattr(owner, "__qualname__", type(e).__qualname__))
            if modname in _INTERPRETER:
                continue
            origin = _origin(sys.modules.get(modname)) if modname in sys.modules else None
            if origin is not None and _vouched(origin, known):
                continue
            out.append({"kind": kind, "name": f"{modname}.{name}", "path": origin})
    return out


def _warning_imports() -> list[str]:
    """Modules a warning option names as a category's module (Python imports them)."""
    out = []
    for option in sys.warnoptions:
        fields = [f.strip() for f in option.split(":")]
        category = fields[2] if len(fields) > 2 else ""
        if "." in category:
            out.append(category.rpartition(".")[0])
    return list(dict.fromkeys(out))


def startup_state(hooks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The interpreter's start-up state (module docstring); ``hooks``: the start-up hooks of
    :func:`tailgate.runtime.startup.import_hooks`, whose known modules are vouched for."""
    known = frozenset(
        _real(i["path"])
        for h in hooks or []
        if h.get("known") is True
        for i in h.get("imports") or []
        if i.get("path")
    )
    foreign = []
    for name, module in sorted(sys.modules.items()):
        origin = _named_file(module) if module is not None else None
        judged = _judged(origin) if origin is not None else None
        if judged is None or _vouched(origin, known):
            continue
        digest = _digest(judged[0])
        foreign.append({"module": name, "path": origin, "sha256": digest[0] if digest else None})
    names = (*FLAGGED, *_RECORDED)
    return {
        "variables": {k: os.environ[k] for k in names if k in os.environ},
        "interactive": bool(sys.flags.interactive or sys.flags.inspect),
        "warning_imports": _warning_imports(),
        "hooks": _hook_entries(known),
        "foreign_modules": foreign,
    }


def check_startup(records: list[Any]) -> tuple[list[str], list[str]]:
    """The audit's failures and notes over the records' start-up states (module docstring)."""
    fails: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    missing = []
    for r in records:
        rt = r.content.get("runtime")
        if not isinstance(rt, dict):
            continue  # named by the runtime check
        state = rt.get("startup")
        where = str(r.path)
        if not isinstance(state, dict):
            missing.append(where)
            continue
        found = []
        variables = state.get("variables") or {}
        for name, why in FLAGGED.items():
            if name in variables and (name != "PYTHONSTARTUP" or state.get("interactive")):
                found.append(f"{name}={str(variables[name])[:200]} ({why})")
        for module in state.get("warning_imports") or []:
            found.append(
                f"a warning option (PYTHONWARNINGS or -W) names a category of module {module}, "
                "which Python imports at start-up"
            )
        for h in state.get("hooks") or []:
            found.append(
                f"an import hook in sys.{h.get('kind')}: {h.get('name')} ({h.get('path')})"
            )
        for m in state.get("foreign_modules") or []:
            found.append(
                f"module {m.get('module')} loaded from {m.get('path')} (SHA-256 "
                f"{str(m.get('sha256'))[:12]}…), which is neither the standard library, the "
                "project's code nor a file of an installed distribution"
            )
        for item in found:
            if item in seen:
                continue
            seen.add(item)
            fails.append(
                f"{where}: made by an interpreter that ran code from outside the project and its "
                f"installed packages: {item}. Fix: run the workflow without it (unset the "
                "variable, remove the module), then re-run it"
            )
    if missing:
        notes.append(
            f"{len(missing)} record(s) carry no start-up state, e.g. {missing[0]} (made by an "
            "older tailgate)"
        )
    return fails, notes
