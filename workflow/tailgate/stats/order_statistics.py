"""A sample's top order statistics drawn directly, and its bottom sums from their law.

For a simulation that reads only a sample's top ``m`` order statistics and its mean and
variance, drawing all n values and sorting them costs n; this costs m.

- *The top.* For n uniforms, log U₍ₙ₎, log U₍ₙ₋₁₎, … are the partial sums −Σ_{i<j} E_i/(n − i)
  of independent standard exponentials E_i (Rényi (1953); David & Nagaraja (2003), *Order
  Statistics*, Section 2.5), so the top m uniforms take m exponentials and a cumulative sum,
  and the values are the quantile function at them.
- *The bottom.* Given the smallest kept uniform v = U₍ₙ₋ₘ₊₁₎, the other n − m uniforms are
  independent uniforms on (0, v) (the Markov property of order statistics, ibid. Section 2.5).
  Their values' sum and sum of squares are drawn from the bivariate normal law with the
  conditional moments E[X^k | U < v] = ∫₀^v Q(p)^k dp / v, k = 1 … 4 (their first two
  cumulants; at n − m ≥ 90,000 values the error left is O(1/√(n − m)) in the distribution of a
  sum whose mean the simulation reads once per trial).

The moments' integrals are computed once (QUADPACK, scipy's ``quad``) up to the expected v₀
and, for each trial, from v₀ to its v by 8-point Gauss–Legendre quadrature (v − v₀ is a few
standard deviations of a binomial proportion). One trial's stream: its m exponentials, then its
two normal deviates, so the trials do not depend on how many are drawn at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["BottomLaw", "TopDraw", "bottom_law", "draw_top"]

Quantile = Callable[[np.ndarray], np.ndarray]
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_POWERS = np.arange(1, 5)


@dataclass(frozen=True)
class BottomLaw:
    """∫₀^{v₀} Q(p)^k dp for k = 1 … 4, at the expected smallest kept uniform v₀."""

    quantile: Quantile
    v0: float
    integrals: np.ndarray

    def moments(self, v: np.ndarray) -> np.ndarray:
        """E[X^k | U < v] for k = 1 … 4 (rows) and every v (columns)."""
        half = (v - self.v0) / 2.0
        p = self.v0 + half[None, :] * (_NODES[:, None] + 1.0)
        q = self.quantile(p.ravel()).reshape(p.shape)
        extra = (_WEIGHTS[None, :, None] * q[None] ** _POWERS[:, None, None]).sum(axis=1)
        return (self.integrals[:, None] + half[None, :] * extra) / v[None, :]


def bottom_law(quantile: Quantile, n: int, m: int, kinks: tuple[float, ...] = ()) -> BottomLaw:
    """The integrals :class:`BottomLaw` needs for samples of n keeping the top m.

    ∫₀^{v₀} Q(p)^k dp, k = 1 … 4, by QUADPACK (``scipy.integrate.quad``), at the expected smallest
    kept uniform v₀ = (n − m + 1)/(n + 1).

    Parameters
    ----------
    quantile : Quantile
        The quantile function Q (vectorised over an array of probabilities).
    n : int
        The sample size.
    m : int
        The number of top order statistics kept.
    kinks : tuple of float, default ()
        Points in (0, 1) where Q is not smooth, handed to the quadrature.

    Returns
    -------
    BottomLaw
        Q, v₀ and the four integrals.
    """
    # imported here: scipy.integrate (with scipy.optimize, sparse and linalg) costs 0.2-0.4
    # CPU-s, and the report and the audit import this module without integrating
    from scipy import integrate

    v0 = (n - m + 1) / (n + 1)
    points = [k for k in kinks if 0.0 < k < v0] or None
    integrals = np.array(
        [
            integrate.quad(
                lambda p, k=k: float(quantile(np.array([p]))[0]) ** k,
                0.0,
                v0,
                points=points,
                limit=400,
                epsabs=0.0,
                epsrel=1e-12,
            )[0]
            for k in _POWERS
        ]
    )
    return BottomLaw(quantile, v0, integrals)


@dataclass(frozen=True)
class TopDraw:
    """One trial: its top m values (ascending) and the whole sample's mean and variance."""

    top: np.ndarray
    mean: float
    var: float


def draw_top(rng: np.random.Generator, law: BottomLaw, n: int, m: int) -> TopDraw:
    """One sample of n values from ``law``'s quantile function: its top m, mean and variance.

    The top m order statistics are drawn directly and the bottom sums from their law (module
    docstring). The trial's stream: its m exponentials, then its two normal deviates.

    Parameters
    ----------
    rng : numpy.random.Generator
        The trial's random stream.
    law : BottomLaw
        The quantile function and its integrals (:func:`bottom_law` of the same n and m).
    n : int
        The sample size.
    m : int
        The number of top order statistics drawn.

    Returns
    -------
    TopDraw
        The top m values (ascending) and the whole sample's mean and variance (divisor n).

    References
    ----------
    Rényi (1953); David & Nagaraja (2003), Section 2.5.
    """
    rest = n - m
    spacings = rng.standard_exponential(m) / np.arange(n, rest, -1, dtype=np.float64)
    u = np.exp(-np.cumsum(spacings))[::-1]  # ascending: U₍ₙ₋ₘ₊₁₎ … U₍ₙ₎
    top = law.quantile(u)
    z = rng.standard_normal(2)
    mu = law.moments(u[:1])[:, 0]
    c11, c12, c22 = mu[1] - mu[0] ** 2, mu[2] - mu[0] * mu[1], mu[3] - mu[1] ** 2
    a = np.sqrt(max(c11, 0.0))
    b = c12 / a if a > 0 else 0.0
    c = np.sqrt(max(c22 - b * b, 0.0))
    root = np.sqrt(rest)
    s1 = rest * mu[0] + root * a * z[0]
    s2 = rest * mu[1] + root * (b * z[0] + c * z[1])
    mean = (s1 + top.sum()) / n
    return TopDraw(top, float(mean), float((s2 + (top * top).sum()) / n - mean * mean))
