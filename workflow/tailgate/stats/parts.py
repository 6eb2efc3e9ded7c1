"""Rows of a computation in parts, so that its memory stays bounded whatever the data's size.

A part of a row-wise computation gives each row the same bits as the whole (every row's sums
are its own), with one exception: a BLAS matrix-vector product sums its rows in groups of 4
and the rows left over (fewer than 4) along another path, whose last bits differ. Parts whose
sizes are multiples of 4, with the rows left over kept at the end of the last part, keep every
row in the group it has in the whole product (``multiple=4``).
"""

from __future__ import annotations

__all__ = ["BLAS_ROWS", "row_parts"]

#: rows a BLAS matrix-vector product sums together (see the module docstring)
BLAS_ROWS = 4


def row_parts(rows: int, size: int, multiple: int = 1) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive parts covering ``rows`` rows: ``size`` rows each (rounded
    down to a multiple of ``multiple``, at least one multiple), a last part shorter than
    ``multiple`` joined to the one before."""
    size = max(multiple, int(size) // multiple * multiple)
    parts = [(a, min(a + size, rows)) for a in range(0, rows, size)]
    if len(parts) > 1 and parts[-1][1] - parts[-1][0] < multiple:
        parts[-2:] = [(parts[-2][0], rows)]
    return parts
