"""The check of the documents the report reads (:mod:`tailgate.protocol.documents`) before
anything is drawn: a malformed artifact fails with a message naming the file and field."""

from __future__ import annotations

from typing import Any

from tailgate.errors import InputError
from tailgate.plans.layout import Layout
from tailgate.protocol.documents import (
    Amendment,
    ConditionFits,
    Deviation,
    GatesFile,
    H1Verdict,
    Headline,
    PairAtThreshold,
    PairResult,
    PowerGrid,
    SensitivityFile,
    SensitivityRow,
    StabilityScan,
    ThresholdFit,
    Verdict,
)

__all__ = ["ReportInputError", "check_report_inputs"]


class ReportInputError(InputError, ValueError):
    """A report input (fits, gates, power or verdict JSON) lacks a field or has a wrong type."""


def _check(obj: Any, spec: type, where: str) -> None:
    if not isinstance(obj, dict):
        raise ReportInputError(
            f"{where} must be a JSON object ({spec.__name__}), got {type(obj).__name__}. Fix: "
            f"regenerate it with the stage that writes {spec.__name__}."
        )
    missing = sorted(set(spec.__required_keys__) - set(obj))
    if missing:
        raise ReportInputError(
            f"{where} ({spec.__name__}) lacks field(s) {', '.join(missing)}. Fix: regenerate it "
            f"with the current version of the stage that writes it."
        )


def check_report_inputs(verdict: Any, fits: Any, power: Any) -> None:
    """Check the required fields of every structure the report reads (no type coercion)."""
    _check(verdict, Verdict, "verdict.json")
    if verdict["h1"] is not None or verdict["headline"] is not None:  # the protocol's verdict
        _check(verdict["headline"], Headline, "verdict.json: headline")
        _check(verdict["h1"], H1Verdict, "verdict.json: h1")
    for i, gates in enumerate(verdict["gates"]):
        _check(gates, GatesFile, f"verdict.json: gates[{i}]")
        for j, pair in enumerate(gates["pairs"]):
            _check(pair, PairResult, f"gates[{i}].pairs[{j}]")
            for k, at in enumerate(pair["thresholds"]):
                _check(at, PairAtThreshold, f"gates[{i}].pairs[{j}].thresholds[{k}]")
    for i, sens in enumerate(verdict["sensitivity"]):
        _check(sens, SensitivityFile, f"verdict.json: sensitivity[{i}]")
        for j, row in enumerate(sens["rows"]):
            _check(row, SensitivityRow, f"sensitivity[{i}].rows[{j}]")
    for key, spec in (("amendments", Amendment), ("deviations", Deviation)):
        for i, item in enumerate(verdict[key]):
            _check(item, spec, f"verdict.json: {key}[{i}]")
    if not isinstance(fits, dict):
        raise ReportInputError("fits must map scorer → scale → condition → ConditionFits.")
    for scorer, scales in fits.items():
        for scale, conditions in scales.items():
            for condition, record in conditions.items():
                where = Layout("").fits(scorer, scale, condition).as_posix()
                _check(record, ConditionFits, where)
                _check(record["stability"], StabilityScan, f"{where}: stability")
                for k, fit in enumerate(record["thresholds"]):
                    _check(fit, ThresholdFit, f"{where}: thresholds[{k}]")
    if power is None:  # no protocol: no synthetic-recovery grid
        return
    _check(power, PowerGrid, "power.json")
    rates = power["pass_rate"]
    if len(rates) != len(power["delta_xi"]) or any(len(r) != len(power["n_exc"]) for r in rates):
        raise ReportInputError(
            "power.json: pass_rate must have one row per delta_xi and one column per n_exc. "
            "Fix: regenerate power.json."
        )
