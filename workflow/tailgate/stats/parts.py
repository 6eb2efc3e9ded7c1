"""Rows of a computation in parts, so that its memory stays bounded whatever the data's size.

A part of a row-wise computation gives each row the same bits as the whole (every row's sums
are its own), with one exception: a BLAS matrix-vector product sums its rows in groups of 4
and the rows left over (fewer than 4) along another path, whose last bits differ. Parts whose
sizes are multiples of 4, with the rows left over kept at the end of the last part, keep every
row in the group it has in the whole product (``multiple=4``).
"""

from __future__ import annotations

__all__ = ["BLAS_ROWS", "PART_ELEMENTS", "parts_within", "row_parts"]

#: rows a BLAS matrix-vector product sums together (see the module docstring)
BLAS_ROWS = 4
#: values (rows × row length) a part holds: a row-wise computation's working arrays stay near
#: this size whatever the data's (a GPD bootstrap block over 750,000 exceedances took 3 GB a
#: thread at once, a Zhang–Stephens start over them 16 GB)
PART_ELEMENTS = 1 << 20


def row_parts(rows: int, size: int, multiple: int = 1) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive parts covering ``rows`` rows.

    Parameters
    ----------
    rows : int
        The number of rows.
    size : int
        The rows of a part, rounded down to a multiple of ``multiple`` (at least one multiple).
    multiple : int, default 1
        The parts' sizes are multiples of it; a last part shorter than ``multiple`` is joined to
        the one before.

    Returns
    -------
    list of tuple of (int, int)
        The parts' ``(start, stop)``, in order (none for no rows).
    """
    size = max(multiple, int(size) // multiple * multiple)
    parts = [(a, min(a + size, rows)) for a in range(0, rows, size)]
    if len(parts) > 1 and parts[-1][1] - parts[-1][0] < multiple:
        parts[-2:] = [(parts[-2][0], rows)]
    return parts


def parts_within(rows: int, width: int, multiple: int = 1) -> list[tuple[int, int]]:
    """:func:`row_parts` of rows ``width`` values long, about :data:`PART_ELEMENTS` values each.

    Parameters
    ----------
    rows : int
        The number of rows.
    width : int
        The values in a row.
    multiple : int, default 1
        As :func:`row_parts`.

    Returns
    -------
    list of tuple of (int, int)
        The parts' ``(start, stop)``, in order.
    """
    return row_parts(rows, max(1, PART_ELEMENTS // max(width, 1)), multiple)
