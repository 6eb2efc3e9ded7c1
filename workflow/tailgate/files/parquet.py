"""Reading one Parquet file without ``pyarrow.dataset``.

``pyarrow.parquet.read_table`` reads even a single file through ``pyarrow.dataset``, whose import
also loads pandas: measured at 0.85 s for the first read against 8 ms for the same file read with
``ParquetFile``, in every job that reads a table. :func:`read_parquet` gives the same table (schema
and metadata included) through ``ParquetFile``, and keeps ``read_table``'s refusal of a column the
file does not have (``ParquetFile.read`` would silently leave it out).

The file may come from a results folder under review, so its footer is read first and a table
that would decode to far more than its file holds is refused before a page is decompressed (a
compression or run-length bomb: a few kilobytes that expand to gigabytes). Tailgate's tables hold
about 2 bytes of uncompressed pages and 0.1 to 0.3 values per byte of file; a file may declare
:data:`MAX_EXPANSION` bytes of pages and :data:`MAX_VALUES_PER_BYTE` values per byte, plus a fixed
allowance for small files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from tailgate.files.safe_read import require_regular

__all__ = ["MAX_EXPANSION", "MAX_VALUES_PER_BYTE", "read_parquet"]

#: uncompressed pages per byte of file the footer may declare (tailgate's tables: about 2)
MAX_EXPANSION = 64
#: values (rows times columns) per byte of file (tailgate's tables: 0.1 to 0.3)
MAX_VALUES_PER_BYTE = 16
#: what any file may decode to besides: 64 MiB of pages and 16 Mi values
_ALLOWANCE = 1 << 26, 1 << 24


def read_parquet(path: str | os.PathLike[str], columns: Sequence[str] | None = None) -> pa.Table:
    """The table in the Parquet file ``path`` (only ``columns``, in that order, when given).

    Raises ``OSError`` for a missing or unopenable file and ``pyarrow.ArrowInvalid`` (a
    ``ValueError``) for a file that is not Parquet, lacks one of ``columns`` or would expand
    beyond the limits (module docstring).
    """
    require_regular(path)
    size = os.stat(path).st_size
    with pq.ParquetFile(path) as handle:
        meta = handle.metadata
        pages = sum(
            meta.row_group(i).column(j).total_uncompressed_size
            for i in range(meta.num_row_groups)
            for j in range(meta.num_columns)
        )
        values = meta.num_rows * meta.num_columns
        if pages > MAX_EXPANSION * size + _ALLOWANCE[0] or (
            values > MAX_VALUES_PER_BYTE * size + _ALLOWANCE[1]
        ):
            raise pa.ArrowInvalid(
                f"{os.fspath(path)}: its footer declares {pages} bytes of pages and {values} "
                f"values in a file of {size} bytes, more than a table expands to; it was not "
                "read (a compression bomb, or a damaged file: restore it from the run that "
                "wrote it)"
            )
        if columns is not None:
            names = handle.schema_arrow.names
            missing = [c for c in columns if c not in names]
            if missing:
                raise pa.ArrowInvalid(
                    f"{os.fspath(path)} has no column {missing[0]!r} (its columns: {names})"
                )
            columns = list(columns)
        return handle.read(columns=columns)
