"""Bounded-support diagnostics: ceiling pile-up and QQ data, probability vs logit scale.

Section 6.2 of Zhou (2026) diagnoses bounded-support contamination by (i) the share of the
exceedance mass that sits near the ceiling — "Mistral-Nemo's exceedance distribution above
q = 0.99 places 14% of its mass above S = 0.9 and 9% above S = 0.95" — and (ii) QQ plots of the
empirical exceedance quantiles against the fitted GPD quantiles on both scales (Fig. 2), where a
probability-scale fit shows the exceedances piling against the bound and the logit-scale fit is
linear. Proposition 1 (App. A) is the mechanism.

The GPD parameters for the QQ data come from the statistics engine's fit (``fits/...json``);
this module only arranges the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tailgate.stats.distributions import gpd_ppf

__all__ = [
    "CEILING_LEVELS",
    "BoundedSupportDiagnostics",
    "QQData",
    "bounded_support_diagnostics",
    "exceedances",
    "qq_data",
]

#: Probability-scale levels whose exceedance shares are reported (Section 6.2 of Zhou (2026)).
CEILING_LEVELS = (0.9, 0.95)


def exceedances(
    severities: np.ndarray, q: float, threshold: float | None = None
) -> tuple[float, np.ndarray]:
    """The POT threshold u (default: the empirical ``q`` quantile) and the values above it."""
    values = np.asarray(severities, dtype=np.float64)
    if not 0.0 < q < 1.0:
        raise ValueError(f"threshold quantile q must lie in (0, 1), got {q!r}")
    u = float(np.quantile(values, q)) if threshold is None else float(threshold)
    return u, values[values > u]


@dataclass(frozen=True)
class BoundedSupportDiagnostics:
    """How much of the exceedance mass above the ``q`` threshold sits near the ceiling of 1.

    ``share_above`` maps each level (e.g. 0.9, 0.95) to the fraction of the ``n_exc``
    exceedances whose probability score lies strictly above it (None when ``n_exc`` is 0).
    """

    q: float
    threshold: float
    n: int
    n_exc: int
    share_above: dict[float, float | None]

    def to_dict(self) -> dict[str, Any]:
        """JSON form: levels become strings ("0.9") as JSON object keys must be."""
        return {
            "q": self.q,
            "threshold": self.threshold,
            "n": self.n,
            "n_exc": self.n_exc,
            "share_above": {f"{level:g}": share for level, share in self.share_above.items()},
        }


def bounded_support_diagnostics(
    prob_scores: np.ndarray,
    q: float,
    *,
    threshold: float | None = None,
    levels: tuple[float, ...] = CEILING_LEVELS,
) -> BoundedSupportDiagnostics:
    """Share of exceedance mass above each ceiling level (Section 6.2 of Zhou (2026)).

    ``prob_scores`` are probability-scale scores in [0, 1]; the threshold is the empirical ``q``
    quantile unless ``threshold`` is given (pass the engine's u to match its fit exactly).
    """
    values = np.asarray(prob_scores, dtype=np.float64)
    if values.size and (np.nanmin(values) < 0 or np.nanmax(values) > 1):
        raise ValueError("bounded-support diagnostics need probability scores in [0, 1]")
    u, exc = exceedances(values, q, threshold)
    n_exc = int(exc.size)
    shares = {float(level): (float(np.mean(exc > level)) if n_exc else None) for level in levels}
    return BoundedSupportDiagnostics(float(q), u, int(values.size), n_exc, shares)


@dataclass(frozen=True)
class QQData:
    """Empirical exceedance quantiles against fitted GPD(ξ, σ) quantiles (Fig. 2 of Zhou (2026)).

    ``probabilities`` are the plotting positions (i - 0.5) / n_exc of the kept order statistics;
    ``empirical`` the sorted exceedances y = S - u; ``model`` the GPD quantiles at the same
    positions. Long samples are thinned to at most ``max_points`` evenly spaced order statistics.
    """

    q: float
    threshold: float
    n_exc: int
    xi: float
    sigma: float
    probabilities: np.ndarray
    empirical: np.ndarray
    model: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        return {
            "q": self.q,
            "threshold": self.threshold,
            "n_exc": self.n_exc,
            "xi": self.xi,
            "sigma": self.sigma,
            "probabilities": self.probabilities.tolist(),
            "empirical": self.empirical.tolist(),
            "model": self.model.tolist(),
        }


def qq_data(
    severities: np.ndarray,
    q: float,
    xi: float,
    sigma: float,
    *,
    threshold: float | None = None,
    max_points: int = 400,
) -> QQData:
    """QQ data of the exceedances above the ``q`` threshold against GPD(``xi``, ``sigma``)."""
    if not (math.isfinite(xi) and math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"QQ data need a fitted GPD with finite ξ and σ > 0, got ({xi}, {sigma})")
    u, exc = exceedances(severities, q, threshold)
    y = np.sort(exc - u)
    n = int(y.size)
    if n == 0:
        empty = np.empty(0)
        return QQData(float(q), u, 0, float(xi), float(sigma), empty, empty, empty)
    index = np.arange(n)
    if n > max_points:
        index = np.unique(np.round(np.linspace(0, n - 1, max_points)).astype(int))
    probs = (index + 0.5) / n
    model = gpd_ppf(probs, xi, sigma)  # scipy.stats.genpareto.ppf's bits
    return QQData(float(q), u, n, float(xi), float(sigma), probs, y[index], model)
