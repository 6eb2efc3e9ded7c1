"""The ``simulate`` backend: bounded classifier-like scores with a known logit-scale truth.

Model (per condition; all parameters are registered under ``conditions[].simulate``):

* A latent severity ``L`` on the logit scale. Below the splice point ``u0`` — the
  ``1 - tail.share`` quantile of the bulk — ``L`` follows the bulk distribution
  (``bulk.family`` logistic or normal with ``bulk.loc`` and ``bulk.scale``). Above ``u0``,
  ``L - u0`` is exactly Generalized Pareto with shape ``tail.xi`` and scale ``tail.sigma``
  (Eq. 1 of Zhou (2026)), and carries the mass ``tail.share``. Peaks-over-threshold fits above
  ``u0`` therefore have the registered ξ as their truth.
* The score a sigmoid-headed classifier would return, ``S = sigmoid(L)`` in (0, 1).

Saturation (``saturation.share`` > 0, ``saturation.at``, a probability score in (0, 1)): a
fraction ``share`` of all rows scores above ``at``, i.e. lies within ``1 - at`` of the ceiling
(latent above ``logit(at)``). It is realised by solving the tail scale σ in closed form so that
the spliced GPD tail puts exactly that mass above ``logit(at)`` (``saturation.share > 0``
therefore replaces ``tail.sigma``;
the solved value is :attr:`SimulationTruth.tail_sigma`). This keeps the logit-scale tail an exact
GPD — the Anderson–Darling gate accepts it on the logit scale — while on the probability scale
``1 - S ≈ exp(-L)`` turns an exponential logit tail of scale σ into a density ∝ t^(1/σ - 1)
near the ceiling: for σ > 1 the exceedances pile against 1, the GPD likelihood is unbounded
at ξ < -1 and the probability-scale MLE collapses to the boundary ξ̂ ≈ -1 (Proposition 1 and
Section 6.2 of Zhou (2026), where the near-atom is "a non-negligible fraction of mass concentrated
within a small neighbourhood [B - η, B]").

Three further models replace the score for the analyses of ERRORQUAKE (2026), Guo et al. (2025)
and Acharyya et al. (2025) (registered under the same ``simulate:`` block; the latent column
then holds the score itself):

* ``severity_grid`` {``b``, ``error_rate``, ``step`` [0.5], ``top`` [4.0], ``m_min`` [step]}: an
  error-severity grade on the grid 0, step, …, top (0 = correct with probability
  1 − ``error_rate``; errors are truncated Gutenberg–Richter from ``m_min``, P(m_min + kδ) ∝
  10^(−b·δ·k) up to ``top``: the finite-grid model of methods note B1, so b is the truth of the
  severity
  analysis);
* ``bernoulli`` {``p``}: a binary response, 1 with probability ``p`` (Acharyya et al. (2025)'s
  model of one query's "yes" rate). Each row also carries the response as text in
  ``completion``: ``"Yes."`` for 1 and ``"No."`` for 0 (:data:`BERNOULLI_TEXTS`), so a registered
  embedding model has texts to embed (the energy test of the ``perturbation`` kind, methods note
  A8). Every other model writes an empty ``completion``.
* ``token_ce`` {``median``, ``sigma`` [1.0], ``hard_share`` [0.06], ``hard_median``,
  ``hard_sigma`` [0.4], ``sequence_sd`` [0.3], ``tokens_per_sequence`` [50]}: per-token
  cross-entropy for Guo et al. (2025), one row per token, sequence = prompt_id //
  tokens_per_sequence.
  Bulk tokens have CE median·exp(sequence_sd·z_s + sigma·z), hard tokens hard_median·
  exp(hard_sigma·z). The sequence effects z_s and which tokens are hard are drawn from streams
  that do not depend on the condition, so checkpoints share their sequences and hard tokens.

Sampling is by inversion from a single uniform per row drawn from
``tailgate.seeds.rng(seed, "simulate", condition)``; the full vector of a condition is drawn and
shard ``k`` keeps positions ``p % shards == k`` (:func:`tailgate.generate.shards.shard_indices`),
so every prompt's value is independent of the
number of shards and of the order in which jobs run.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from scipy.special import expit

from tailgate.files.atomic import write_parquet
from tailgate.protocol.design import DEFAULT_BULK
from tailgate.seeds import rng
from tailgate.stats.distributions import (
    gpd_cdf,
    gpd_ppf,
    logistic_cdf,
    logistic_ppf,
    norm_cdf,
    norm_ppf,
)

from .shards import shard_indices
from .spec import DataInputError, condition_spec

__all__ = [
    "BERNOULLI_TEXTS",
    "BULK_FAMILIES",
    "DEFAULT_BULK",
    "DEFAULT_SATURATION",
    "DEFAULT_TAIL",
    "SCORE_COLUMN",
    "SimulationTruth",
    "generate_shard",
    "simulate_condition",
    "simulated_table",
    "truth_from_spec",
]

SCORE_COLUMN = "simulated_score"
#: the response text of a ``bernoulli`` row, by its value (module docstring)
BERNOULLI_TEXTS = {0: "No.", 1: "Yes."}
BULK_FAMILIES = ("logistic", "normal")
#: Defaults for ``conditions[].simulate`` (documented in the pre-registration schema); the bulk's
#: is also the reference pair's of the operating characteristics (:mod:`tailgate.protocol.design`).
DEFAULT_TAIL: dict[str, Any] = {"xi": 0.1, "sigma": 0.5, "share": 0.05}
DEFAULT_SATURATION: dict[str, Any] = {"share": 0.0, "at": 0.999}

# Smallest and largest float64 strictly inside (0, 1): scores stay in the open interval even
# where sigmoid rounds to 0 or 1 (|latent| > ~36.7).
_OPEN_LOW = np.nextafter(0.0, 1.0)
_OPEN_HIGH = np.nextafter(1.0, 0.0)


@dataclass(frozen=True)
class SimulationTruth:
    """The known truth of one simulated condition (latent logit-scale severity).

    ``splice`` is u0, the bulk's ``1 - tail_share`` quantile above which the latent excess is
    GPD(``tail_xi``, ``tail_sigma``); ``tail_sigma`` is the registered σ or, with saturation, the
    σ solved so that ``saturation_share`` of all rows score above ``saturation_at`` (a
    probability; the latent level is ``logit(saturation_at)``).
    """

    bulk_family: str
    bulk_loc: float
    bulk_scale: float
    tail_xi: float
    tail_sigma: float
    tail_share: float
    saturation_share: float
    saturation_at: float
    splice: float

    def _bulk_ppf(self, p: np.ndarray) -> np.ndarray:
        ppf = logistic_ppf if self.bulk_family == "logistic" else norm_ppf
        return ppf(p, self.bulk_loc, self.bulk_scale)

    def _bulk_cdf(self, x: np.ndarray) -> np.ndarray:
        cdf = logistic_cdf if self.bulk_family == "logistic" else norm_cdf
        return np.asarray(cdf(x, self.bulk_loc, self.bulk_scale))

    def ppf(self, p: np.ndarray | float) -> np.ndarray:
        """Quantile function of the latent severity (inversion sampling uses it)."""
        p = np.asarray(p, dtype=np.float64)
        body = 1.0 - self.tail_share
        out = np.empty_like(p)
        low = p < body
        out[low] = self._bulk_ppf(p[low])
        if self.tail_share > 0:
            excess = (p[~low] - body) / self.tail_share
            out[~low] = self.splice + gpd_ppf(excess, self.tail_xi, self.tail_sigma)
        else:  # pragma: no cover - p < 1 always lands in the bulk
            out[~low] = self._bulk_ppf(p[~low])
        return out

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        """Distribution function of the latent severity."""
        x = np.asarray(x, dtype=np.float64)
        if self.tail_share == 0:
            return self._bulk_cdf(x)
        body = 1.0 - self.tail_share
        below = np.minimum(self._bulk_cdf(x), body)
        above = body + self.tail_share * np.asarray(
            gpd_cdf(x - self.splice, self.tail_xi, self.tail_sigma)
        )
        return np.where(x <= self.splice, below, above)

    def sf_latent(self, x: float) -> float:
        """P(L > x): share of rows whose latent severity exceeds ``x``."""
        return float(1.0 - self.cdf(x))


def _number(block: dict[str, Any], key: str, default: Any, where: str) -> float:
    value = block.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DataInputError(
            f"Field `{where}.{key}` must be a finite number, got {value!r}. Fix: set it to a "
            f"number (default {default!r})."
        )
    return float(value)


def truth_from_spec(spec: dict[str, Any] | None, *, where: str = "simulate") -> SimulationTruth:
    """Validate a ``simulate:`` block (defaults applied) and derive its :class:`SimulationTruth`.

    ``where`` names the block in error messages (e.g. ``conditions[qwen_clean].simulate``).
    """
    spec = spec or {}
    bulk = {**DEFAULT_BULK, **(spec.get("bulk") or {})}
    tail = {**DEFAULT_TAIL, **(spec.get("tail") or {})}
    sat = {**DEFAULT_SATURATION, **(spec.get("saturation") or {})}
    family = bulk["family"]
    if family not in BULK_FAMILIES:
        raise DataInputError(
            f"Field `{where}.bulk.family` is {family!r}. Fix: use one of "
            f"{', '.join(BULK_FAMILIES)}."
        )
    loc = _number(bulk, "loc", DEFAULT_BULK["loc"], f"{where}.bulk")
    scale = _number(bulk, "scale", DEFAULT_BULK["scale"], f"{where}.bulk")
    xi = _number(tail, "xi", DEFAULT_TAIL["xi"], f"{where}.tail")
    sigma = _number(tail, "sigma", DEFAULT_TAIL["sigma"], f"{where}.tail")
    share = _number(tail, "share", DEFAULT_TAIL["share"], f"{where}.tail")
    sat_share = _number(sat, "share", DEFAULT_SATURATION["share"], f"{where}.saturation")
    sat_at = _number(sat, "at", DEFAULT_SATURATION["at"], f"{where}.saturation")
    if scale <= 0:
        raise DataInputError(f"Field `{where}.bulk.scale` must be > 0, got {scale}. Fix: e.g. 1.0.")
    if sigma <= 0:
        raise DataInputError(f"Field `{where}.tail.sigma` must be > 0, got {sigma}. Fix: e.g. 0.5.")
    if not 0 <= share < 1:
        raise DataInputError(
            f"Field `{where}.tail.share` must lie in [0, 1), got {share}. Fix: e.g. 0.05 (the GPD "
            f"tail then starts at the bulk's 95% quantile)."
        )
    if not -1 < xi < 1:
        raise DataInputError(
            f"Field `{where}.tail.xi` must lie in (-1, 1) (finite mean, regular tail), got {xi}. "
            f"Fix: choose a shape in that range, e.g. 0.0 for a light (Gumbel-domain) tail."
        )
    ppf = logistic_ppf if family == "logistic" else norm_ppf
    splice = float(ppf(1.0 - share, loc, scale)) if share > 0 else math.inf
    if sat_share < 0 or (sat_share > 0 and sat_share >= share):
        raise DataInputError(
            f"Field `{where}.saturation.share` must lie in [0, tail.share) = [0, {share}), got "
            f"{sat_share}. Fix: saturation piles part of the tail near the ceiling, so it must be "
            f"smaller than `tail.share` (or 0 for none)."
        )
    if not 0.0 < sat_at < 1.0:
        raise DataInputError(
            f"Field `{where}.saturation.at` must be a probability score in (0, 1), got {sat_at}. "
            f"Fix: e.g. `at: 0.95` (rows scoring above 0.95 count as saturated)."
        )
    if sat_share > 0:
        level = math.log(sat_at / (1.0 - sat_at))
        distance = level - splice
        if distance <= 0:
            raise DataInputError(
                f"Field `{where}.saturation.at` ({sat_at}, logit {level:.4g})"
                f" must lie above the tail's splice point u0 = {splice:.4g} (the bulk's "
                f"{1 - share:.4g} quantile, logit scale). Fix: raise `saturation.at` or lower "
                f"`bulk.loc`/`tail.share`."
            )
        ratio = sat_share / share  # GPD survival needed at `distance`
        if xi == 0:
            sigma = distance / -math.log(ratio)
        else:  # (1 + xi d / sigma)^(-1/xi) = ratio  =>  sigma = xi d / (ratio^-xi - 1)
            sigma = xi * distance / (ratio ** (-xi) - 1.0)
    return SimulationTruth(
        bulk_family=family,
        bulk_loc=loc,
        bulk_scale=scale,
        tail_xi=xi,
        tail_sigma=float(sigma),
        tail_share=share,
        saturation_share=sat_share,
        saturation_at=sat_at,
        splice=splice,
    )


def _grid_severity(block: dict[str, Any], u: np.ndarray, where: str) -> np.ndarray:
    """Inversion of the ``severity_grid`` model (module docstring) at uniforms ``u``."""
    b = _number(block, "b", None, where)
    eps = _number(block, "error_rate", None, where)
    step = _number(block, "step", 0.5, where)
    top = _number(block, "top", 4.0, where)
    m_min = _number(block, "m_min", step, where)
    levels = round(top / step)
    first = round(m_min / step)
    if not (0 < eps < 1) or step <= 0 or not (1 <= first < levels):
        raise DataInputError(
            f"Field `{where}` needs 0 < error_rate < 1, step > 0 and a positive m_min below top "
            f"on the grid, got error_rate {eps}, step {step}, m_min {m_min}, top {top}. Fix: e.g. "
            "`severity_grid: {b: 1.0, error_rate: 0.3}`."
        )
    k = np.arange(levels - first + 1)
    tail = 10.0 ** (-b * step * k)
    cdf = np.cumsum(tail / tail.sum())
    cdf[-1] = 1.0
    err = u >= 1.0 - eps
    rank = np.searchsorted(cdf, (u - (1.0 - eps)) / eps, side="right")
    return np.where(err, (first + np.minimum(rank, k.size - 1)) * step, 0.0)


def _bernoulli(block: dict[str, Any], u: np.ndarray, where: str) -> np.ndarray:
    p = _number(block, "p", None, where)
    if not 0 <= p <= 1:
        raise DataInputError(f"Field `{where}.p` must lie in [0, 1], got {p}. Fix: e.g. 0.4.")
    return (u < p).astype(np.float64)


def _token_ce(block: dict[str, Any], u: np.ndarray, where: str, seed: int = 0) -> np.ndarray:
    median = _number(block, "median", None, where)
    sigma = _number(block, "sigma", 1.0, where)
    hard_share = _number(block, "hard_share", 0.06, where)
    hard_median = _number(block, "hard_median", None, where)
    hard_sigma = _number(block, "hard_sigma", 0.4, where)
    seq_sd = _number(block, "sequence_sd", 0.3, where)
    length = int(_number(block, "tokens_per_sequence", 50, where))
    if median <= 0 or hard_median <= 0 or sigma < 0 or hard_sigma < 0 or seq_sd < 0:
        raise DataInputError(
            f"Field `{where}` needs positive medians and non-negative spreads. Fix: e.g. "
            "`token_ce: {median: 1.0, hard_median: 4.0}`."
        )
    if not 0 <= hard_share < 1 or length < 1:
        raise DataInputError(
            f"Field `{where}` needs 0 <= hard_share < 1 and tokens_per_sequence >= 1."
        )
    n = u.size
    z = norm_ppf(np.clip(u, 1e-300, 1.0 - 1e-16))
    shared = rng(seed, "simulate", "token_ce")  # the same sequences and hard tokens everywhere
    hard = shared.random(n) < hard_share
    z_seq = shared.standard_normal(n // length + 1)[np.arange(n) // length]
    bulk = median * np.exp(seq_sd * z_seq + sigma * z)
    return np.where(hard, hard_median * np.exp(hard_sigma * z), bulk)


#: discrete models of ``simulate:`` (module docstring): block name → inversion at uniforms
DISCRETE_MODELS = {"severity_grid": _grid_severity, "bernoulli": _bernoulli, "token_ce": _token_ce}


def discrete_model(spec: dict[str, Any] | None) -> str | None:
    """The discrete model a ``simulate:`` block registers, if any."""
    names = [m for m in DISCRETE_MODELS if (spec or {}).get(m) is not None]
    return names[0] if names else None


def simulate_condition(seed: int, condition: str, truth: SimulationTruth, n: int) -> np.ndarray:
    """The full latent vector (length ``n``) of ``condition``, by inversion of ``truth.ppf``."""
    u = rng(seed, "simulate", condition).random(n)
    return truth.ppf(u)


def simulated_table(
    prompt_ids: np.ndarray,
    latent: np.ndarray,
    score: np.ndarray | None = None,
    completion: list[str] | None = None,
) -> pa.Table:
    """A generation table in the shared shard layout for simulated prompts (``score`` defaults
    to the sigmoid of the latent severity, ``completion`` to an empty text per row)."""
    n = len(prompt_ids)
    if score is None:
        score = np.clip(expit(latent), _OPEN_LOW, _OPEN_HIGH)
    return pa.table(
        {
            "prompt_id": pa.array(prompt_ids, pa.int64()),
            "prompt": pa.array([f"sim-{int(i)}" for i in prompt_ids], pa.string()),
            "completion": pa.array([""] * n if completion is None else completion, pa.string()),
            "prompt_tokens": pa.array(np.zeros(n, np.int32), pa.int32()),
            "completion_tokens": pa.array(np.zeros(n, np.int32), pa.int32()),
            "finish_reason": pa.array(["simulated"] * n, pa.string()),
            SCORE_COLUMN: pa.array(score, pa.float64()),
            "latent": pa.array(latent, pa.float64()),
        }
    )


def _prompt_count(study: Any, spec: dict[str, Any]) -> int:
    n = spec.get("prompts", study.sample_cap)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DataInputError(
            f"Field `conditions[{spec.get('name')}].prompts` (or `sample_cap`) of study "
            f"{study.name!r} must be a positive integer, got {n!r}. Fix: e.g. `prompts: 30000`."
        )
    return n


def generate_shard(
    study: Any,
    condition: str,
    shard: int,
    out_path: str | os.PathLike[str],
    *,
    options: dict[str, Any],
) -> None:
    """Write shard ``shard`` of the simulated ``condition`` (see the module docstring)."""
    del options  # the simulate backend has no operational knobs
    spec = condition_spec(study, condition)
    n = _prompt_count(study, spec)
    positions = shard_indices(
        n,
        shard=shard,
        shards=study.shards,
        count=n,
        condition=condition,
        study=study.name,
    )
    model = discrete_model(spec.get("simulate"))
    if model is not None:
        where = f"conditions[{condition}].simulate.{model}"
        u = rng(study.seed, "simulate", condition).random(n)
        extra = {"seed": study.seed} if model == "token_ce" else {}
        score = DISCRETE_MODELS[model](spec["simulate"][model], u, where, **extra)[positions]
        texts = [BERNOULLI_TEXTS[int(v)] for v in score] if model == "bernoulli" else None
        write_parquet(out_path, simulated_table(positions, score, score, texts))
        return
    truth = truth_from_spec(spec.get("simulate"), where=f"conditions[{condition}].simulate")
    latent = simulate_condition(study.seed, condition, truth, n)
    write_parquet(out_path, simulated_table(positions, latent[positions]))
