"""The code that makes results: a digest of the tailgate package and workflow actually in use.

Every provenance record and lock entry carries :func:`code_digest`, the SHA-256 over the files of
the imported ``tailgate`` package (Python sources and the data it ships, such as the
Anderson–Darling table and the JSON schemas) and of the workflow beside it (Snakefile, rules,
rule scripts), each named by its relative path. A one-line edit anywhere in them gives another
digest, so the audit can tell records made by different code apart, whatever the version string
says.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

import tailgate

__all__ = ["code_digest", "code_files", "digest_of"]

_SUFFIXES = {".py", ".json", ".npz", ".smk", ".yaml", ".rst"}


def _files_under(base: Path, prefix: str, skip: frozenset[str] = frozenset()) -> dict[str, Path]:
    """Files under ``base`` with a digested suffix (links to folders are not followed, folders
    named in ``skip`` not entered), named ``prefix/<relative path>``."""
    out: dict[str, Path] = {}
    for folder, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d not in skip]
        rel = os.path.relpath(folder, base)
        stem = prefix if rel == "." else f"{prefix}/{rel.replace(os.sep, '/')}"
        for name in names:
            path = os.path.join(folder, name)
            if os.path.splitext(name)[1] in _SUFFIXES and os.path.isfile(path):
                out[f"{stem}/{name}"] = Path(path)
    return out


def code_files(package: Path | None = None) -> list[tuple[str, Path]]:
    """(name, path) of every file the digest covers, sorted by name: of the imported package,
    or of the copy of the code whose ``tailgate`` package folder is ``package``."""
    if package is None:
        package = Path(tailgate.__file__).resolve().parent
    workflow = package.parent
    files = _files_under(package, "tailgate", skip=frozenset({"__pycache__"}))
    for sub in ("rules", "scripts", "report"):
        if (workflow / sub).is_dir():
            files.update(_files_under(workflow / sub, f"workflow/{sub}"))
    snakefile = workflow.parent / "Snakefile"
    if snakefile.is_file() and (workflow / "rules").is_dir():
        files["Snakefile"] = snakefile
    return sorted(files.items())


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 over (name, SHA-256 of bytes) of :func:`code_files` (computed once a process)."""
    return digest_of(code_files())


def digest_of(files: list[tuple[str, Path]]) -> str:
    """The code digest of ``files`` (:func:`code_files` of some copy of the code)."""
    h = hashlib.sha256()
    for name, path in files:
        h.update(f"{name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return h.hexdigest()
