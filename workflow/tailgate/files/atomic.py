"""Atomic file output: never leave a half-written artifact.

Every artifact tailgate writes goes to a temporary name in the destination directory and is
moved into place with :func:`os.replace` only after it was written completely, so a killed job
leaves either the old file or the new one, never a truncated one.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def current_umask() -> int:
    """This process's umask (read by setting it and restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = current_umask()

__all__ = [
    "atomic_output",
    "canonical_json_bytes",
    "current_umask",
    "write_bytes",
    "write_json",
    "write_parquet",
    "write_text",
]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success move it to ``path``, else delete it."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates 0600; give the artifact the ordinary permissions a collaborator on a
        # shared (cluster) filesystem can read
        os.chmod(tmp_path, 0o666 & ~_UMASK)
        os.replace(tmp_path, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    write_bytes(path, text.encode("utf-8"))


def canonical_json_bytes(obj: Any) -> bytes:
    """Stable JSON bytes (sorted keys, two-space indent, trailing newline) for result files."""
    return (
        json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    ).encode()


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as stable JSON atomically (NaN/inf are refused: encode them as null)."""
    write_bytes(path, canonical_json_bytes(obj))


def write_parquet(path: str | os.PathLike[str], table: Any) -> None:
    """Write a pandas DataFrame or pyarrow Table to Parquet atomically and byte-reproducibly.

    Pandas metadata and the writer's creation stamp are fixed so that the same rows give the
    same bytes on every run.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table, preserve_index=False)
    table = table.replace_schema_metadata(None)
    with atomic_output(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False, store_schema=False)
