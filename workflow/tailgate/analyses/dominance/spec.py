"""The registration of a ``dominance`` analysis: its parameters with their defaults
(:func:`settings`, several falling back on the protocol's), their cross-field checks and the
criterion statistics each target stores (the list in :mod:`tailgate.analyses.dominance`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tailgate.prereg.answer import protocol_settings
from tailgate.prereg.protocol_blocks import Bootstrap
from tailgate.prereg.schema import did_you_mean
from tailgate.prereg.study import worse_of

from ..base import Problem, condition_problems, scorer_scales, unknown_args
from ..criteria import StatisticRef
from .calibration import DEFAULT_CALIBRATION
from .meanrisk import RISKS

__all__ = ["ORDERS", "PAIR_STATS", "check_spec", "check_statistic", "settings"]

ORDERS = {"fsd": 1, "ssd": 2}


#: pair statistic name → (order, key in the stored tests)
PAIR_STATS = {
    **{f"{stat}_{o}": (o, stat) for stat in ("eps", "delta", "r") for o in ORDERS},
    **{f"eps_{o}_ucb": (o, "eps_ucb") for o in ORDERS},
}


_RANK_STATS = ("rank_fsd", "rank_ssd", "rank_mean_risk", "rank_mwr")


_ONE_STATS = (*_RANK_STATS, "mwr", *(f"score_{r}" for r in RISKS))


def settings(spec: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter with the documented default applied for absent fields."""
    p = protocol_settings(data)
    scorers = {s["name"]: s for s in data["scorers"]}
    scale = {}
    for name in spec["scorers"]:
        have = scorer_scales(data, scorers[name]) if name in scorers else []
        want = spec.get("scale", p["headline_scale"])
        scale[name] = want if ("scale" in spec or want in have) else "identity"
    weights = spec.get("weights") or {s: 1.0 for s in spec["scorers"]}
    return {
        "conditions": list(spec["conditions"]),
        "scorers": list(spec["scorers"]),
        "scale": scale,
        # the severities are oriented by each scorer's `worse` (larger is worse) before any
        # analysis reads them, so every scorer is higher_is_worse here
        "orientation": {s: "higher_is_worse" for s in spec["scorers"]},
        "orders": sorted(int(o) for o in spec.get("orders", [1, 2])),
        "alpha": float(spec.get("alpha", p["alpha"])),
        "resamples": int(spec.get("resamples", 1000)),
        "resampling": str(spec.get("resampling", Bootstrap.of(p).resampling)),
        "eps0": [float(e) for e in spec.get("eps0", [])],
        "risk_level": float(spec.get("risk_level", 1.0 - float(p["tvar_level"]))),
        "weights": {s: float(weights.get(s, 0.0)) for s in spec["scorers"]},
        "aggregation": str(spec.get("aggregation", "borda")),
        "calibration": str(spec.get("calibration", DEFAULT_CALIBRATION)),
    }


def check_spec(spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
    """Problems of the registered parameters (``data``: the canonical study document)."""
    out = condition_problems(spec["conditions"], data)
    scorers = {s["name"]: s for s in data["scorers"]}
    for i, s in enumerate(spec["scorers"]):
        if s not in scorers:
            out.append(
                Problem(
                    ("scorers", i),
                    f"'{s}' is not a registered scorer",
                    f"use names from 'scorers' ({', '.join(scorers)})" + did_you_mean(s, scorers),
                )
            )
        elif "scale" in spec and spec["scale"] not in scorer_scales(data, scorers[s]):
            out.append(
                Problem(
                    ("scale",),
                    f"scorer '{s}' is not analysed on the {spec['scale']} scale",
                    f"use one of {', '.join(scorer_scales(data, scorers[s]))}",
                )
            )
    for key in ("orientation", "weights"):
        for s in spec.get(key) or {}:
            if s not in spec["scorers"]:
                out.append(
                    Problem(
                        (key, s),
                        f"'{s}' is not among this analysis's scorers",
                        "name only scorers listed in 'scorers'",
                    )
                )
    for s, o in (spec.get("orientation") or {}).items():
        if s not in scorers or s not in spec["scorers"]:
            continue
        worse = worse_of(scorers[s])
        said = "higher" if o == "higher_is_worse" else "lower"
        if worse is not None and said != worse:
            out.append(
                Problem(
                    ("orientation", s),
                    f"orientation {o} of scorer '{s}' contradicts the scorer's `worse: "
                    f"{worse}` (the direction of a scorer is declared once, on the scorer)",
                    f"remove the orientation entry and write `worse: {said}` on scorer '{s}'",
                )
            )
    if spec.get("weights") is not None:
        w = spec["weights"]
        if set(w) != set(spec["scorers"]) or not sum(w.values()) > 0:
            out.append(
                Problem(
                    ("weights",),
                    "portfolio weights must name every scorer and not all be 0",
                    "give a weight λ >= 0 for each scorer of the analysis",
                )
            )
    if spec.get("aggregation") == "kemeny" and len(spec["conditions"]) > 16:
        out.append(
            Problem(
                ("aggregation",),
                "exact Kemeny aggregation supports at most 16 conditions",
                "use borda or footrule",
            )
        )
    return out


def check_statistic(
    spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
) -> str | None:
    """Why a criterion's ``ref`` names no statistic this analysis stores (None if it does)."""
    scorers = list(spec["scorers"])
    targets = scorers + (["portfolio", "aggregate"] if len(scorers) > 1 else [])
    target = ref.target or (scorers[0] if len(scorers) == 1 else None)
    if target is None:
        return "needs a target: one of " + ", ".join(targets)
    if target not in targets:
        return f"names target '{target}', not one of {', '.join(targets)}"
    orders = [int(o) for o in spec.get("orders", [1, 2])]
    order = PAIR_STATS.get(ref.name, (None,))[0] or {
        "rank_fsd": "fsd",
        "rank_ssd": "ssd",
    }.get(ref.name)
    if order is not None and ORDERS[order] not in orders:
        return f"needs order {ORDERS[order]}, which 'orders' does not register"
    allowed_one = _RANK_STATS if target == "aggregate" else _ONE_STATS
    if ref.name in PAIR_STATS and target != "aggregate":
        need = 2
    elif ref.name in allowed_one:
        need = 1
    else:
        return "is not a statistic of this target"
    if len(ref.args) != need:
        return f"takes {need} condition(s), got {len(ref.args)}"
    why = unknown_args(ref.args, spec["conditions"])
    if why:
        return why
    if need == 2 and ref.args[0] == ref.args[1]:
        return "compares a condition with itself"
    return None
