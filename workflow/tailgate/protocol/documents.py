"""The JSON documents the fit, gates, sensitivity, power and verdict stages write, and the
report, the verdict and the audit read (:func:`tailgate.report.model.check_report_inputs`
checks them before anything is drawn).

* ``fits/<scorer>/<scale>/<condition>.json`` — one :class:`ConditionFits` per file; the report
  takes them as a :data:`FitsIndex` (scorer → scale → condition → ConditionFits).
* ``gates/<scorer>/<scale>.json`` — one :class:`GatesFile` (pairwise G1–G5, P1, P2 at every band
  threshold, H1 verdict; Section 3 of Zhou (2026)).
* ``sensitivity/<scorer>/<scale>.json`` — one :class:`SensitivityFile` (Table 5 of Zhou (2026)).
* ``power.json`` — one :class:`PowerGrid` (App. E and Eq. 2 of Zhou (2026)).
* ``verdict.json`` — one :class:`Verdict`: the study's answer, headline, H1, the gates and
  sensitivity files, the amendment chain and the deviations from the registered plan (headline
  and H1 null, no gates, sensitivity, fits or ``power.json`` when the study registers no
  protocol).

Floats that are undefined (a failed fit) are ``null``; quantile levels are floats (0.95), and
where they key a JSON object they are written with ``format(q, "g")`` ("0.95").
"""

from __future__ import annotations

import math
from typing import Any, Literal, TypedDict

__all__ = [
    "GATE_ORDER",
    "Amendment",
    "ConditionFits",
    "Deviation",
    "FieldChange",
    "FitsIndex",
    "GateOutcome",
    "GatesFile",
    "H1Verdict",
    "Headline",
    "PairAtThreshold",
    "PairResult",
    "PowerFrontierPoint",
    "PowerGrid",
    "QQRecord",
    "RegisteredPlanVerdict",
    "SensitivityFile",
    "SensitivityRow",
    "StabilityScan",
    "ThresholdFit",
    "Verdict",
    "fit_at",
    "qkey",
]

#: Gates in the order the protocol evaluates them (Fig. 1 of Zhou (2026)); the first one that
#: fails is a pair's "first failing gate".
GATE_ORDER = ("G1", "G2", "G3", "G4", "G5", "P1", "P2")


def qkey(q: float) -> str:
    """The JSON object key of quantile level ``q`` (``0.95`` → ``"0.95"``).

    Parameters
    ----------
    q : float
        The quantile level.

    Returns
    -------
    str
        ``format(float(q), "g")``.
    """
    return format(float(q), "g")


class ThresholdFit(TypedDict):
    """The POT-GPD fit of one condition at one threshold (Tables 2–4 of Zhou (2026)).

    ``status``: ``"ok"``, ``"too_few_exceedances"``, ``"boundary"`` (MLE on the ξ = -1 edge),
    ``"failed"``. ``boundary_share`` (probability scale only, else null) maps ``"0.9"`` and
    ``"0.95"`` to the share of exceedances above that score (Section 6.2).
    """

    q: float
    u: float
    n: int
    n_exc: int
    xi: float | None
    sigma: float | None
    xi_ci: list[float] | None
    ad_stat: float | None
    ad_p: float | None
    status: str
    boundary_share: dict[str, float | None] | None


class _StabilityScanRequired(TypedDict):
    q: list[float]
    xi: list[float | None]
    ci_low: list[float | None]
    ci_high: list[float | None]
    n_exc: list[int]
    median: float | None
    std: float | None


class StabilityScan(_StabilityScanRequired, total=False):
    """ξ̂(u) over a threshold scan (Fig. 3 of Zhou (2026)); ``median``/``std`` over the scan;
    ``intervals``: how ``ci_low``/``ci_high`` were made (``bootstrap`` or ``wald``; absent in
    documents written before the choice was registered)."""

    intervals: str


class QQRecord(TypedDict):
    """QQ data as written by :meth:`tailgate.data.diagnostics.QQData.to_dict`."""

    q: float
    threshold: float
    n_exc: int
    xi: float
    sigma: float
    probabilities: list[float]
    empirical: list[float]
    model: list[float]


class ConditionFits(TypedDict):
    """``fits/<scorer>/<scale>/<condition>.json``.

    ``mean`` and ``tvar`` (TVaR at ``tvar_level``, 0.9 in Zhou (2026)) are over all ``n``
    severities; ``qq`` maps qkey(q) → QQ data (may be empty); ``transform`` is the
    :class:`tailgate.data.transform.TransformSummary` dict (null when not recorded).
    """

    scorer: str
    scale: str
    condition: str
    n: int
    mean: float
    tvar: float
    tvar_level: float
    thresholds: list[ThresholdFit]
    stability: StabilityScan
    qq: dict[str, QQRecord]
    transform: dict[str, Any] | None


#: scorer → scale → condition → fits.
FitsIndex = dict[str, dict[str, dict[str, ConditionFits]]]


class _GateOutcomeRequired(TypedDict):
    passed: bool | None
    value: float | None
    detail: str


