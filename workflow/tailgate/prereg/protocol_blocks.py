"""Typed readers of the protocol's blocks (Section 3 of Zhou (2026)), one per block.

Each reader is a frozen dataclass whose fields are the block's, with their types;
:meth:`ProtocolBlock.of` reads it from the canonical ``protocol`` block (defaults applied),
converting each field to its declared type, so that a field added to a block is one line here.
A stage reads ``study.bootstrap.resamples`` instead of
``int(study.protocol["bootstrap"]["resamples"])``. Optional fields without a schema default are
``None`` when absent: the rule an absent field stands for is documented, and applied, where the
field is used (e.g. :mod:`tailgate.protocol.registered` for G5's edge and tolerance rules). The
G1/G2 tolerances have their own reader, :func:`tailgate.protocol.registered.tolerances_for`
(by scorer and scale).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, ClassVar, Generic, Self, TypeVar

__all__ = [
    "Bootstrap",
    "Gof",
    "OperatingCharacteristics",
    "PowerSimulation",
    "ProtocolBlock",
    "Reader",
    "Scan",
    "Sensitivity",
    "Stability",
    "Thresholds",
    "read_block",
]

_B = TypeVar("_B")
_P = TypeVar("_P", bound="ProtocolBlock")


class ProtocolBlock:
    """A block of the protocol, read by :meth:`of` from the block under ``key``."""

    key: ClassVar[str]

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Self:
        """The block as registered in the canonical ``protocol`` (an absent block: every
        optional field None)."""
        return read_block(cls, protocol.get(cls.key) or {})


class Reader(Generic[_P]):
    """A study's attribute that reads one block of its protocol (``study.bootstrap``)."""

    def __init__(self, block: type[_P]) -> None:
        self.block = block

    @typing.overload
    def __get__(self, study: None, owner: type) -> Reader[_P]: ...
    @typing.overload
    def __get__(self, study: object, owner: type | None = None) -> _P: ...
    def __get__(self, study: Any, owner: type | None = None) -> Any:
        return self if study is None else self.block.of(study.protocol)


def read_block(cls: type[_B], block: Mapping[str, Any]) -> _B:
    """The dataclass ``cls`` from the registered ``block``, each field converted to its declared
    type: ``int``, ``float``, ``str``, a tuple of them, a nested block; ``X | None`` is None when
    the optional field is absent."""
    hints = _hints(cls)
    return cls(**{f.name: _convert(hints[f.name], block.get(f.name)) for f in fields(cls)})


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(kind: Any, value: Any) -> Any:
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) in (types.UnionType, typing.Union):  # X | None
        return None if value is None else _convert(args[0], value)
    if typing.get_origin(kind) is tuple:
        return tuple(_convert(args[0], v) for v in value)
    if is_dataclass(kind):
        return read_block(kind, value)
    return kind(value)


@dataclass(frozen=True)
class Bootstrap(ProtocolBlock):
    """``protocol.bootstrap``: the percentile bootstrap of ξ's CIs (P1) and of the bulk
    replicates of mean and TVaR (G1, G2): ``resamples`` (B), the CI ``level`` and the
    ``resampling`` scheme (``independent``, or ``paired``: the same prompts in both conditions)."""

    key: ClassVar[str] = "bootstrap"
    resamples: int
    level: float
    resampling: str

    @property
    def paired(self) -> bool:
        return self.resampling == "paired"


@dataclass(frozen=True)
class Scan:
    """``protocol.stability.scan``: the quantiles of the ξ̂(u) stability scan (Fig. 3 of
    Zhou (2026))."""

    start: float
    stop: float
    step: float


@dataclass(frozen=True)
class Stability(ProtocolBlock):
    """``protocol.stability``: gate G5, |ξ̂(q ± delta) − ξ̂(q)| < tolerance, and its scan."""

    key: ClassVar[str] = "stability"
    delta: float
    tolerance: float
    scan: Scan
    min_exceedances: int
    resamples: int
    intervals: str | None
    edge: str | None
    tolerance_rule: str | None
    se_multiplier: float | None


@dataclass(frozen=True)
class Thresholds(ProtocolBlock):
    """``protocol.thresholds``: the headline quantile, the robustness band and the rules for
    tied and lattice scores."""

    key: ClassVar[str] = "thresholds"
    headline: float
    band: tuple[float, ...]
    ties: str | None
    lattice_step: float | None
    ceiling: float | None
    min_levels: int | None


@dataclass(frozen=True)
class Gof(ProtocolBlock):
    """``protocol.gof``: gate G4, the Anderson–Darling GPD test, passes when p > ``alpha``."""

    key: ClassVar[str] = "gof"
    alpha: float


@dataclass(frozen=True)
class Sensitivity(ProtocolBlock):
    """``protocol.sensitivity``: the tolerance multipliers of App. B of Zhou (2026)."""

    key: ClassVar[str] = "sensitivity"
    tolerance_multipliers: tuple[float, ...]


@dataclass(frozen=True)
class PowerSimulation(ProtocolBlock):
    """``protocol.power_simulation``: the App. E recovery grid of Zhou (2026), Δξ × n_exc
    cells of ``trials`` synthetic pairs (``resamples``: None, the observed-information
    stand-in)."""

    key: ClassVar[str] = "power_simulation"
    delta_xi: tuple[float, ...]
    n_exc: tuple[int, ...]
    trials: int
    resamples: int | None


@dataclass(frozen=True)
class OperatingCharacteristics(ProtocolBlock):
    """``protocol.operating_characteristics``: the simulation of the whole registered rule (no
    defaults: each field None when absent, the block too)."""

    key: ClassVar[str] = "operating_characteristics"
    trials: int | None
    resamples: int | None
    max_false_pass: float | None
