"""The profile likelihood's sums over each row of exceedances, in one compiled pass.

:mod:`tailgate.stats.profile` evaluates, for rows of exceedances y each at its own θ, the sums of
log1p(θy) and of b, b², b³ with b = y/(1 + θy). One pass forms the products θy, their log1p
(the C library's; numpy's ``log1p`` gives the same bits unless it uses a vectorised routine of
its own, as it may with AVX-512) and b, where numpy took a pass for the products and one for
their log1p, writing both to memory to be read back by the sums. The pass reads only the rows
asked for, so the rows of a Newton iteration that have converged cost nothing, and a sample
evaluated at many θ is not copied once per θ. Each quantity is summed in four interleaved
running sums (a fixed order: IEEE arithmetic with no reassociation, so the bits are the same on
every machine and whatever the number of threads).

Compiled by numba and cached on disk at the first use, one process at a time
(:func:`tailgate.stats.draws.compiled`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from tailgate.stats.draws import compiled

__all__ = ["row_sums"]


def row_sums(x: np.ndarray, t: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Σ log1p(t·y), Σ b, Σ b² and Σ b³ with b = y/(1 + t·y) over rows of ``x``, each at its own θ.

    Parameters
    ----------
    x : numpy.ndarray
        Exceedances, rows × n.
    t : numpy.ndarray
        The θ of every evaluation.
    rows : numpy.ndarray or None, default None
        The row of ``x`` evaluated at θ = ``t[i]`` is ``rows[i]`` (None: row i).

    Returns
    -------
    numpy.ndarray
        Shape (len(t), 4): in row i, the four sums over row ``rows[i]`` of ``x`` at ``t[i]``.
    """
    compiled("profile", _warm)
    x = np.ascontiguousarray(x, dtype=np.float64)
    t = np.ascontiguousarray(t, dtype=np.float64)
    rows = np.arange(t.size) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.empty((t.size, 4))
    _row_sums(x, t, rows, out)
    return out


def _warm() -> None:
    _row_sums(np.ones((1, 5)), np.ones(1), np.zeros(1, dtype=np.int64), np.empty((1, 4)))


@numba.njit(cache=True, boundscheck=False, nogil=True)
def _row_sums(
    x: np.ndarray, t: np.ndarray, rows: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    n = x.shape[1]
    for i in range(t.size):
        r = rows[i]
        tr = t[i]
        l0 = l1 = l2 = l3 = 0.0
        p0 = p1 = p2 = p3 = 0.0
        q0 = q1 = q2 = q3 = 0.0
        c0 = c1 = c2 = c3 = 0.0
        j = 0
        while j + 4 <= n:
            a0, a1, a2, a3 = x[r, j] * tr, x[r, j + 1] * tr, x[r, j + 2] * tr, x[r, j + 3] * tr
            l0 += math.log1p(a0)
            l1 += math.log1p(a1)
            l2 += math.log1p(a2)
            l3 += math.log1p(a3)
            b0 = x[r, j] / (1.0 + a0)
            b1 = x[r, j + 1] / (1.0 + a1)
            b2 = x[r, j + 2] / (1.0 + a2)
            b3 = x[r, j + 3] / (1.0 + a3)
            p0 += b0
            p1 += b1
            p2 += b2
            p3 += b3
            s0, s1, s2, s3 = b0 * b0, b1 * b1, b2 * b2, b3 * b3
            q0 += s0
            q1 += s1
            q2 += s2
            q3 += s3
            c0 += s0 * b0
            c1 += s1 * b1
            c2 += s2 * b2
            c3 += s3 * b3
            j += 4
        while j < n:
            a = x[r, j] * tr
            b = x[r, j] / (1.0 + a)
            l0 += math.log1p(a)
            p0 += b
            q0 += b * b
            c0 += b * b * b
            j += 1
        out[i, 0] = (l0 + l1) + (l2 + l3)
        out[i, 1] = (p0 + p1) + (p2 + p3)
        out[i, 2] = (q0 + q1) + (q2 + q3)
        out[i, 3] = (c0 + c1) + (c2 + c3)
