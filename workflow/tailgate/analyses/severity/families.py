"""Distribution families of severities (ERRORQUAKE (2026), Section 2): power law, truncated
power law, exponential, stretched exponential and lognormal on the positive grid, compared by
BIC, likelihood ratios with the boundary χ² mixture for nested pairs and Vuong tests otherwise
(methods note B4, B5, B7).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from tailgate.lazy import lazy_module

from .b import level_index

optimize = lazy_module("scipy.optimize")
special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

# --- families (methods note B4)
# ------------------------------------------------------------------------

FAMILIES = ("power_law", "truncated_power_law", "exponential", "stretched_exponential", "lognormal")
#: free parameters per family
PARAMETERS = {
    "power_law": 1,
    "truncated_power_law": 2,
    "exponential": 1,
    "stretched_exponential": 2,
    "lognormal": 2,
}
#: nested pairs (smaller, larger) and whether the restriction is on the parameter's boundary
NESTED = {
    ("power_law", "truncated_power_law"): True,  # λ = 0, λ ≥ 0: ½χ²₀ + ½χ²₁
    ("exponential", "truncated_power_law"): False,  # α = 0, interior
    ("exponential", "stretched_exponential"): False,  # β = 1, interior
}


def _sufficient(family: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, base) of the exponential-family form f = exp(θ·T(x) + base(x)) of four families:
    PL T = −ln x; exponential T = −x; TPL T = (−ln x, −x), θ = (α, λ); lognormal
    T = (ln x, (ln x)²), base −ln x, θ = (μ/σ², −1/(2σ²))."""
    lx = np.log(x)
    zero = np.zeros_like(x)
    if family == "power_law":
        return -lx[:, None], zero
    if family == "exponential":
        return -x[:, None], zero
    if family == "truncated_power_law":
        return np.column_stack([-lx, -x]), zero
    if family == "lognormal":
        return np.column_stack([lx, lx * lx]), -lx
    raise ValueError(f"unknown family {family!r} (one of {', '.join(FAMILIES)})")


def _log_normalise(f: np.ndarray) -> np.ndarray:
    """f − log Σ e^f on a handful of grid points (scipy.special.logsumexp costs ~100 µs a call
    here, 20× this; the stretched-exponential profile makes thousands of calls)."""
    top = f.max()
    return f - (top + math.log(float(np.exp(f - top).sum())))


def _log_pmf_natural(theta: np.ndarray, T: np.ndarray, base: np.ndarray) -> np.ndarray:
    return _log_normalise(T @ theta + base)


def _exponential_family_mle(
    T: np.ndarray, base: np.ndarray, c: np.ndarray, start: np.ndarray
) -> tuple[np.ndarray, bool]:
    """Maximise Σ c·log p_θ by damped Newton: the log-likelihood is concave in θ, its gradient is
    N(T̄ − E_θT) and its Hessian −N·Cov_θ(T). Not converged when the data sit on the support's
    edge (the MLE is at infinity)."""
    n = c.sum()
    t_bar = c @ T / n
    theta = start.astype(np.float64)

    def ll(th: np.ndarray) -> float:
        return float(c @ _log_pmf_natural(th, T, base))

    current = ll(theta)
    for _ in range(200):
        p = np.exp(_log_pmf_natural(theta, T, base))
        mean = p @ T
        grad = t_bar - mean
        if np.max(np.abs(grad) / (1.0 + np.abs(t_bar))) < 1e-11:
            return theta, True
        cov = (T - mean).T @ ((T - mean) * p[:, None])
        try:
            step = np.linalg.solve(cov + 1e-300 * np.eye(cov.shape[0]), grad)
        except np.linalg.LinAlgError:
            return theta, False
        scale = 1.0
        while scale > 1e-12:
            trial = theta + scale * step
            value = ll(trial)
            if value >= current - 1e-12 * abs(current):
                break
            scale *= 0.5
        else:
            return theta, False
        theta, current = trial, value
    return theta, False


def _stretched_exponential_fit(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, bool]:
    """x^{β−1} e^{−(λx)^β}: for fixed β an exponential family in T = −x^β with natural parameter
    λ^β, so the MLE profiles that out (concave) and maximises over ln β ∈ [−6, 4] (bounded
    Brent). Returns (ln λ, ln β); not converged when λ^β ≤ 0 or β reaches a bound."""
    lx = np.log(x)

    def inner(log_beta: float) -> tuple[float, float]:
        beta = math.exp(log_beta)
        T = -(x**beta)[:, None]
        th, _ = _exponential_family_mle(T, (beta - 1.0) * lx, c, np.array([1.0]))
        return float(c @ _log_pmf_natural(th, T, (beta - 1.0) * lx)), float(th[0])

    res = optimize.minimize_scalar(
        lambda lb: -inner(lb)[0], bounds=(-6.0, 4.0), method="bounded", options={"xatol": 1e-10}
    )
    log_beta = float(res.x)
    _, lam_beta = inner(log_beta)
    ok = bool(res.success) and lam_beta > 0 and -6.0 + 1e-6 < log_beta < 4.0 - 1e-6
    log_lam = math.log(lam_beta) / math.exp(log_beta) if lam_beta > 0 else -math.inf
    return np.array([log_lam, log_beta]), ok


