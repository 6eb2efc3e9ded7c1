"""The code that makes results: a digest of the tailgate package and workflow actually in use.

Every provenance record and lock entry carries :func:`code_digest`, the SHA-256 over the files of
the imported ``tailgate`` package (Python sources and the data it ships, such as the
Anderson–Darling table) and of the workflow beside it (Snakefile, rules, rule scripts, schemas),
each named by its relative path. A one-line edit anywhere in them gives another digest, so the
audit can tell records made by different code apart, whatever the version string says.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__all__ = ["code_digest", "code_files"]

_SUFFIXES = {".py", ".json", ".npz", ".smk", ".yaml", ".rst"}


def code_files() -> list[tuple[str, Path]]:
    """(name, path) of every file the digest covers, sorted by name."""
    import tailgate

    package = Path(tailgate.__file__).resolve().parent
    workflow = package.parent
    files: dict[str, Path] = {}
    for f in package.rglob("*"):
        if f.is_file() and f.suffix in _SUFFIXES and "__pycache__" not in f.parts:
            files[f"tailgate/{f.relative_to(package).as_posix()}"] = f
    for sub in ("rules", "scripts", "schemas", "report"):
        base = workflow / sub
        if base.is_dir():
            for f in base.rglob("*"):
                if f.is_file() and f.suffix in _SUFFIXES:
                    files[f"workflow/{sub}/{f.relative_to(base).as_posix()}"] = f
    snakefile = workflow.parent / "Snakefile"
    if snakefile.is_file() and (workflow / "rules").is_dir():
        files["Snakefile"] = snakefile
    return sorted(files.items())


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 over (name, SHA-256 of bytes) of :func:`code_files` (computed once a process)."""
    h = hashlib.sha256()
    for name, path in code_files():
        h.update(f"{name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return h.hexdigest()
