"""Typed readers of the protocol's blocks (Section 3 of Zhou (2026)), one per block.

Each reader is a frozen dataclass whose fields are the block's, with their types;
:meth:`ProtocolBlock.of` reads it from the canonical ``protocol`` block (defaults applied),
converting each field to its declared type, so that a field added to a block is one line here.
A stage reads ``study.bootstrap.resamples`` instead of
``int(study.protocol["bootstrap"]["resamples"])``. An optional field the schema gives no default
(so that it never enters the canonical hash) takes its reader's default when absent, written
here once (``None``: no rule registered); :class:`Rules` reads the protocol's own fields. The
G1/G2 tolerances of one scorer and scale are read by
:func:`tailgate.protocol.registered.tolerances_for`.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields, is_dataclass
from typing import Any, ClassVar, Generic, Self, TypeVar

__all__ = [
    "Bootstrap",
    "Gof",
    "OperatingCharacteristics",
    "PowerSimulation",
    "ProtocolBlock",
    "Reader",
    "Rules",
    "Scan",
    "Sensitivity",
    "Stability",
    "Thresholds",
    "Tolerances",
    "read_block",
]

_B = TypeVar("_B")
_P = TypeVar("_P", bound="ProtocolBlock")


class ProtocolBlock:
    """A block of the protocol, read by :meth:`of` from the block under ``key`` (``""``: the
    protocol's own fields)."""

    key: ClassVar[str]

    @classmethod
    def of(cls, protocol: Mapping[str, Any]) -> Self:
        """The block as registered in the canonical ``protocol`` (an absent block: every
        optional field at its default)."""
        return read_block(cls, protocol.get(cls.key) or {} if cls.key else protocol)


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
    type: ``int``, ``float``, ``str``, a tuple of them, a mapping, a nested block; an absent
    field is its default (``X | None`` without one: None)."""
    hints = _hints(cls)
    return cls(
        **{
            f.name: _convert(hints[f.name], block.get(f.name, _absent(f.default)))
            for f in fields(cls)
        }
    )


def _absent(default: Any) -> Any:
    return None if default is MISSING else default


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
    return dict(value) if typing.get_origin(kind) is dict else kind(value)


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
    #: the scan's display intervals
    intervals: str = "bootstrap"
    #: a side beyond the data range
    edge: str = "one_sided"
    #: the tolerance: ``fixed`` (the registered one) or ``se`` (se_multiplier × the s.e.)
    tolerance_rule: str = "fixed"
    se_multiplier: float = 2.0


@dataclass(frozen=True)
class Thresholds(ProtocolBlock):
    """``protocol.thresholds``: the headline quantile, the robustness band and the rules for
    tied and lattice scores."""

    key: ClassVar[str] = "thresholds"
    headline: float
    band: tuple[float, ...]
    ties: str = "strict"
    lattice_step: float | None = None
    #: under ``ties: lattice``, the capped end of the bad tail in the scores' own units
    ceiling: float | None = None
    #: under ``ties: lattice``, the fewest distinct exceedance values the headline threshold
    #: may leave (the schema's floor 4 is the fewest at which the discretised G4 can reject,
    #: methods note P10)
    min_levels: int = 30


@dataclass(frozen=True)
class Rules(ProtocolBlock):
    """The protocol's own decision rules (Section 3 of Zhou (2026)): α and its multiplicity
    correction over the ``family`` of pairs (``confirmatory``: pairs with a ``pilot`` condition
    are exploratory) at the ``adjusted_gates`` (Bonferroni-corrected α = 0.05/6 on the CIs of
    G1, G2 and P1), G3's N*, P2's Δfloor, TVaR's level, the headline scale, the band rule, and
    P1's method (``percentile``: CI non-overlap; ``profile``; ``lr_test``, calibrated by
    ``bartlett``, ``chi2`` or a parametric ``bootstrap`` below ``lr_bootstrap_below``
    exceedances); the design's ``power`` at ``xi_bar`` (Eq. 2)."""

    key: ClassVar[str] = ""
    alpha: float
    multiplicity: str
    min_exceedances: int
    delta_floor: float
    tvar_level: float
    power: float
    xi_bar: float
    headline_scale: str
    band_rule: str
    family: str = "registered"
    adjusted_gates: tuple[str, ...] = ("G1", "G2", "P1")
    p1_method: str = "percentile"
    lr_calibration: str = "bartlett"
    lr_bootstrap_below: int = 200


@dataclass(frozen=True)
class Tolerances(ProtocolBlock):
    """``protocol.tolerances``: G1's and G2's equivalence margins, replaced by scale or
    ``scorer/scale`` in ``scales``; ``proposed``: ``data`` where init proposed them from the
    data."""

    key: ClassVar[str] = "tolerances"
    mean: float
    tvar: float
    scales: dict[str, dict[str, float]] | None = None
    proposed: str = "registered"


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
    """``protocol.operating_characteristics``: the simulation of the whole registered rule
    (``resamples`` None: the observed-information stand-in; ``max_false_pass`` None: no bound)."""

    key: ClassVar[str] = "operating_characteristics"
    trials: int = 200
    resamples: int | None = None
    max_false_pass: float | None = None
