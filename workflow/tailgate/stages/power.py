"""Power stage: the synthetic-recovery grid of App. E of Zhou (2026) for the registered design.

``power`` runs :func:`tailgate.protocol.recovery.recovery_grid` over the registered
``protocol.power_simulation`` grid (Δξ_true × n_exc, trials, and bootstrap resamples when
registered) with the registered Δfloor, ξ̄, P1 method and P1's level and α as the gates apply
them (1 − α/m under Bonferroni, recorded as ``level``/``alpha`` beside ``registered_alpha``;
without registered resamples the percentile interval is its validated stand-in,
:mod:`tailgate.protocol.simulated_p1`, recorded as ``p1_interval``), and writes ``power.json``
(:class:`tailgate.protocol.documents.PowerGrid`) with the Eq. 2 frontier and the design's
exceedances at the headline threshold; each cell carries its Monte Carlo standard error.

``operating`` writes ``operating.json``: the false-PASS rate and power of the whole registered
procedure (:func:`tailgate.protocol.design.operating_characteristics`), which the report shows
next to the verdict. It is a job of its own because it reads every decision rule (tolerances
included) while the App. E grid reads only P1∧P2's settings: a tolerance-only amendment re-runs
the former and not the latter (:mod:`tailgate.plans.fingerprint`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tailgate.files.atomic import write_json
from tailgate.prereg.study import Study
from tailgate.protocol.design import derived_design, operating_characteristics
from tailgate.protocol.recovery import recovery_grid
from tailgate.protocol.registered import registered_settings
from tailgate.seeds import seed_sequence

from .common import open_stage

__all__ = ["operating_document", "operating_stage", "power_document", "power_stage"]


def power_document(study: Study, *, workers: int = 1) -> dict[str, Any]:
    """The ``power.json`` document (App. E grid, Eq. 2 frontier, registered design point)."""
    rules, sim = study.rules, study.power_simulation
    design = derived_design(study)
    settings = registered_settings(study)
    grid = recovery_grid(
        list(sim.delta_xi),
        list(sim.n_exc),
        settings,
        trials=sim.trials,
        resamples=sim.resamples,
        seed=seed_sequence(study.seed, "power"),
        power=rules.power,
        xi_bar=rules.xi_bar,
        workers=workers,
    )
    rates = [[grid.rate(d, n) for n in grid.n_excs] for d in grid.delta_xis]
    return {
        "delta_xi": list(grid.delta_xis),
        "n_exc": list(grid.n_excs),
        "pass_rate": rates,
        "mc_se": [[c.mc_se for c in grid.cells if c.delta_xi == d] for d in grid.delta_xis],
        "trials": sim.trials,
        "bootstrap": grid.cells[0].resamples,
        "p1_interval": grid.cells[0].p1,
        "p1_method": settings.p1_method,
        "level": settings.ci_level,
        "alpha": settings.alpha_of("P1"),
        "registered_alpha": rules.alpha,
        "family_size": settings.n_pairs,
        "family": settings.family,
        "adjusted_gates": list(settings.adjusted_gates),
        "multiplicity": settings.multiplicity,
        "power": rules.power,
        "xi_bar": rules.xi_bar,
        "floor": rules.delta_floor,
        "frontier": [
            {"delta_xi": float(d), "n_exc_star": float(n)} for d, n in grid.frontier.items()
        ],
        "design_n_exc": int(design.n_exc_planned),
    }


def operating_document(study: Study, *, workers: int = 1) -> dict[str, Any]:
    """The ``operating.json`` document: the whole procedure's operating characteristics."""
    oc = operating_characteristics(study, derived_design(study), workers=workers)
    return {"operating_characteristics": oc.to_dict()}


def _document_stage(
    document: Callable[..., dict[str, Any]],
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    out: str | os.PathLike[str],
    workers: int,
) -> dict[str, Any]:
    ctx = open_stage(prereg, results)
    doc = document(ctx.study, workers=workers)
    write_json(out, doc)
    ctx.record(out)
    return doc


def power_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int = 1,
) -> dict[str, Any]:
    """Write and record ``power.json``."""
    return _document_stage(power_document, prereg, results, out, workers)


def operating_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int = 1,
) -> dict[str, Any]:
    """Write and record ``operating.json``."""
    return _document_stage(operating_document, prereg, results, out, workers)
