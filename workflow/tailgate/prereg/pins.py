"""Pins: the SHA-256 of every local file a registration names (DESIGN: "Provenance").

A pre-registration names files that shape results without being part of its text: the imported
data (``data.import.path``), a local prompt set (``data.prompts.source``), local model folders
(``models.<key>.id``: the generating models, token-NLL judges and an analysis's embedding model,
whatever the backend) and scorer checkpoints (``scorers[*].checkpoint``/``config_path``). Their
bytes are part of the registration: ``freeze`` and ``amend`` record a pin for each one in the lock
entry (SHA-256 and size; a folder is pinned by a manifest of its files' hashes; an import file
also by its rows per condition), every run refuses when a pinned file differs, and a changed file
is registered only through an amendment, which lists it as a changed decision input.

A name that is not a local path (a hub id such as ``gpt2``) pins nothing: what a hub serves is
outside what a local tool can pin, and the registration's ``revision`` fields are the way to fix it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tailgate.errors import PreregError
from tailgate.prereg.canonical import sha256_file
from tailgate.prereg.cross_fields import JUDGED_KINDS
from tailgate.prereg.study import project_root

__all__ = [
    "RowCounter",
    "describe_pin",
    "manifest_path",
    "pin",
    "pin_changes",
    "pinned_files",
    "pins_of",
    "project_root",
    "registered_paths",
]

#: counts an import file's rows per registered condition: (study, project root) → counts
RowCounter = Callable[[Any, Path], dict[str, int]]


def registered_paths(study: Any) -> dict[str, tuple[str, bool]]:
    """Field name → (registered path text, whether it must exist) of every local input."""
    data = study.data
    out: dict[str, tuple[str, bool]] = {}
    backend = data["data"]["backend"]
    if backend == "import" and data["data"]["import"].get("path"):
        out["data.import.path"] = (str(data["data"]["import"]["path"]), True)
    if backend == "transformers":
        out["data.prompts.source"] = (str(data["data"]["prompts"]["source"]), False)
        for key, model in sorted(data.get("models", {}).items()):
            out[f"models.{key}.id"] = (str(model["id"]), False)
    for sc in data["scorers"]:
        for key in ("checkpoint", "config_path"):
            if sc.get(key):
                out[f"scorers[{sc['name']}].{key}"] = (str(sc[key]), True)
        if sc.get("kind") in JUDGED_KINDS and sc.get("judge") in data.get("models", {}):
            model = data["models"][sc["judge"]]
            out[f"models.{sc['judge']}.id"] = (str(model["id"]), False)
    for spec in (data.get("analyses") or {}).values():
        key = (spec.get("embedding") or {}).get("model")
        if key in data.get("models", {}):  # an embedder (the energy test) whatever the backend
            out[f"models.{key}.id"] = (str(data["models"][key]["id"]), False)
    return out


def _resolve(text: str, root: Path) -> Path:
    p = Path(os.path.expanduser(text))
    return p if p.is_absolute() else root / p


_CACHE_FROM = 64 << 20  # files this large may be looked up in the speed-up cache
_EDGE = 1 << 20  # bytes hashed at each end of a file for the cache key


def _cache_key(path: Path) -> str:
    """Content-bearing key of a large file: its path, device, inode, size, modification and
    inode-change times, and the SHA-256 of its first and last MiB."""
    st = path.stat()
    edges = hashlib.sha256()
    with path.open("rb") as handle:
        edges.update(handle.read(_EDGE))
        handle.seek(max(st.st_size - _EDGE, 0))
        edges.update(handle.read(_EDGE))
    return hashlib.sha256(
        f"{path.resolve()}|{st.st_dev}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}|"
        f"{st.st_ctime_ns}|{edges.hexdigest()}".encode()
    ).hexdigest()


def _file_sha256(path: Path, *, use_cache: bool = False) -> str:
    """SHA-256 of a file, read in full. Only with ``use_cache`` (a display such as ``status``,
    never a check a job or the audit relies on) is a large file (model weights) looked up in a
    cache under the user's cache folder, keyed by :func:`_cache_key`."""
    st = path.stat()
    if not use_cache or st.st_size < _CACHE_FROM:
        return sha256_file(path)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tailgate" / "pins"
    entry = cache / _cache_key(path)
    try:
        cached = entry.read_text(encoding="ascii").strip()
        if len(cached) == 64:
            return cached
    except OSError:
        pass
    digest = sha256_file(path)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        entry.write_text(digest, encoding="ascii")
    except OSError:
        pass  # no cache: hash again next time
    return digest


#: the digest of a file whose size already differs from its pin's: it is not read
NOT_HASHED = "not hashed: its size differs from the registered one"


