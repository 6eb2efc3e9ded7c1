"""The profile likelihood's sums over each row of exceedances, in one compiled pass.

:mod:`tailgate.stats.profile` evaluates, for every row of exceedances y at its own θ, the sums of
log1p(θy) and of b, b², b³ with b = y/(1 + θy). numpy computes log1p(θy) (its vectorised
routine); this pass sums it and forms b, b², b³ from the same products θy, where numpy would
take seven more passes over the rows. Each quantity is summed in four interleaved running sums
(a fixed order: IEEE arithmetic with no reassociation, so the bits are the same on every
machine and whatever the number of threads).

Compiled by numba and cached on disk at the first use, one process at a time
(:func:`tailgate.stats.draws.compiled`).
"""

from __future__ import annotations

import numba
import numpy as np

from tailgate.stats.draws import compiled

__all__ = ["row_sums"]


def row_sums(x: np.ndarray, logs: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per row of ``x`` (rows × n): Σ ``logs`` (log1p(t·y), computed by the caller), Σ b, Σ b²
    and Σ b³ with b = y/(1 + t·y), as a rows × 4 array."""
    compiled("profile", _warm)
    out = np.empty((x.shape[0], 4))
    _row_sums(x, logs, t, out)
    return out


def _warm() -> None:
    one = np.ones((1, 5))
    _row_sums(one, one, np.ones(1), np.empty((1, 4)))


@numba.njit(cache=True, boundscheck=False, nogil=True)
def _row_sums(
    x: np.ndarray, logs: np.ndarray, t: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    rows, n = x.shape
    for r in range(rows):
        tr = t[r]
        l0 = l1 = l2 = l3 = 0.0
        p0 = p1 = p2 = p3 = 0.0
        q0 = q1 = q2 = q3 = 0.0
        c0 = c1 = c2 = c3 = 0.0
        j = 0
        while j + 4 <= n:
            l0 += logs[r, j]
            l1 += logs[r, j + 1]
            l2 += logs[r, j + 2]
            l3 += logs[r, j + 3]
            b0 = x[r, j] / (1.0 + x[r, j] * tr)
            b1 = x[r, j + 1] / (1.0 + x[r, j + 1] * tr)
            b2 = x[r, j + 2] / (1.0 + x[r, j + 2] * tr)
            b3 = x[r, j + 3] / (1.0 + x[r, j + 3] * tr)
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
            b = x[r, j] / (1.0 + x[r, j] * tr)
            l0 += logs[r, j]
            p0 += b
            q0 += b * b
            c0 += b * b * b
            j += 1
        out[r, 0] = (l0 + l1) + (l2 + l3)
        out[r, 1] = (p0 + p1) + (p2 + p3)
        out[r, 2] = (q0 + q1) + (q2 + q3)
        out[r, 3] = (c0 + c1) + (c2 + c3)
