"""The design a pre-registration implies (Section 4 of Zhou (2026)).

:func:`derived_design` computes n_exc* from Eq. 2 of Zhou (2026) for the registered Δfloor, α,
power and ξ̄, the prompt count that yields n_exc* exceedances at the headline threshold, and
whether the registered prompts per condition reach it. The statistics engine adds a simulated
P1∧P2 pass rate through :func:`simulated_power` (App. E of Zhou (2026)).

Two levels. ``n_exc_required`` is Eq. 2 at the registered α as Table 1 of Zhou (2026) prints it;
``n_exc_required_gate`` and ``achieved_power_gate`` are Eq. 2 at the α the gates actually give
P1 (α/m under Bonferroni over the m pairs of the family, when P1 is adjusted): the demo's
n_exc* is 1,570 at α = 0.05 but 2,663 at α/10. Every simulated power is at P1's level.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.prereg.lock import read_lock
from tailgate.protocol.operating_lattice import reference_step
from tailgate.protocol.registered import registered_settings
from tailgate.seeds import derive_seed, seed_sequence
from tailgate.stats.power import achieved_power, required_exceedances

__all__ = [
    "DEFAULT_BULK",
    "WHAT_A_SMALL_STUDY_LEARNS",
    "Design",
    "cannot_pass",
    "check_false_pass",
    "derived_design",
    "exceedances_at",
    "operating_characteristics",
    "planned_prompts",
    "power_line",
    "prompts_for",
    "simulated_power",
    "with_procedure_power",
]


#: what a study too small for the tail-shape verdict can still tell (said by init and design)
WHAT_A_SMALL_STUDY_LEARNS = (
    "What a few hundred documents per condition can tell: the bulk and the near tail (means, "
    "quantiles up to about 1 - 10/n, TVaR at a moderate level, the percentiles, severity and "
    "dominance analyses); not the shape ξ of the far tail, which needs the exceedances above "
    "(register such a study with protocol.enabled: false and those analyses, or mark its "
    "conditions pilot: true)"
)


def cannot_pass(study: Any) -> str | None:
    """Why H1 cannot PASS at the registered size (G3, n_exc ≥ N*, fails for every pair at every
    threshold of the band), or None.

    Pilots are small on purpose and left out.

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).

    Returns
    -------
    str or None
        The reason, in words, when the smallest planned condition (:func:`planned_prompts`)
        gives fewer than N* (``protocol.min_exceedances``) exceedances at the lowest threshold
        of the band; None otherwise.
    """
    n_star = study.rules.min_exceedances
    smallest = planned_prompts(study)
    q = min(study.thresholds.band)
    best = exceedances_at(smallest, q)
    if best >= n_star:
        return None
    return (
        f"the smallest condition's {smallest} planned prompts give at most {best} exceedances "
        f"in the threshold band (q = {q:g}), below N* = {n_star} (protocol.min_exceedances), so "
        f"G3 fails for every pair at every threshold and H1 cannot PASS at this size"
    )


def exceedances_at(prompts: int, q: float) -> int:
    """Expected exceedances of the q-quantile among ``prompts`` draws: ⌊prompts·(1 − q)⌋.

    Parameters
    ----------
    prompts : int
        Draws (prompts) of one condition.
    q : float
        Quantile level of the threshold.

    Returns
    -------
    int
        ⌊prompts·(1 − q)⌋, the product rounded to six decimals first (no exceedance lost to
        float error).
    """
    return math.floor(round(prompts * (1.0 - q), 6))


def prompts_for(n_exc: int, q: float) -> int:
    """Prompts needed for ``n_exc`` exceedances above the q-quantile: ⌈n_exc / (1 − q)⌉.

    Parameters
    ----------
    n_exc : int
        Exceedances wanted.
    q : float
        Quantile level of the threshold.

    Returns
    -------
    int
        ⌈n_exc / (1 − q)⌉, the quotient rounded to six decimals first (no prompt added by float
        error).
    """
    return math.ceil(round(n_exc / (1.0 - q), 6))


@dataclass(frozen=True)
class Design:
    """Derived design values of a study (recorded in its lock).

    ``cap_meets_bound`` is about the smallest planned prompts per condition (``min_prompts``,
    the sample cap unless a condition registers fewer; pilot conditions, which are small on
    purpose, are left out). ``simulated_power`` is the P1∧P2 pass
    rate at the floor when the statistics engine provides it, else ``None``.
    """

    delta_floor: float
    alpha: float
    power: float
    xi_bar: float
    q_headline: float
    n_exc_required: int
    prompts_required: int
    sample_cap: int
    min_prompts: int
    n_exc_planned: int
    cap_meets_bound: bool
    achieved_power: float
    accepted_power: float | None
    min_exceedances: int
    simulated_power: float | None = None
    alpha_p1: float | None = None
    n_exc_required_gate: int | None = None
    prompts_required_gate: int | None = None
    achieved_power_gate: float | None = None
    procedure_power: float | None = None
    procedure_power_mc_se: float | None = None
    #: what ``accepted_power`` records: :data:`PROCEDURE` (the simulated power of the registered
    #: procedure), or :data:`Z_TEST` for a study whose lock was written when it recorded Eq. 2's
    #: z-test power (:func:`accepted_power_rule`); a committed lock keeps its meaning
    accepted_rule: str = "procedure"

    @property
    def supported_power(self) -> float | None:
        """The most ``accepted_power`` may record: the simulated power of the registered
        procedure at Δξ = 1.5 × Δfloor (:data:`ACCEPTED_AT`) less two Monte Carlo s.e., at least
        0, floored to three decimals; None until simulated (:func:`with_procedure_power`)."""
        if self.procedure_power is None or self.procedure_power_mc_se is None:
            return None
        low = self.procedure_power - 2.0 * self.procedure_power_mc_se
        return max(0.0, math.floor(round(low * 1000, 6)) / 1000)

    @property
    def power_accepted(self) -> bool:
        """No ``accepted_power`` and the Eq. 2 bound met, ``accepted_power: 0`` (H1 may never
        PASS at this size, accepted), or an ``accepted_power`` the simulation of the registered
        procedure supports (:attr:`supported_power`)."""
        if self.accepted_power is None:
            return self.cap_meets_bound
        if self.accepted_power == 0:  # no power claimed: nothing to simulate
            return True
        if self.accepted_rule == Z_TEST:
            return self.achieved_power >= self.accepted_power - 5e-4
        supported = self.supported_power
        return supported is not None and self.accepted_power <= supported + 1e-9

    def to_json(self) -> dict[str, Any]:
        """Plain values for the lock file, with :attr:`supported_power`."""
        values = {**dataclasses.asdict(self), "supported_power": self.supported_power}
        del values["accepted_rule"]  # the lock's own keys say it (:func:`accepted_power_rule`)
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in values.items()}


PROCEDURE, Z_TEST = "procedure", "z-test"


def accepted_power_rule(study: Any) -> str:
    """:data:`Z_TEST` when the study's lock exists and its first entry's derived design holds no
    ``supported_power`` (it was frozen when ``accepted_power`` recorded Eq. 2's z-test power:
    the shipped demo), else :data:`PROCEDURE`. A registration means what it meant when frozen, so
    amending such a study does not refuse the number its lock accepted."""
    try:
        lock = read_lock(study.lock_path)
    except (AttributeError, InputError):
        return PROCEDURE
    derived = (lock.chain[0].get("derived") or {}) if lock is not None and lock.chain else {}
    old = isinstance(derived, dict) and "achieved_power" in derived
    return Z_TEST if old and "supported_power" not in derived else PROCEDURE


def planned_prompts(study: Any) -> int:
    """The smallest registered prompts per condition, pilots left out (unless all are pilots).

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).

    Returns
    -------
    int
        The least ``prompts`` of its non-pilot conditions (of all conditions when every one is
        a pilot).
    """
    conditions = study.conditions()
    confirmatory = [c for c in conditions if not c.get("pilot", False)]
    return min(int(c["prompts"]) for c in (confirmatory or conditions))


def derived_design(study: Any) -> Design:
    """The Eq. 2 design of ``study``.

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).

    Returns
    -------
    Design
        n_exc* and its prompts at the headline threshold, at the registered α and at the α the
        gates give P1, the exceedances the smallest condition plans (:func:`planned_prompts`),
        whether they meet n_exc*, and the z-test power there; the simulated powers are None
        (:func:`simulated_power`, :func:`with_procedure_power` fill them in).

    References
    ----------
    Zhou (2026), Section 4, Eq. 2.
    """
    rules, q = study.rules, study.thresholds.headline
    alpha, power, xi_bar, delta = rules.alpha, rules.power, rules.xi_bar, rules.delta_floor
    n_req = required_exceedances(delta, alpha=alpha, power=power, xi_bar=xi_bar)
    min_prompts = planned_prompts(study)
    n_plan = exceedances_at(min_prompts, q)
    alpha_p1 = registered_settings(study).alpha_of("P1")
    n_gate = required_exceedances(delta, alpha=alpha_p1, power=power, xi_bar=xi_bar)
    return Design(
        delta_floor=delta,
        alpha=alpha,
        power=power,
        xi_bar=xi_bar,
        q_headline=q,
        n_exc_required=n_req,
        prompts_required=prompts_for(n_req, q),
        sample_cap=study.sample_cap,
        min_prompts=min_prompts,
        n_exc_planned=n_plan,
        cap_meets_bound=n_plan >= n_req,
        achieved_power=achieved_power(n_plan, delta, alpha=alpha, xi_bar=xi_bar),
        accepted_power=study.accepted_power,
        accepted_rule=accepted_power_rule(study),
        min_exceedances=rules.min_exceedances,
        alpha_p1=alpha_p1,
        n_exc_required_gate=n_gate,
        prompts_required_gate=prompts_for(n_gate, q),
        achieved_power_gate=achieved_power(n_plan, delta, alpha=alpha_p1, xi_bar=xi_bar),
    )


def simulated_power(study: Any, design: Design) -> tuple[Design, str, list[dict[str, Any]]]:
    """``design`` with the simulated P1∧P2 pass rate filled in, lines saying how, and the rates
    as numbers.

    Uses :func:`tailgate.protocol.recovery.simulate_pass_rate` (App. E of Zhou (2026)) at
    Δξ_true = Δfloor and at 1.5 × Δfloor (where App. E and Section 4 place the operative rule's
    80 % power), the planned exceedances, P1 as the gates apply it (registered method, 1 − α/m
    under Bonferroni when P1 is adjusted, printed) and the ``protocol.power_simulation`` trials
    and resamples (absent: the percentile interval's validated stand-in), each with a stream
    derived from the study seed; every rate is shown with its Monte Carlo standard error.

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).
    design : Design
        Its derived design (:func:`derived_design`): Δfloor, ξ̄ and the planned exceedances.

    Returns
    -------
    Design
        ``design`` with ``simulated_power`` the rate at the floor (unchanged when the
        simulation is not available).
    str
        The lines saying how, or ``simulated power: not available`` and why.
    list of dict
        One per Δξ_true: ``delta_xi``, ``rate``, ``mc_se``, ``trials``, ``resamples``,
        ``level``, ``p1_interval``; empty when not available.

    References
    ----------
    Zhou (2026), Appendix E; Section 4.
    """
    try:
        from tailgate.protocol.recovery import simulate_pass_rate
    except ImportError:  # pragma: no cover - the engine ships with tailgate
        return design, "simulated power: not available", []

    sim = study.power_simulation
    resamples = sim.resamples
    lines: list[str] = []
    rates: list[dict[str, Any]] = []
    at_floor = None
    settings = registered_settings(study)
    level = settings.ci_level
    for factor in (1.0, 1.5):
        delta_xi = factor * design.delta_floor
        try:
            res = simulate_pass_rate(
                delta_xi,
                design.n_exc_planned,
                settings,
                trials=sim.trials,
                resamples=resamples,
                seed=derive_seed(study.seed, "design", "simulated_power", factor),
                xi_a=design.xi_bar,
            )
        except (TypeError, ValueError) as exc:
            return design, f"simulated power: not available ({exc})", []
        if at_floor is None:
            at_floor = float(res.rate)
        rates.append(
            {
                "delta_xi": delta_xi,
                "rate": round(res.rate, 6),
                "mc_se": round(res.mc_se, 6),
                "trials": res.trials,
                "resamples": res.resamples,
                "level": level,
                "p1_interval": res.p1,
            }
        )
        lines.append(
            f"simulated power of P1∧P2 at Δξ = {factor:g} × Δfloor = {delta_xi:g} and "
            f"{design.n_exc_planned} exceedances, P1 at CI level {level:.4g}: {res.rate:.3f} ± "
            f"{res.mc_se:.3f} (Monte Carlo s.e., {sim.trials} trials)"
        )
    lines.append(f"(P1 by {rates[0]['p1_interval']})")
    lines.append(
        "(App. E of Zhou (2026): the operative rule is conservative at the floor and reaches its "
        "power near 1.5 × Δfloor)"
    )
    if settings.p1_method == "percentile" and resamples is not None and resamples < 1000:
        lines.append(
            f"(percentile CIs at level {level:.4g} from {resamples} resamples are too narrow, "
            "so these rates run high; leave power_simulation.resamples out to simulate P1 at "
            "the registered resolution)"
        )
    return dataclasses.replace(design, simulated_power=at_floor), "\n".join(lines), rates


def describe(design: Design) -> list[str]:
    """Human-readable lines for ``tailgate design``."""
    d = design
    lines = [
        f"Eq. 2 of Zhou (2026): n_exc* = {d.n_exc_required} exceedances per condition "
        f"(Δfloor={d.delta_floor:g}, α={d.alpha:g} two-sided, power={d.power:g}, ξ̄={d.xi_bar:g})",
        f"prompts at headline q={d.q_headline:g}: {d.prompts_required} per condition",
        f"registered: sample_cap={d.sample_cap}, smallest condition={d.min_prompts} prompts "
        f"→ {d.n_exc_planned} exceedances (N*={d.min_exceedances})",
        f"z-test power at {d.n_exc_planned} exceedances: {d.achieved_power:.3f} (Eq. 2's "
        "two-sample z-test, a necessary bound: not the registered procedure's power)",
    ]
    if d.alpha_p1 is not None and d.n_exc_required_gate is not None:
        lines.append(
            f"at the level the gates give P1 (α_P1 = {d.alpha_p1:.4g}): n_exc* = "
            f"{d.n_exc_required_gate} ({d.prompts_required_gate} prompts at q={d.q_headline:g}), "
            f"z-test power at {d.n_exc_planned} exceedances: {d.achieved_power_gate:.3f}"
        )
    if d.procedure_power is not None:
        lines.append(power_line(d))
    if d.cap_meets_bound:
        lines.append("cap check: OK, the registered prompts meet the Eq. 2 bound")
    elif d.accepted_power is None:
        lines.append(
            "cap check: FAILS — the registered prompts are below the Eq. 2 bound and no "
            "accepted_power is recorded (freeze will refuse)"
        )
    if d.accepted_power is not None:
        supported = d.supported_power
        if d.accepted_rule == Z_TEST:
            verdict = (
                f"{'OK' if d.power_accepted else 'FAILS'} by the rule its lock was frozen "
                f"under: Eq. 2's z-test power ({d.achieved_power:.3f}), not the simulated "
                "power of the procedure (above)"
            )
        elif supported is None:
            verdict = "not checked: the registered procedure was not simulated"
        elif d.power_accepted:
            verdict = f"OK, the simulation supports up to {supported:g}"
        else:
            verdict = f"FAILS — the simulation supports at most {supported:g} (freeze will refuse)"
        lines.append(f"accepted_power {d.accepted_power:g}: {verdict}")
    if d.n_exc_planned < d.min_exceedances:
        lines.append(
            f"warning: {d.n_exc_planned} planned exceedances are below N*={d.min_exceedances}: "
            "gate G3 cannot pass"
        )
    return lines


#: the bulk of the reference pair of :func:`operating_characteristics`: the ``simulate``
#: backend's default ``conditions[].simulate.bulk`` (documented in the pre-registration schema)
DEFAULT_BULK: dict[str, Any] = {"family": "logistic", "loc": -6.0, "scale": 1.0}
#: truths simulated by :func:`operating_characteristics`, as multiples of Δfloor
OC_FACTORS = (0.0, 0.5, 1.0, 1.5)


class ReferencePair:
    """Headline-scale sampler of the reference pair: the simulate backend's default logistic
    bulk with a GPD(ξ̄ + Δξ) tail above ``share`` and the mean excess of GPD(ξ̄, 1)
    (bulk-matched, as the demo's pairs), by closed-form inversion of one uniform per row
    (:meth:`quantile`; a :class:`tailgate.protocol.operating.QuantileSampler`)."""

    def __init__(self, study: Any, share: float) -> None:
        from scipy.special import logit

        self.xi_bar, self.scale = study.rules.xi_bar, study.rules.headline_scale
        self.loc, self.s = float(DEFAULT_BULK["loc"]), float(DEFAULT_BULK["scale"])
        self.share, self.body = share, 1.0 - share
        self.splice = self.loc + self.s * float(logit(self.body))
        #: where the quantile function is not smooth
        self.kinks = (self.body,)

    def quantile(self, delta_xi: float) -> Any:
        """The quantile function of the condition at ``delta_xi``."""
        from scipy.special import expit

        xi = self.xi_bar + delta_xi
        sigma = (1.0 - xi) / (1.0 - self.xi_bar)
        loc, s, body, share, splice = self.loc, self.s, self.body, self.share, self.splice

        def q(p: Any) -> Any:
            e = -np.log1p(-np.clip((p - body) / share, 0.0, None))  # standard exponential above
            tail = splice + sigma * (np.expm1(xi * e) / xi if xi != 0 else e)
            # the bulk's logit as log(p / (1 − p)): scipy's logit costs 17 ns a value (8 here)
            with np.errstate(divide="ignore"):  # p = 0 (probability 2⁻⁵³ a draw) is −inf
                latent = np.where(p < body, loc + s * np.log(p / (1.0 - p)), tail)
            return expit(latent) if self.scale == "probability" else latent

        return q

    def __call__(self, rng: Any, delta_xi: float, shape: tuple[int, int]) -> Any:
        return self.quantile(delta_xi)(rng.random(shape))


#: marks "the registered value" for the overrides of :func:`operating_characteristics`
REGISTERED: Any = object()


def operating_characteristics(
    study: Any,
    design: Design | None = None,
    *,
    workers: int | None = None,
    trials: Any = REGISTERED,
    resamples: Any = REGISTERED,
    factors: tuple[float, ...] = OC_FACTORS,
) -> Any:
    """Simulated false-PASS rate and power of the whole registered procedure (issue of the
    operating characteristics; :mod:`tailgate.protocol.operating`): every gate at the level the
    multiplicity rule gives it, G5 as implemented, the band rule, the smallest registered
    prompts per condition, at Δξ = 0, Δfloor/2, Δfloor and 1.5 × Δfloor.

    ``protocol.operating_characteristics``: ``trials`` (absent: 200) and ``resamples`` (absent:
    P1's percentile intervals are the observed-information stand-in validated against the
    registered bootstrap, :mod:`tailgate.protocol.operating`; given: that many bootstrap resamples
    per fit); the seed stream is ``(design, operating_characteristics)``. Under
    ``thresholds.ties: lattice`` the pair is rounded to the coarsest lattice the registration
    admits (:func:`tailgate.protocol.operating_lattice.reference_step` at ``min_levels``; its
    own stream ``(design, operating_characteristics, lattice)``) and every condition is fitted
    and tested by the lattice rule.
    ``trials``, ``resamples`` and ``factors`` replace the registered values for validation runs
    (``tests/benchmarks/operating_resolution.py``).

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).
    design : Design or None, default None
        Its derived design (None: :func:`derived_design` of ``study``).
    workers : int or None, default None
        Threads that run the bootstraps (None: all cores); the result does not depend on it.
    trials : int, optional
        Trials per truth (default: the registered ``trials``).
    resamples : int or None, optional
        Bootstrap resamples per fit, None for the stand-in (default: the registered value).
    factors : tuple of float, default OC_FACTORS
        The truths, as multiples of Δfloor (0, 0.5, 1, 1.5).

    Returns
    -------
    OperatingCharacteristics
        PASS counts of the procedure per truth and band rule
        (:class:`tailgate.protocol.operating.OperatingCharacteristics`); its notes say the
        approximations made (and where the registration admits no lattice).

    References
    ----------
    Zhou (2026), Sections 3, 4 and 6.3.
    """
    from tailgate.protocol.operating import simulate_procedure

    design = design or derived_design(study)
    workers = workers or os.cpu_count() or 1
    oc, band = study.operating_characteristics, list(study.thresholds.band)
    share = min(0.5, max(0.10, round(1.0 - (min(band) - study.stability.delta) + 0.01, 6)))
    settings = registered_settings(study)
    headline = study.thresholds.headline
    sample = ReferencePair(study, share)
    step, notes = None, ()
    if study.thresholds.ties == "lattice":
        seed = seed_sequence(study.seed, "design", "operating_characteristics", "lattice")
        levels = study.thresholds.min_levels
        step = reference_step(sample, design.min_prompts, headline, levels, seed)
        if step is None:
            notes = (
                f"lattice rule: at {design.min_prompts} prompts no lattice leaves the headline "
                f"threshold more than protocol.thresholds.min_levels = {levels} distinct "
                "exceedance values; simulated as continuous scores (the discretised "
                "likelihood's limit on a fine lattice)",
            )
    oc = simulate_procedure(
        settings,
        band=band,
        headline_q=headline,
        band_rule=study.rules.band_rule,
        n_prompts=design.min_prompts,
        sample=sample,
        delta_xis=[f * design.delta_floor for f in factors],
        trials=oc.trials if trials is REGISTERED else int(trials),
        resamples=resamples if resamples is not REGISTERED else oc.resamples,
        min_side_exceedances=study.stability.min_exceedances,
        seed=seed_sequence(study.seed, "design", "operating_characteristics"),
        workers=workers,
        lattice_step=step,
    )
    return dataclasses.replace(oc, notes=oc.notes + notes) if notes else oc


#: the true Δξ, as a multiple of Δfloor, at which ``accepted_power`` is read: where Section 4
#: and App. E of Zhou (2026) place the operative P1∧P2 rule's power (at the floor itself, the
#: boundary of H1's null, a PASS rate is not power)
ACCEPTED_AT = 1.5


def with_procedure_power(design: Design, oc: Any) -> Design:
    """``design`` with the power of the registered procedure filled in: the PASS rate of
    :func:`operating_characteristics` under the registered band rule at Δξ =
    :data:`ACCEPTED_AT` × Δfloor, and its Monte Carlo s.e.

    Parameters
    ----------
    design : Design
        The derived design (:func:`derived_design`).
    oc : OperatingCharacteristics
        The result of :func:`operating_characteristics`, with a truth at
        :data:`ACCEPTED_AT` × Δfloor.

    Returns
    -------
    Design
        ``design`` with ``procedure_power`` and ``procedure_power_mc_se`` set (six decimals).

    References
    ----------
    Zhou (2026), Section 4; Appendix E.
    """
    at = oc.at(ACCEPTED_AT * design.delta_floor)
    return dataclasses.replace(
        design,
        procedure_power=round(at.rate(oc.band_rule), 6),
        procedure_power_mc_se=round(at.mc_se(oc.band_rule), 6),
    )


def power_line(design: Design) -> str:
    """What ``accepted_power`` may record, in words (said by init, design and freeze).

    Parameters
    ----------
    design : Design
        The design, with the power of the registered procedure (:func:`with_procedure_power`).

    Returns
    -------
    str
        The power at :data:`ACCEPTED_AT` × Δfloor with its Monte Carlo s.e. and the most
        ``accepted_power`` may record, or ``... not simulated`` when the design has no power.
    """
    d = design
    if d.procedure_power is None or d.supported_power is None:
        return "power of the registered procedure: not simulated"
    return (
        f"power of the registered procedure at Δξ = {ACCEPTED_AT:g} × Δfloor = "
        f"{ACCEPTED_AT * d.delta_floor:g} (every gate, {d.min_prompts} prompts per condition): "
        f"{d.procedure_power:.3f} ± {d.procedure_power_mc_se:.3f} (Monte Carlo s.e.); "
        f"accepted_power may record at most {d.supported_power:g} (the rate less two s.e.)"
    )


def check_false_pass(study: Any, oc: Any) -> str | None:
    """None when the registered ``max_false_pass`` (if any) holds, else the refusal reason.

    The simulated false-PASS rate (largest PASS rate below the floor) must not exceed
    ``protocol.operating_characteristics.max_false_pass`` by more than two Monte Carlo s.e.

    Parameters
    ----------
    study : Study
        The pre-registration (:class:`tailgate.prereg.Study`).
    oc : OperatingCharacteristics
        The result of :func:`operating_characteristics`, read under its band rule.

    Returns
    -------
    str or None
        None when no ``max_false_pass`` is registered or it holds, else the reason in words.
    """
    cap = study.operating_characteristics.max_false_pass
    if cap is None:
        return None
    worst = max(
        (s for s in oc.scenarios if s.delta_xi < oc.delta_floor), key=lambda s: s.rate(oc.band_rule)
    )
    rate, se = worst.rate(oc.band_rule), worst.mc_se(oc.band_rule)
    if rate - 2.0 * se <= float(cap):
        return None
    return (
        f"the registered procedure (band rule '{oc.band_rule}') passes a pair with true Δξ = "
        f"{worst.delta_xi:g} (below the floor {oc.delta_floor:g}) {rate:.3f} ± {se:.3f} of the "
        f"time, above protocol.operating_characteristics.max_false_pass = {float(cap):g}"
    )
