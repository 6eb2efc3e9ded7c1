"""Sample-size bound for ξ separation (Eq. 2 of Zhou (2026), Section 4).

By the Smith (1987) asymptotic, √n_exc (ξ̂ − ξ) → N(0, (1 + ξ)²) for ξ > −1/2, so the two-sample
z statistic for Δξ between two conditions with n_exc exceedances each has standard error
σ_Δ = (1 + ξ̄) √(2 / n_exc). Eq. 2 inverts the power of that z-test:

    n_exc ≥ 2 (z_{α/2} + z_β)² (1 + ξ̄)² / Δξ².

It is a *necessary* bound for the protocol's P1∧P2 rule, not a sufficient one (App. E of Zhou
(2026); :mod:`tailgate.protocol.recovery` simulates the rule itself).
"""

from __future__ import annotations

import math

from tailgate.lazy import lazy_module

# norm.cdf and norm.ppf are scipy.stats' own kernels special.ndtr and special.ndtri; loaded on
# first use, so that importing this module (the gates, the CLI) loads no scipy; planning a run
# that evaluates the Eq. 2 bound still loads it
special = lazy_module("scipy.special")

__all__ = ["achieved_power", "prompts_required", "required_exceedances"]


def _check(delta_xi: float, alpha: float, xi_bar: float) -> None:
    if not delta_xi > 0:
        raise ValueError(f"delta_xi must be > 0, got {delta_xi!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not xi_bar > -0.5:
        raise ValueError(f"xi_bar must be > -1/2 (Smith asymptotic), got {xi_bar!r}")


def required_exceedances(
    delta_xi: float, alpha: float = 0.05, power: float = 0.80, xi_bar: float = 0.0
) -> int:
    """n_exc* of Eq. 2 of Zhou (2026): exceedances per condition for ``power`` at level ``alpha``.

    Table 1 of Zhou (2026): Δξ = 0.05, 0.07, 0.10, 0.20 → 6280, 3204, 1570, 393.

    Parameters
    ----------
    delta_xi : float
        The difference Δξ to detect (> 0).
    alpha : float, default 0.05
        Two-sided level of the test.
    power : float, default 0.80
        Power wanted.
    xi_bar : float, default 0.0
        The common shape ξ̄ (> −1/2).

    Returns
    -------
    int
        2 (z_{α/2} + z_β)² (1 + ξ̄)² / Δξ², rounded up.

    Raises
    ------
    ValueError
        If ``delta_xi`` ≤ 0, ``alpha`` or ``power`` is outside (0, 1), or ``xi_bar`` ≤ −1/2.

    References
    ----------
    Zhou (2026), Section 4, Eq. 2, Table 1.
    """
    _check(delta_xi, alpha, xi_bar)
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    z = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    n = 2 * z**2 * (1 + xi_bar) ** 2 / delta_xi**2
    # round away float noise before the ceiling (an exact integer bound must not gain one)
    return math.ceil(round(n, 9))


def achieved_power(
    n_exc: float, delta_xi: float, alpha: float = 0.05, xi_bar: float = 0.0
) -> float:
    """Power of the two-sided two-sample z-test behind Eq. 2 of Zhou (2026).

    Both rejection tails are counted: Φ(d − z_{α/2}) + Φ(−d − z_{α/2}) with
    d = Δξ √(n_exc / 2) / (1 + ξ̄).

    Parameters
    ----------
    n_exc : float
        Exceedances per condition.
    delta_xi : float
        The difference Δξ (> 0).
    alpha : float, default 0.05
        Two-sided level of the test.
    xi_bar : float, default 0.0
        The common shape ξ̄ (> −1/2).

    Returns
    -------
    float
        The power.

    Raises
    ------
    ValueError
        If ``n_exc`` < 0, ``delta_xi`` ≤ 0, ``alpha`` is outside (0, 1) or ``xi_bar`` ≤ −1/2.

    References
    ----------
    Zhou (2026), Section 4, Eq. 2.
    """
    _check(delta_xi, alpha, xi_bar)
    if n_exc < 0:
        raise ValueError(f"n_exc must be >= 0, got {n_exc!r}")
    d = delta_xi * math.sqrt(n_exc / 2.0) / (1 + xi_bar)
    z = special.ndtri(1 - alpha / 2)
    return float(special.ndtr(d - z) + special.ndtr(-d - z))


def prompts_required(
    delta_xi: float,
    q: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.80,
    xi_bar: float = 0.0,
) -> int:
    """Prompts per condition so that n_exc* of Eq. 2 lie above the q-quantile.

    n_exc* / (1 − q), rounded up: Δξ = 0.10 at q = 0.95 → 31,400.

    Parameters
    ----------
    delta_xi : float
        The difference Δξ to detect (> 0).
    q : float, default 0.95
        The threshold quantile.
    alpha : float, default 0.05
        Two-sided level of the test.
    power : float, default 0.80
        Power wanted.
    xi_bar : float, default 0.0
        The common shape ξ̄ (> −1/2).

    Returns
    -------
    int
        Prompts per condition.

    Raises
    ------
    ValueError
        If ``q`` is outside (0, 1), or as :func:`required_exceedances`.

    References
    ----------
    Zhou (2026), Section 4, Eq. 2, Table 1.
    """
    if not 0 < q < 1:
        raise ValueError(f"threshold quantile q must be in (0, 1), got {q!r}")
    n_exc = required_exceedances(delta_xi, alpha, power, xi_bar)
    return math.ceil(round(n_exc / (1.0 - q), 6))