def pin(path: Path, *, use_cache: bool = False, size: Any = None) -> dict[str, Any]:
    """SHA-256 and size of a file; of a folder, a manifest hash over its files (sorted
    relative paths, each with its SHA-256), their count and total size. Files are read in full
    unless ``use_cache`` (see :func:`_file_sha256`), and not at all when ``size`` (the
    registered pin's) is not theirs: a sparse file of a terabyte costs no disk and hours of
    hashing, and its size alone tells that it is not the pinned one."""
    if path.is_file():
        if isinstance(size, int) and path.stat().st_size != size:
            return {"type": "file", "sha256": NOT_HASHED, "bytes": path.stat().st_size}
        return {
            "type": "file",
            "sha256": _file_sha256(path, use_cache=use_cache),
            "bytes": path.stat().st_size,
        }
    manifest = hashlib.sha256()
    count = total = 0
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        manifest.update(f"{rel}\0{_file_sha256(f, use_cache=use_cache)}\n".encode())
        count += 1
        total += f.stat().st_size
    return {"type": "folder", "sha256": manifest.hexdigest(), "files": count, "bytes": total}


def pins_of(
    study: Any,
    *,
    import_rows: RowCounter | None = None,
    use_cache: bool = False,
    registered: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """The pins of ``study``'s registered local inputs (field name → pin with ``path``).

    A path that must exist (import file, scorer checkpoint) and does not is a
    :class:`PreregError`: before the freeze its fix is to create the file; once ``registered``
    (the lock's pins) holds a pin for it, e.g. in a reviewer's clone of the published tag, its
    fix names the file to obtain, its hash and where to place it. A model or prompt source that
    is not a local path pins nothing. With ``import_rows`` (the importer's counter,
    :func:`tailgate.authoring.importcheck.import_rows`; the freeze records them) the import file's
    pin also holds its rows per condition.
    """
    root = project_root(study.path)
    out: dict[str, dict[str, Any]] = {}
    for field, (text, required) in registered_paths(study).items():
        path = _resolve(text, root)
        if not path.exists():
            if required and registered and field in registered:
                raise _missing_pinned(study, field, registered[field], path)
            if required:
                raise PreregError(
                    f"{field} names {text}, which does not exist",
                    file=str(study.path),
                    field=field,
                    fix="correct the path (relative paths resolve against the project folder "
                    f"{root}) or create the file before freezing",
                )
            continue
        size = ((registered or {}).get(field) or {}).get("bytes")
        out[field] = {"path": text, **pin(path, use_cache=use_cache, size=size)}
        if field == "data.import.path" and import_rows is not None:
            out[field]["rows"] = import_rows(study, root)
    return out


def manifest_path(prereg_path: str | Path) -> Path:
    """``<stem>.data.json`` beside the pre-registration: the pinned input files a published
    tag does not hold (path, SHA-256, size, rows), so a reviewer knows what to obtain."""
    p = Path(prereg_path)
    return p.with_name(f"{p.stem}.data.json")


def describe_pin(pin_: dict[str, Any]) -> str:
    """``SHA-256 …, N bytes, rows a: n, b: m`` of one pin."""
    what = f"SHA-256 {pin_['sha256']}, {pin_['bytes']:,} bytes"
    if pin_.get("type") == "folder":
        what += f" in {pin_.get('files')} files (folder manifest hash)"
    if pin_.get("rows"):
        what += ", rows " + ", ".join(f"{c}: {n:,}" for c, n in pin_["rows"].items())
    return what


def _missing_pinned(study: Any, field: str, pin_: dict[str, Any], path: Path) -> PreregError:
    manifest = manifest_path(study.path)
    listed = f"; {manifest.name} beside it lists every pinned file" if manifest.is_file() else ""
    return PreregError(
        f"{field} names {pin_['path']}, which is not here; the registration pinned it "
        f"({describe_pin(pin_)})",
        file=str(study.path),
        field=field,
        fix=f"obtain that file (from the study's authors or its data archive{listed}), check "
        f"that its SHA-256 is {pin_['sha256']}, place it at {path}, and run "
        f"'tailgate verify {study.path}' again",
    )


def pinned_files(study: Any) -> list[Path]:
    """The local files and folders ``study`` names that exist (a stage lists the files among its
    inputs, so each record holds the hash the stage saw)."""
    root = project_root(study.path)
    out = []
    for text, _ in registered_paths(study).values():
        path = _resolve(text, root)
        if path.is_file():
            out.append(path)
    return out


def pin_changes(registered: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Fields whose pinned input differs (added, removed or other bytes), sorted."""
    fields = set(registered) | set(now)
    return sorted(
        f
        for f in fields
        if (registered.get(f) or {}).get("sha256") != (now.get(f) or {}).get("sha256")
    )
