"""Fit stage: POT-GPD fits of one condition on one scale (Sections 3, 6.1–6.3 of Zhou (2026)).

``fit[scorer, scale, condition]`` writes ``fits/<scorer>/<scale>/<condition>.json`` in the
:class:`tailgate.protocol.documents.ConditionFits` shape. At every threshold q of the registered
band:
the threshold u (empirical q-quantile), n_exc, ξ̂ and σ̂ (Eq. 1), percentile-bootstrap CIs of ξ
from the registered B resamples — ``xi_ci`` at the registered bootstrap level (Tables 2–4) and
``xi_ci_gate`` at the gates' level 1 − α/k (Bonferroni over the k registered pairs, P1) — the
Anderson–Darling p-value (G4), ξ̂ at q ± δ (G5: ``xi_minus``/``xi_plus``; null when that side is
outside (0, 1) or has fewer than the scan's minimum exceedances, "nan" when it has no interior
fit), the mean excess and TVaR_q above u, and for the probability scale the share of exceedances
above 0.9 and 0.95 (Section 6.2). Plus the stability scan ξ̂(u) of Fig. 3 with its display CIs
(``protocol.stability.intervals``: a percentile bootstrap of ``resamples``, or Wald) and QQ
data at every band threshold (Fig. 2). The scan runs first: its fits at q ± δ are G5's side fits
(the same exceedances), so they are not repeated.

Lattice scores (registered ``protocol.thresholds.ties: lattice``, methods note P10): the
threshold lies half a step below a lattice value, every fit, bootstrap, standard error and
profile uses the discretised likelihood of the lattice step (registered as
``protocol.thresholds.lattice_step`` or detected in the condition's scores, recorded as
``lattice``), G4 is the discretised Anderson–Darling test with a parametric-bootstrap p-value
(:func:`tailgate.stats.gof.anderson_darling_lattice`), and G5's sides are distinct lattice
thresholds: where q + δ lands on q's own threshold, the side moves one lattice step up, and
where q − δ does, the side is q's own; a lower side with no lattice threshold below q's is
beyond the data range (the registered ``stability.edge`` rule decides), and ``side_reason`` says
why a side was moved or not tested. Under G5's ``tolerance_rule: se``
(continuous data and lattices) ``se_minus``/``se_plus`` give the s.e. of each side's difference
from ξ̂(q), a parametric bootstrap of q's fit
(:func:`tailgate.stats.stability.bootstrap_difference_se`, stream ("g5", scorer, scale,
condition, threshold, side); "inf" for q's own threshold, "nan" for a side not tested).
On the logit scale the lattice is that of the probability scores (their step, registered or
detected there), and every exceedance keeps its own cell, the image of the cell of its grade
under the logit with the registered clipping (:class:`tailgate.stats.lattice.Cells`). A
registered ``protocol.thresholds.ceiling`` (the capped end of the bad tail, turned round with
the scores) makes the ceiling's cell right-censored in every fit, G4 and G5 side, recorded as
``lattice.censored_ceiling``; a score beyond it is refused (exit 2).

Every bootstrap draws from ``tailgate.seeds`` streams keyed by (stage, scorer, scale, condition,
threshold), so the file is byte-identical for identical seeds, whatever the number of cores.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from tailgate.data.diagnostics import bounded_support_diagnostics, qq_data
from tailgate.errors import InputError
from tailgate.files.atomic import write_json
from tailgate.prereg.study import Study, worse_of
from tailgate.protocol.documents import qkey
from tailgate.protocol.registered import ceiling, registered_settings
from tailgate.seeds import seed_sequence
from tailgate.stats import gof, gpd, inference, lattice
from tailgate.stats.risk import exceedances, lattice_step_of, tie_diagnostic, tvar
from tailgate.stats.stability import (
    StabilityScan,
    bootstrap_difference_se,
    lattice_side,
    lattice_side_se,
    stability_scan,
)
from tailgate.stats.stored import finite_or_none

from .common import open_stage, read_json, read_severities
from .common import scan_quantiles as _scan_quantiles

__all__ = [
    "fit_condition",
    "fit_stage",
    "fit_threshold",
    "lattice_step",
    "scan_sides",
    "side_count",
    "side_xi",
]

QQ_POINTS = 200


def side_xi(
    x: np.ndarray,
    q: float,
    min_exceedances: int,
    ties: str = "strict",
    step: lattice.Lattice | None = None,
) -> float | None:
    """ξ̂ at quantile ``q`` for G5: None if q ∉ (0, 1) (beyond the data range), NaN if the side
    is not testable — fewer than ``min_exceedances`` exceedances or no interior maximum
    (Section 6.3 of Zhou (2026); a side without data fails G5, it is never dropped)."""
    if not 0.0 < q < 1.0:
        return None
    ex = exceedances(x, q, ties, step)
    if ex.n_exc < min_exceedances:
        return math.nan
    f = gpd.fit(ex.y, ex.step)
    return f.xi if f.status == "ok" else math.nan


def side_count(
    x: np.ndarray, q: float, ties: str = "strict", step: lattice.Lattice | None = None
) -> int | None:
    """Exceedances at quantile ``q`` (None beyond the data range)."""
    return exceedances(x, q, ties, step).n_exc if 0.0 < q < 1.0 else None


def lattice_step(
    study: Study,
    x: np.ndarray,
    where: str = "the scores",
    scale: str = "identity",
    worse: str | None = "higher",
) -> lattice.Lattice | None:
    """The lattice of the rule ``lattice``: ``protocol.thresholds.lattice_step`` when
    registered, else detected in ``x``; on the ``logit`` scale the :class:`lattice.Cells` of the
    probability scores' lattice under the registered clipping ε; with a registered
    ``protocol.thresholds.ceiling`` (turned round for a scorer whose bad tail is ``worse``), the
    :class:`lattice.Cells` whose ceiling cell is right-censored; None under any other rule.
    InputError (exit 2) when the rule is registered but the scores are not on a lattice, ε
    is not below half its step (the clipped ends would share one value), or a score lies beyond
    the ceiling or the ceiling off the lattice."""
    if study.thresholds.ties != "lattice":
        return None
    reg = study.thresholds.lattice_step
    top = ceiling(study, scale, worse)
    cells = None
    if scale == "logit":
        cells = lattice.Cells(1.0, study.epsilon)
        x = cells.own(x)
    try:
        step = lattice_step_of(x, reg)
    except ValueError as exc:
        raise InputError(f"{where}: protocol.thresholds.ties is lattice, but {exc}") from None
    problem = None if top is None else lattice.ceiling_problem(x, float(step), top)
    if problem:
        raise InputError(
            f"{where}: {problem} (the capped end of the bad tail, {top:g} on this scale). "
            "Fix: register the scale's true cap as protocol.thresholds.ceiling, or remove it."
        )
    if cells is None:
        return step if top is None else lattice.Cells(float(step), None, ceiling=top)
    if not cells.epsilon < 0.5 * step:
        raise InputError(
            f"{where}: transform.epsilon {cells.epsilon:g} is not below half the lattice step "
            f"{step:g}, so the logit clips two grades to one value. Fix: register a smaller "
            "transform.epsilon (e.g. 1.0e-6)."
        )
    return lattice.Cells(float(step), cells.epsilon, ceiling=top)


def _pair(lo: float, hi: float) -> list[float | None] | None:
    return (
        [finite_or_none(lo), finite_or_none(hi)] if math.isfinite(lo) or math.isfinite(hi) else None
    )


def _side_json(v: float | None) -> float | str | None:
    return None if v is None else ("nan" if not math.isfinite(v) else float(v))


def scan_sides(scan: StabilityScan, grid: Sequence[float]) -> dict[float, float | None]:
    """:func:`side_xi` at every quantile of the scan's ``grid``, read from the scan's fits.

    The scan fits the same exceedances with the same minimum count, so its ξ̂ at q is
    ``side_xi(x, q, min_exceedances)``: a grid point the scan skipped had too few exceedances
    and a point without an interior maximum is NaN (both not testable).
    """
    fitted = {pt.q: pt for pt in scan.points}
    out: dict[float, float | None] = {}
    for q in grid:
        pt = fitted.get(q)
        out[q] = math.nan if pt is None or pt.status != "ok" else pt.xi
    return out


def fit_threshold(
    x: np.ndarray,
    q: float,
    *,
    study: Study,
    keys: tuple[str, ...],
    probability: bool,
    sides: Mapping[float, float | None] | None = None,
    workers: int = 1,
    step: lattice.Lattice | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ThresholdFit record at ``q`` and its QQ data (None when there is no fit).

    ``sides`` holds already known :func:`side_xi` values (:func:`scan_sides`); G5's ξ̂ at
    q ± δ is fitted only where it has none. ``workers`` threads run the bootstrap (the result
    does not depend on it). ``step``: the lattice step under the rule ``lattice`` (detected or
    registered, :func:`lattice_step`, when None).
    """
    level = study.bootstrap.level
    settings = registered_settings(study)
    gate_level = settings.ci_level
    ties = study.thresholds.ties
    if ties == "lattice" and step is None:
        step = lattice_step(study, x)
    ex = exceedances(x, q, ties, step if ties == "lattice" else None)
    h = ex.step  # the lattice of the exceedances' cells (None off the lattice rule)
    f = gpd.fit(ex.y, h)
    ci = ci_gate = (math.nan, math.nan)
    n_boundary = n_failed = 0
    if f.status in ("ok", "boundary"):
        boot = gpd.bootstrap(
            ex.y,
            study.bootstrap.resamples,
            seed_sequence(study.seed, "fit", *keys, qkey(q)),
            full_fit=f,
            workers=workers,
            step=h,
        )
        ci, ci_gate = boot.ci(level), boot.ci(gate_level)
        n_boundary, n_failed = boot.n_boundary, boot.n_failed
    gof_seed = seed_sequence(study.seed, "gof", *keys, qkey(q))
    if h is None:
        ad = gof.anderson_darling(ex.y, f, seed=gof_seed)
    else:
        ad = gof.anderson_darling_lattice(ex.y, h, f, n_boot=gof.LATTICE_RESAMPLES, seed=gof_seed)
    delta, smin = study.stability.delta, study.stability.min_exceedances
    known = sides or {}
    q_minus, q_plus = round(q - delta, 10), round(q + delta, 10)
    side_reason = None
    if h is None:
        xi_minus = known[q_minus] if q_minus in known else side_xi(x, q_minus, smin, ties)
        xi_plus = known[q_plus] if q_plus in known else side_xi(x, q_plus, smin, ties)
        n_minus, n_plus = side_count(x, q_minus, ties), side_count(x, q_plus, ties)
    else:
        xi_minus, n_minus, why_minus = lattice_side(x, q_minus, ex.u, h, smin, -1)
        xi_plus, n_plus, why_plus = lattice_side(x, q_plus, ex.u, h, smin, +1)
        side_reason = {"minus": why_minus, "plus": why_plus}
    se_sides = None
    if settings.stability_rule == "se":  # G5's tolerance: a parametric bootstrap of q's fit
        se_sides = {}
        for name, qs, d, xs, ns in (
            ("se_minus", q_minus, -1, xi_minus, n_minus),
            ("se_plus", q_plus, 1, xi_plus, n_plus),
        ):
            seed = seed_sequence(study.seed, "g5", *keys, qkey(q), name)
            v = math.nan
            if xs is not None and math.isfinite(xs):
                v = (
                    bootstrap_difference_se(f.xi, f.sigma, ex.n_exc, ns, seed)
                    if h is None
                    else lattice_side_se(x, qs, ex.u, h, d, f, ex.n_exc, ns, seed)
                )
            se_sides[name] = v if math.isfinite(v) else str(v)
    oi = inference.observed_information(ex.y, f, step=h)
    prof = inference.profile_ci(ex.y, level, f, step=h)
    prof_gate = inference.profile_ci(ex.y, gate_level, f, step=h)
    grid = inference.profile_grid(ex.y, f, step=h)
    share = None
    if probability:
        share = bounded_support_diagnostics(x, q, threshold=ex.u).to_dict()["share_above"]
    mean_excess = float(ex.y.mean()) if ex.n_exc else math.nan
    fit: dict[str, Any] = {
        "q": float(q),
        "u": float(ex.u),
        "n": int(ex.n),
        "n_exc": int(ex.n_exc),
        "xi": finite_or_none(f.xi),
        "sigma": finite_or_none(f.sigma),
        "xi_ci": [finite_or_none(ci[0]), finite_or_none(ci[1])] if math.isfinite(ci[0]) else None,
        "xi_ci_gate": [finite_or_none(ci_gate[0]), finite_or_none(ci_gate[1])]
        if math.isfinite(ci_gate[0])
        else None,
        "ci_level": level,
        "gate_ci_level": gate_level,
        "ad_stat": finite_or_none(ad.statistic) if not math.isinf(ad.statistic) else None,
        "ad_p": finite_or_none(ad.pvalue),
        "ad_method": ad.method,
        "status": f.status,
        "boundary_share": share,
        "xi_minus": _side_json(xi_minus),
        "xi_plus": _side_json(xi_plus),
        "n_minus": n_minus,
        "n_plus": n_plus,
        "xi_se": finite_or_none(oi.se_xi),
        "sigma_se": finite_or_none(oi.se_sigma),
        "xi_profile_ci": _pair(prof.low, prof.high),
        "xi_profile_ci_gate": _pair(prof_gate.low, prof_gate.high),
        "profile": None if grid is None else grid.to_dict(),
        "ties": tie_diagnostic(x, q, ties, step if ties == "lattice" else None).to_dict(),
        "n_boundary": int(n_boundary),
        "n_failed": int(n_failed),
        "mean_excess": finite_or_none(mean_excess),
        "tvar_q": finite_or_none(ex.u + mean_excess),
    }
    if h is not None:
        fit["side_reason"] = side_reason
        fit["n_levels"] = int(np.unique(ex.y).size)
    if se_sides is not None:
        fit.update(se_sides)
    qq = None
    if f.status in ("ok", "boundary") and f.sigma > 0:
        qq = qq_data(x, q, f.xi, f.sigma, threshold=ex.u, max_points=QQ_POINTS).to_dict()
    return fit, qq