def _se_log_pmf(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    lam, beta = math.exp(theta[0]), math.exp(theta[1])
    return _log_normalise((beta - 1.0) * np.log(x) - (lam * x) ** beta)


@dataclass(frozen=True)
class FamilyFit:
    """MLE of one family on the grid support x ≥ x_min (methods note B4): ``parameters`` in the
    family's
    own terms (α, λ, β, μ, σ), ``loglik``, ``bic`` = k ln N − 2 LL, ``log_pmf`` over ``support``.
    ``converged`` is False where the maximum lies on the parameter space's edge (e.g. a TPL
    whose λ̂ is 0, which is then the power law)."""

    family: str
    parameters: dict[str, float]
    loglik: float
    bic: float
    k: int
    n: int
    support: tuple[float, ...]
    log_pmf: tuple[float, ...]
    converged: bool


def _fit(family: str, x: np.ndarray, c: np.ndarray) -> tuple[dict[str, float], np.ndarray, bool]:
    if family == "stretched_exponential":
        theta, ok = _stretched_exponential_fit(x, c)
        params = {"lambda": math.exp(theta[0]), "beta": math.exp(theta[1])}
        return params, _se_log_pmf(theta, x), ok
    T, base = _sufficient(family, x)
    theta, ok = _exponential_family_mle(T, base, c, np.zeros(T.shape[1]))
    if family == "truncated_power_law" and theta[1] < 0:
        # λ ≥ 0: a concave likelihood whose free maximum has λ < 0 is maximised at λ = 0
        pl, ok_pl = _exponential_family_mle(T[:, :1], base, c, theta[:1])
        theta, ok = np.array([pl[0], 0.0]), False and ok_pl
    if family == "lognormal" and theta[1] >= 0:
        theta, ok = np.array([theta[0], -1e-12]), False
    lp = _log_pmf_natural(theta, T, base)
    if family == "power_law":
        params = {"alpha": float(theta[0])}
    elif family == "exponential":
        params = {"lambda": float(theta[0])}
    elif family == "truncated_power_law":
        params = {"alpha": float(theta[0]), "lambda": float(theta[1])}
    else:
        var = -1.0 / (2.0 * theta[1])
        params = {"mu": float(theta[0] * var), "sigma": math.sqrt(var)}
    return params, lp, ok


def fit_family(family: str, counts, support) -> FamilyFit:
    """MLE of ``family`` on the grid points ``support`` (all > 0) from counts at those points;
    pmf p(x|θ) = f(x;θ)/Σ_{y ∈ support} f(y;θ) (methods note B4)."""
    x = np.asarray(support, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    if x.shape != c.shape or np.any(x <= 0):
        raise ValueError("families are fitted on counts over a positive support")
    if family not in PARAMETERS:
        raise ValueError(f"unknown family {family!r} (one of {', '.join(FAMILIES)})")
    n = float(c.sum())
    params, lp, ok = _fit(family, x, c)
    ll = float(c @ lp)
    k = PARAMETERS[family]
    return FamilyFit(
        family,
        params,
        ll,
        k * math.log(n) - 2.0 * ll,
        k,
        int(n),
        tuple(float(v) for v in x),
        tuple(float(v) for v in lp),
        bool(ok),
    )


@dataclass(frozen=True)
class VuongTest:
    """Vuong's test of two fitted families (methods note B4): ``statistic`` Z = LR/(√N ω̂) (Z > 0
    favours ``first``), ``pvalue`` = erfc(|Z|/√2); for nested pairs the LR test: 2·LR against χ²₁
    or ½χ²₀ + ½χ²₁ at a boundary (``nested``)."""

    first: str
    second: str
    log_likelihood_ratio: float
    statistic: float
    pvalue: float
    nested: bool


def vuong_test(fit1: FamilyFit, fit2: FamilyFit, counts) -> VuongTest:
    """Vuong (non-nested) or LR (nested) comparison of two fits on the same counts."""
    c = np.asarray(counts, dtype=np.float64)
    d = np.asarray(fit1.log_pmf) - np.asarray(fit2.log_pmf)
    n = float(c.sum())
    lr = float(c @ d)
    key, rev = (fit1.family, fit2.family), (fit2.family, fit1.family)
    if key in NESTED or rev in NESTED:
        boundary = NESTED.get(key, NESTED.get(rev))
        stat = max(0.0, 2.0 * abs(lr))
        p = float(stats.chi2.sf(stat, 1))
        if boundary:
            p = 0.5 * p if stat > 0 else 1.0
        return VuongTest(fit1.family, fit2.family, lr, stat, p, True)
    mean = lr / n
    omega = math.sqrt(float(c @ (d - mean) ** 2) / n)
    if omega == 0.0:
        return VuongTest(fit1.family, fit2.family, lr, 0.0, 1.0, False)
    z = lr / (math.sqrt(n) * omega)
    return VuongTest(
        fit1.family, fit2.family, lr, z, float(special.erfc(abs(z) / math.sqrt(2))), False
    )


#: how a BIC-best family is called decisive: ``test`` (the test against the runner-up must
#: reject in the best family's favour) or ``paper`` (that test's p or ΔBIC, ERRORQUAKE (2026),
#: Section 2)
DECISIVE_RULES = ("test", "paper")


def nested_pair(first: str, second: str) -> tuple[str, str] | None:
    """(smaller, larger) when one family nests the other, else None."""
    for small, large in NESTED:
        if {small, large} == {first, second}:
            return small, large
    return None


def favours(test: VuongTest, family: str, p_threshold: float) -> bool:
    """Whether ``test`` rejects at ``p_threshold`` in favour of ``family`` (one of its two).

    Nested pair: only the larger family can be favoured (the LR test rejects the restriction);
    the smaller one is never affirmed by a test that fails to reject. Non-nested: Vuong's Z
    must point at ``family``.
    """
    if not test.pvalue < p_threshold:
        return False
    pair = nested_pair(test.first, test.second)
    if pair is not None:
        return family == pair[1]
    return (test.statistic > 0) == (family == test.first)


@dataclass(frozen=True)
class FamilyComparison:
    """All families at one x_min (methods note B4): fits, ΔBIC to the best, pairwise tests, and the
    decision. Rule ``test`` (default): the BIC-best family is ``decisive`` when its test against
    the runner-up (LR with the boundary mixture for a nested pair, Vuong otherwise) rejects in
    its favour at ``p_threshold`` (:func:`favours`); ΔBIC is reported, not decisive: between
    nested families it is about ln N whatever the data say. Rule ``paper``: p < ``p_threshold``
    or ΔBIC > ``bic_threshold`` (ERRORQUAKE (2026), Section 2)."""

    x_min: float
    fits: dict[str, FamilyFit]
    delta_bic: dict[str, float]
    tests: tuple[VuongTest, ...]
    best: str
    runner_up: str
    decisive: bool
    p_threshold: float
    bic_threshold: float
    rule: str = "test"

    @property
    def deciding_test(self) -> VuongTest:
        """The test of the best family against the runner-up."""
        return next(t for t in self.tests if {t.first, t.second} == {self.best, self.runner_up})


def compare_families(
    counts,
    grid: np.ndarray,
    *,
    x_min: float | None = None,
    families: Sequence[str] = FAMILIES,
    p_threshold: float = 0.05,
    bic_threshold: float = 6.0,
    rule: str = "test",
) -> FamilyComparison:
    """Fit every family to the events with severity ≥ ``x_min`` (default: the first positive
    grid level) and compare them (methods note B4); ``rule`` decides ``decisive``
    (:class:`FamilyComparison`)."""
    if rule not in DECISIVE_RULES:
        raise ValueError(f"rule must be one of {DECISIVE_RULES}, got {rule!r}")
    c = np.asarray(counts, dtype=np.float64)
    i = 1 if x_min is None else level_index(grid, x_min)
    x, tail = grid[i:], c[i:]
    fits = {f: fit_family(f, tail, x) for f in families}
    bics = {f: fit.bic for f, fit in fits.items()}
    order = sorted(bics, key=lambda f: (bics[f], families.index(f)))
    best, runner = order[0], order[1]
    tests = tuple(vuong_test(fits[a], fits[b], tail) for a, b in combinations(families, 2))
    deciding = next(t for t in tests if {t.first, t.second} == {best, runner})
    if rule == "paper":
        decisive = deciding.pvalue < p_threshold or bics[runner] - bics[best] > bic_threshold
    else:
        decisive = favours(deciding, best, p_threshold)
    return FamilyComparison(
        float(x[0]),
        fits,
        {f: bics[f] - bics[best] for f in families},
        tests,
        best,
        runner,
        bool(decisive),
        float(p_threshold),
        float(bic_threshold),
        rule,
    )
