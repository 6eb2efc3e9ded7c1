"""The exact integrals of two step quantile functions (Nitsure et al. (2024), Eqs. 4–5;
the methods note section D1): one pass over the merged breakpoints of two count-weighted
samples gives the positive and negative parts of ∫(Q_y − Q_x)² and ∫(Q₂,y − Q₂,x)². The
violation ratios, their bootstrap replicates and the distinctness guard's permutations all use it.
"""

from __future__ import annotations

import numba

__all__: list[str] = []


@numba.njit(cache=True, inline="always")
def _positive_square(a: float, b: float, h: float) -> float:
    """∫ over a segment of length h of (the line from a to b)₊²."""
    if a >= 0.0 and b >= 0.0:
        return h * (a * a + a * b + b * b) / 3.0
    if a <= 0.0 and b <= 0.0:
        return 0.0
    if a > 0.0:
        return h * a * a * a / (3.0 * (a - b))
    return h * b * b * b / (3.0 * (b - a))


@numba.njit(cache=True)
def _pair(xv, xc, n, yv, yc, m, out):  # pragma: no cover - compiled
    """Positive and negative parts of ∫(Q_y − Q_x)² and ∫(Q₂,y − Q₂,x)² for the step functions
    with values xv (sorted) of multiplicities xc summing to n, and yv, yc summing to m.
    Widths are integers in units of 1/(n·m), so the merged breakpoints are exact."""
    total = float(n) * float(m)
    i = 0
    j = 0
    nx = xv.shape[0]
    ny = yv.shape[0]
    while i < nx and xc[i] == 0:
        i += 1
    while j < ny and yc[j] == 0:
        j += 1
    rx = xc[i] * m if i < nx else 0
    ry = yc[j] * n if j < ny else 0
    a = 0.0
    p1 = 0.0
    q1 = 0.0
    p2 = 0.0
    q2 = 0.0
    while i < nx and j < ny:
        seg = rx if rx < ry else ry
        h = seg / total
        d = yv[j] - xv[i]
        b = a + h * d
        if d > 0.0:
            p1 += h * d * d
        else:
            q1 += h * d * d
        p2 += _positive_square(a, b, h)
        q2 += _positive_square(-a, -b, h)
        a = b
        rx -= seg
        ry -= seg
        if rx == 0:
            i += 1
            while i < nx and xc[i] == 0:
                i += 1
            if i < nx:
                rx = xc[i] * m
        if ry == 0:
            j += 1
            while j < ny and yc[j] == 0:
                j += 1
            if j < ny:
                ry = yc[j] * n
    out[0] = p1
    out[1] = q1
    out[2] = p2
    out[3] = q2
