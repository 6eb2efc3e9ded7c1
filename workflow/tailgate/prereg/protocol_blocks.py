"""Typed readers of the protocol's blocks (Section 3 of Zhou (2026)), one per block.

Each reader takes the canonical ``protocol`` block (defaults applied) and returns the block's
fields with their types; a stage reads ``study.bootstrap.resamples`` instead of
``int(study.protocol["bootstrap"]["resamples"])``. Optional fields without a schema default are
``None`` when absent: the rule an absent field stands for is documented, and applied, where the
field is used (e.g. :mod:`tailgate.protocol.registered` for G5's edge and tolerance rules). The
G1/G2 tolerances have their own reader, :func:`tailgate.protocol.registered.tolerances_for`
(by scorer and scale).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Bootstrap",
    "Gof",
    "OperatingCharacteristics",
    "PowerSimulation",
    "Scan",
    "Sensitivity",
    "Stability",
    "Thresholds",
]


def _opt(block: Mapping[str, Any], key: str, kind: type) -> Any:
    """``kind(block[key])``, or None when the optional field is absent."""
    value = block.get(key)
    return None if value is None else kind(value)


@dataclass(frozen=True)
class Bootstrap:
    """``protocol.bootstrap``: the percentile bootstrap of ξ's CIs (P1) and of the bulk
    replicates of mean and TVaR (G1, G2): ``resamples`` (B), the CI ``level`` and the
    ``resampling`` scheme (``independent``, or ``paired``: the same prompts in both conditions)."""

    resamples: int
    level: float
    resampling: str

    @property
    def paired(self) -> bool:
        return self.resampling == "paired"

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Bootstrap:
        b = protocol["bootstrap"]
        return cls(int(b["resamples"]), float(b["level"]), str(b["resampling"]))


@dataclass(frozen=True)
class Scan:
    """``protocol.stability.scan``: the quantiles of the ξ̂(u) stability scan (Fig. 3 of
    Zhou (2026))."""

    start: float
    stop: float
    step: float

    @classmethod
    def of(cls, scan: Mapping[str, Any]) -> Scan:
        return cls(float(scan["start"]), float(scan["stop"]), float(scan["step"]))


@dataclass(frozen=True)
class Stability:
    """``protocol.stability``: gate G5, |ξ̂(q ± delta) − ξ̂(q)| < tolerance, and its scan."""

    delta: float
    tolerance: float
    scan: Scan
    min_exceedances: int
    resamples: int
    edge: str | None
    tolerance_rule: str | None
    se_multiplier: float | None

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Stability:
        s = protocol["stability"]
        return cls(
            float(s["delta"]),
            float(s["tolerance"]),
            Scan.of(s["scan"]),
            int(s["min_exceedances"]),
            int(s["resamples"]),
            _opt(s, "edge", str),
            _opt(s, "tolerance_rule", str),
            _opt(s, "se_multiplier", float),
        )


@dataclass(frozen=True)
class Thresholds:
    """``protocol.thresholds``: the headline quantile, the robustness band and the rules for
    tied and lattice scores."""

    headline: float
    band: tuple[float, ...]
    ties: str | None
    lattice_step: float | None
    min_levels: int | None

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Thresholds:
        t = protocol["thresholds"]
        return cls(
            float(t["headline"]),
            tuple(float(q) for q in t["band"]),
            _opt(t, "ties", str),
            _opt(t, "lattice_step", float),
            _opt(t, "min_levels", int),
        )


@dataclass(frozen=True)
class Gof:
    """``protocol.gof``: gate G4, the Anderson–Darling GPD test, passes when p > ``alpha``."""

    alpha: float

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Gof:
        return cls(float(protocol["gof"]["alpha"]))


@dataclass(frozen=True)
class Sensitivity:
    """``protocol.sensitivity``: the tolerance multipliers of App. B of Zhou (2026)."""

    tolerance_multipliers: tuple[float, ...]

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Sensitivity:
        return cls(tuple(float(m) for m in protocol["sensitivity"]["tolerance_multipliers"]))


@dataclass(frozen=True)
class PowerSimulation:
    """``protocol.power_simulation``: the App. E recovery grid of Zhou (2026), Δξ × n_exc
    cells of ``trials`` synthetic pairs (``resamples``: None, the observed-information
    stand-in)."""

    delta_xi: tuple[float, ...]
    n_exc: tuple[int, ...]
    trials: int
    resamples: int | None

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> PowerSimulation:
        p = protocol["power_simulation"]
        return cls(
            tuple(float(d) for d in p["delta_xi"]),
            tuple(int(n) for n in p["n_exc"]),
            int(p["trials"]),
            _opt(p, "resamples", int),
        )


@dataclass(frozen=True)
class OperatingCharacteristics:
    """``protocol.operating_characteristics``: the simulation of the whole registered rule (no
    defaults: each field None when absent, the block too)."""

    trials: int | None
    resamples: int | None
    max_false_pass: float | None

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> OperatingCharacteristics:
        o = protocol.get("operating_characteristics") or {}
        return cls(
            _opt(o, "trials", int),
            _opt(o, "resamples", int),
            _opt(o, "max_false_pass", float),
        )