class GateOutcome(_GateOutcomeRequired, total=False):
    """One gate's outcome: ``passed`` (null when not evaluated), its statistic and a note
    (``detail``: criterion and observed values); ``criterion`` (the registered rule) and
    ``observed`` (what the statistic was computed from) split that note where recorded."""

    criterion: str
    observed: str


class PairAtThreshold(TypedDict):
    """A pair at one band threshold: every gate, the first failing one (null if none)."""

    q: float
    gates: dict[str, GateOutcome]
    first_failing: str | None
    passed: bool
    delta_xi: float | None
    delta_xi_ci: list[float] | None


class PairResult(TypedDict):
    """One pair of conditions over the band; ``verdict`` is PASS if it passes at any threshold
    with every gate (G5 included)."""

    a: str
    b: str
    thresholds: list[PairAtThreshold]
    verdict: Literal["PASS", "KILL"]


class H1Verdict(TypedDict):
    """The H1 verdict (Section 3 of Zhou (2026)): KILL unless a pair passes every gate."""

    verdict: Literal["PASS", "KILL"]
    passing_pairs: list[str]
    reason: str


class GatesFile(TypedDict):
    """``gates/<scorer>/<scale>.json``: the pairwise matrix over the robustness band."""

    scorer: str
    scale: str
    headline_q: float
    band: list[float]
    floor: float
    pairs: list[PairResult]
    h1: H1Verdict


class SensitivityRow(TypedDict):
    """One tolerance setting of the sensitivity sweep (Table 5 of Zhou (2026))."""

    label: str
    delta_mu: float
    delta_tvar: float
    q: float
    n_pairs: int
    admissible_pairs: list[str]
    passing_pairs: list[str]


class SensitivityFile(TypedDict):
    """``sensitivity/<scorer>/<scale>.json``."""

    scorer: str
    scale: str
    rows: list[SensitivityRow]


class PowerFrontierPoint(TypedDict):
    """Eq. 2 of Zhou (2026): the n_exc for the z-test's registered power at this Δξ."""

    delta_xi: float
    n_exc_star: float


class PowerGrid(TypedDict):
    """``power.json``: empirical P1∧P2 PASS rate per (Δξ, n_exc) cell (App. E of Zhou (2026)).

    ``pass_rate[i][j]`` is the rate at ``delta_xi[i]`` and ``n_exc[j]``; ``design_n_exc`` is the
    registered design's exceedance count (null if none).
    """

    delta_xi: list[float]
    n_exc: list[int]
    pass_rate: list[list[float]]
    trials: int
    #: bootstrap resamples per fit of P1's percentile interval (null: ``p1_interval`` says how)
    bootstrap: int | None
    #: how P1 was computed (method, stand-in or resamples)
    p1_interval: str
    alpha: float
    power: float
    xi_bar: float
    floor: float
    frontier: list[PowerFrontierPoint]
    design_n_exc: int | None


class FieldChange(TypedDict):
    """One field of an amendment's diff (dotted path, old and new values)."""

    path: str
    old: Any
    new: Any


class Amendment(TypedDict):
    """One entry of the hash-chained amendment log.

    ``classes`` name what the change touches: ``decision_rule`` (tolerances, floor, gates,
    thresholds, scale…), ``data`` (conditions, prompts, scorers), ``presentation``.
    """

    seq: int
    time: str
    reason: str
    classes: list[str]
    fields: list[FieldChange]
    data_existed: bool
    entry_hash: str


class Deviation(TypedDict):
    """A departure from the registered plan (e.g. results after a decision-rule amendment)."""

    what: str
    amendment: int | None


class Headline(TypedDict):
    """The registered headline analysis."""

    scorer: str
    scale: str
    q: float


class RegisteredPlanVerdict(TypedDict):
    """The H1 verdict of one scorer and scale under the registered plan (entry 0 of the lock)
    after an amendment (:mod:`tailgate.stages.registered_plan`): re-derived from the stored
    statistics, or computed by the registered-plan branch where the amendment changed them.

    ``h1`` is null only where that plan has no such analysis, or its pinned input file is no
    longer there (``reason`` says which); ``headline`` marks the registered plan's headline
    scorer and scale; ``gates`` is the pairwise matrix under that plan (null with ``h1``).
    """

    scorer: str
    scale: str
    headline: bool
    h1: Literal["PASS", "KILL"] | None
    passing_pairs: list[str]
    reason: str
    gates: GatesFile | None


class Verdict(TypedDict):
    """``verdict.json``: the study's outcome as the report presents it."""

    study: str
    prereg_hash: str
    headline: Headline | None  # None: the study registers no protocol
    h1: H1Verdict | None
    gates: list[GatesFile]
    sensitivity: list[SensitivityFile]
    amendments: list[Amendment]
    deviations: list[Deviation]


def fit_at(record: ConditionFits, q: float) -> ThresholdFit | None:
    """The fit of ``record`` at quantile level ``q`` (None if that threshold was not fitted).

    Parameters
    ----------
    record : ConditionFits
        One condition's fits document.
    q : float
        The quantile level, matched to within 1e-9.

    Returns
    -------
    ThresholdFit or None
        The first entry of ``record["thresholds"]`` at ``q``, or None.
    """
    for fit in record["thresholds"]:
        if math.isclose(fit["q"], q, abs_tol=1e-9):
            return fit
    return None