def threshold_diagnostics(
    x: np.ndarray, scan: StabilityScan, ties: str, step: lattice.Lattice | None = None
) -> dict[str, list]:
    """Mean-residual-life and modified-scale data at the scan's thresholds (Coles 2001 §4.3).

    ``u``; ``mean_excess`` e(u) = mean(x − u | x > u) with its normal-theory s.e. (sd/√n_exc),
    linear in u above a threshold where the GPD holds; ``modified_scale`` σ* = σ̂(u) − ξ̂(u)·u,
    constant in u above such a threshold (beside the ξ̂(u) scan of Fig. 3 of Zhou (2026)).
    """
    u, me, me_se, mod = [], [], [], []
    for pt in scan.points:
        ex = exceedances(x, pt.q, ties, step)
        u.append(finite_or_none(ex.u))
        me.append(finite_or_none(float(ex.y.mean())))
        me_se.append(finite_or_none(float(ex.y.std(ddof=1) / math.sqrt(ex.n_exc))))
        ok = pt.status == "ok"
        mod.append(finite_or_none(pt.sigma - pt.xi * ex.u) if ok else None)
    return {"u": u, "mean_excess": me, "mean_excess_se": me_se, "modified_scale": mod}


def fit_condition(
    x: np.ndarray,
    *,
    study: Study,
    scorer: str,
    scale: str,
    condition: str,
    transform: dict[str, Any] | None = None,
    progress: bool = True,
    workers: int = 1,
) -> dict[str, Any]:
    """Every fit of one condition on one scale (the ``fits/…json`` document; module docstring).

    ``workers`` threads run each threshold's bootstrap; the document does not depend on it.
    """
    st = study.stability
    keys = (scorer, scale, condition)
    x = np.asarray(x, dtype=np.float64)
    where = f"condition {condition!r} on scale {scale!r}"
    step = lattice_step(study, x, where, scale, worse_of(study.scorer(scorer)))
    level = study.bootstrap.level
    grid = _scan_quantiles(study)
    # the scan's display bootstraps (intervals: bootstrap) are about half of a fit job's time
    # on large samples; Wald intervals cost one information matrix per threshold
    scanned = tqdm(grid, desc=f"scan {scorer}/{scale}/{condition}", disable=not progress)
    scan = stability_scan(
        x,
        scanned,
        min_exceedances=st.min_exceedances,
        n_boot=st.resamples,
        level=level,
        seed=seed_sequence(study.seed, "scan", *keys),
        workers=workers,
        ties=study.thresholds.ties,
        step=step,
        intervals=st.intervals,
    )
    sides = scan_sides(scan, grid)
    thresholds = []
    qq: dict[str, Any] = {}
    bar = tqdm(
        study.thresholds.band, desc=f"fit {scorer}/{scale}/{condition}", disable=not progress
    )
    for q in bar:
        fit, qq_rec = fit_threshold(
            x,
            q,
            study=study,
            keys=keys,
            probability=scale == "probability",
            sides=sides,
            workers=workers,
            step=step,
        )
        thresholds.append(fit)
        if qq_rec is not None:
            qq[qkey(q)] = qq_rec
    tv_level = study.rules.tvar_level
    doc: dict[str, Any] = {
        "scorer": scorer,
        "scale": scale,
        "condition": condition,
        "pilot": bool(study.condition(condition).get("pilot", False)),
        "n": int(x.size),
        "mean": float(x.mean()),
        "tvar": float(tvar(x, tv_level)),
        "tvar_level": tv_level,
        "bootstrap": {
            "resamples": study.bootstrap.resamples,
            "level": level,
            "gate_level": registered_settings(study).ci_level,
            "scan_resamples": st.resamples,
        },
        "thresholds": thresholds,
        "stability": {
            "q": [pt.q for pt in scan.points],
            "xi": [finite_or_none(pt.xi) if pt.status == "ok" else None for pt in scan.points],
            "ci_low": [finite_or_none(pt.ci_low) for pt in scan.points],
            "ci_high": [finite_or_none(pt.ci_high) for pt in scan.points],
            "n_exc": [int(pt.n_exc) for pt in scan.points],
            "intervals": st.intervals,
            "median": finite_or_none(scan.median),
            "std": finite_or_none(scan.std),
            **threshold_diagnostics(x, scan, study.thresholds.ties, step),
        },
        "qq": qq,
        "transform": transform,
    }
    if step is not None:
        doc["lattice"] = lattice.to_dict(step, detected=study.thresholds.lattice_step is None)
    return doc


def fit_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    scale: str,
    condition: str,
    severities: str | os.PathLike[str],
    transform_summary: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int = 1,
    plan: str = "head",
) -> dict[str, Any]:
    """Fit ``condition`` and write/record ``fits/<scorer>/<scale>/<condition>.json``.

    ``workers``: threads for the bootstraps (the rule's ``threads``); the file does not depend
    on it.
    """
    ctx = open_stage(prereg, results, plan)
    _, x = read_severities(severities)
    summary = read_json(transform_summary, "transform summary")
    doc = fit_condition(
        x,
        study=ctx.study,
        scorer=scorer,
        scale=scale,
        condition=condition,
        transform=summary.get("conditions", {}).get(condition),
        workers=workers,
    )
    write_json(out, doc)
    ctx.record(out, inputs=[severities, transform_summary])
    return doc
