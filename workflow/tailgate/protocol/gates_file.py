"""Convert the protocol engine's verdict into the gates document (:class:`GatesFile`).

``tailgate.protocol.ProtocolVerdict.to_dict()`` lists one record per (pair, threshold) with the
gates as a list; the report groups them per pair over the band. Δξ̂ is ξ̂_A − ξ̂_B from the
per-condition fits, and its CI propagates the per-condition ξ CIs in quadrature (Fig. 4 of
Zhou (2026)); without fits it falls back to the P2 gate's |Δξ̂| and no CI.
"""

from __future__ import annotations

import math
from typing import Any

from .documents import (
    FitsIndex,
    GateOutcome,
    GatesFile,
    PairAtThreshold,
    PairResult,
    fit_at,
    qkey,
)

__all__ = ["gates_file_from_protocol"]


def _delta(
    records: dict[str, Any], a: str, b: str, q: float
) -> tuple[float | None, list[float] | None]:
    fa = fit_at(records[a], q) if a in records else None
    fb = fit_at(records[b], q) if b in records else None
    if not fa or not fb or fa["xi"] is None or fb["xi"] is None:
        return None, None
    delta = float(fa["xi"]) - float(fb["xi"])
    if not fa["xi_ci"] or not fb["xi_ci"] or None in fa["xi_ci"] or None in fb["xi_ci"]:
        return delta, None
    half = math.hypot(
        (fa["xi_ci"][1] - fa["xi_ci"][0]) / 2.0, (fb["xi_ci"][1] - fb["xi_ci"][0]) / 2.0
    )
    return delta, [delta - half, delta + half]


def gates_file_from_protocol(
    verdict: dict[str, Any],
    *,
    scorer: str,
    scale: str,
    fits: FitsIndex | None = None,
    reason: str = "",
) -> GatesFile:
    """A :class:`GatesFile` from ``ProtocolVerdict.to_dict()`` for ``scorer`` on ``scale``.

    Parameters
    ----------
    verdict : dict[str, Any]
        ``ProtocolVerdict.to_dict()`` of the analysis.
    scorer : str
        The scorer analysed.
    scale : str
        The scale analysed.
    fits : FitsIndex or None, default None
        The per-condition fits, for Δξ̂ and its CI (module docstring); None: P2's |Δξ̂|, no CI.
    reason : str, default ""
        The H1 reason to record (empty: the band rule and how many pairs pass every gate).

    Returns
    -------
    GatesFile
        Every pair with its thresholds in order of q and its verdict (PASS where
        ``verdict["passing_pairs"]`` lists it, else KILL), and the H1 verdict.

    References
    ----------
    Zhou (2026), Fig. 4.
    """
    records = (fits or {}).get(scorer, {}).get(scale, {})
    grouped: dict[tuple[str, str], list[PairAtThreshold]] = {}
    for rec in verdict["pairs"]:
        gates: dict[str, GateOutcome] = {
            g["gate"]: {
                "passed": bool(g["passed"]),
                "value": g["value"],
                "detail": f"{g.get('criterion', '')}; {g.get('detail', '')}".strip("; "),
                "criterion": str(g.get("criterion", "")),
                "observed": str(g.get("detail", "")),
            }
            for g in rec["gates"]
        }
        delta, ci = _delta(records, rec["a"], rec["b"], float(rec["q"]))
        if delta is None and "P2" in gates:
            delta = gates["P2"]["value"]
        grouped.setdefault((rec["a"], rec["b"]), []).append(
            {
                "q": float(rec["q"]),
                "gates": gates,
                "first_failing": rec["first_failing"],
                "passed": bool(rec["passed"]),
                "delta_xi": delta,
                "delta_xi_ci": ci,
            }
        )
    passing = {tuple(p) for p in verdict["passing_pairs"]}
    pairs: list[PairResult] = [
        {
            "a": a,
            "b": b,
            "thresholds": sorted(ats, key=lambda t: t["q"]),
            "verdict": "PASS" if (a, b) in passing else "KILL",
        }
        for (a, b), ats in grouped.items()
    ]
    settings = verdict["settings"]
    labels = [f"{a} vs {b}" for a, b in sorted(passing)]
    band = sorted({float(q) for q in verdict["thresholds"]}, key=lambda q: float(qkey(q)))
    # the G1/G2 tolerances came from the data (init): written only then, beside them in the report
    source = {"tolerances_source": "data"} if settings.get("tolerances_source") == "data" else {}
    return {
        **source,
        "scorer": scorer,
        "scale": scale,
        "headline_q": float(verdict["headline_q"]),
        "band": band,
        "floor": float(settings["delta_floor"]),
        "pairs": pairs,
        "h1": {
            "verdict": verdict["h1"],
            "passing_pairs": labels,
            "reason": reason
            or (
                f"band rule {verdict.get('band_rule', 'all')!r}: "
                + (f"{len(labels)} pair(s) pass every gate" if labels else "no pair passes")
            ),
        },
    }
