"""The protocol every analysis kind implements (see :mod:`tailgate.analyses`), and the pieces
the kinds share: the registration checks of conditions, scorers and criterion arguments, the
paths of the severities artifacts, JSON-safe numbers and the rows of a condition in prompt order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tailgate.prereg.schema import did_you_mean
from tailgate.prereg.validated import Study
from tailgate.seeds import seed_sequence

from .criteria import Criterion, CriterionOutcome, StatisticRef, evaluate, parse_statistic

__all__ = [
    "AnalysisKind",
    "AnalysisResult",
    "AnalysisRun",
    "FolderKind",
    "Problem",
    "condition_problems",
    "scorer_problems",
    "scorer_scales",
    "severity_paths",
    "shard_paths",
    "sorted_values",
    "unknown_args",
]


@dataclass(frozen=True)
class Problem:
    """An invalid registration: where (path inside the analysis spec), what, and the fix."""

    path: tuple[str | int, ...]
    message: str
    fix: str


@dataclass(frozen=True)
class AnalysisResult:
    """What :meth:`AnalysisKind.compute` returns: the statistics JSON (plain JSON values) and
    optional tables (pyarrow Tables, written as ``<table>.parquet`` beside it)."""

    statistics: dict[str, Any]
    tables: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AnalysisRun:
    """One computation of a registered analysis (:meth:`AnalysisKind.compute`): the study, the
    analysis's name and spec, its input artifacts by name and the threads it may use."""

    study: Study
    name: str
    spec: Mapping[str, Any]
    inputs: Mapping[str, Sequence[str]]
    threads: int = 1

    def seed(self, *parts: object) -> np.random.SeedSequence:
        """The random stream keyed ``("analysis", name, *parts)`` under the study seed: every
        stream of an analysis comes from here, so its result does not depend on ``threads``."""
        return seed_sequence(self.study.seed, "analysis", self.name, *parts)


class AnalysisKind(ABC):
    """One kind of pre-registered analysis (``analyses.<name>.kind``).

    Subclasses set :attr:`kind` and :attr:`examples` and provide :meth:`check_statistic`,
    :meth:`inputs`, :meth:`analyse` and :meth:`statistic` (each kind's folder holds them as
    functions: ``spec``, ``inputs``, ``compute``, ``criteria``); :meth:`validate`,
    :meth:`compute` and :meth:`criteria` are generic. What the report draws of a kind is
    :mod:`tailgate.report.sections`' business.
    """

    kind: str = ""
    #: the protocol fields (``alpha``, ``bootstrap``…) the kind falls back on for a parameter its
    #: spec leaves out (:func:`tailgate.prereg.answer.protocol_settings`)
    protocol_defaults: tuple[str, ...] = ()
    #: whether a criterion's statistic may name a target (``target:name(…)``)
    takes_target: bool = False
    #: examples of the kind's criterion statistics, for the fix of an unknown one
    examples: str = ""

    # --- registration ------------------------------------------------------------------
    def validate(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
        """Cross-field problems of one analysis spec (the JSON Schema checked the types):
        :meth:`check_spec`, then every criterion's statistic against :meth:`statistic_names`."""
        problems = list(self.check_spec(spec, data))
        if problems:
            return problems
        seen: set[str] = set()
        for i, c in enumerate(spec.get("criteria", [])):
            if c["name"] in seen:
                problems.append(
                    Problem(("criteria", i, "name"), f"criterion '{c['name']}' is listed twice",
                            "give every criterion of an analysis a unique name")
                )  # fmt: skip
            seen.add(c["name"])
            ref = parse_statistic(c["statistic"])
            if ref is None:
                why: str | None = "does not follow [target:]name(arg, ...)"
            elif ref.target is not None and not self.takes_target:
                why = "takes no target"
            else:
                why = self.check_statistic(spec, data, ref)
            if why:
                problems.append(
                    Problem(("criteria", i, "statistic"), f"statistic '{c['statistic']}' {why}",
                            self.statistic_help(spec, data))
                )  # fmt: skip
        return problems

    def check_spec(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
        """Problems of the kind's own parameters (``data``: the canonical study document)."""
        return []

    @abstractmethod
    def check_statistic(
        self, spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
    ) -> str | None:
        """Why ``ref`` names no statistic this analysis stores (None if it does; a target is
        refused before unless :attr:`takes_target`)."""

    def statistic_help(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> str:
        """The fix shown when a criterion names an unknown statistic."""
        return f"write e.g. {self.examples} (tailgate.analyses.{self.kind})"

    # --- computation ---------------------------------------------------------------------
    @abstractmethod
    def inputs(
        self, spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
    ) -> dict[str, list[str]]:
        """Named lists of input artifacts, from the workflow's path templates ``layout``
        (``severities``: ``…/severities/{scorer}/{scale}/{condition}.parquet``, ``fits``)."""

    def compute(
        self,
        study: Study,
        name: str,
        spec: Mapping[str, Any],
        inputs: Mapping[str, Sequence[str]],
        *,
        threads: int = 1,
    ) -> AnalysisResult:
        """The statistics of the analysis from its input artifacts (:meth:`analyse`)."""
        return self.analyse(AnalysisRun(study, name, spec, inputs, threads))

    @abstractmethod
    def analyse(self, run: AnalysisRun) -> AnalysisResult:
        """The statistics of one run. Every random stream must come from
        :meth:`AnalysisRun.seed`, and the result must not depend on ``run.threads``."""

    # --- decisions -----------------------------------------------------------------------
    @abstractmethod
    def statistic(
        self, spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
    ) -> tuple[float | None, str]:
        """The stored value of ``ref`` and a note (value None: not available, and why)."""

    def criteria(self, spec: Mapping[str, Any], stats: Mapping[str, Any]) -> list[CriterionOutcome]:
        """Every registered criterion's outcome, from the stored statistics only."""
        out = []
        for c in spec.get("criteria", []):
            crit = Criterion.from_spec(c)
            ref = parse_statistic(crit.statistic)
            if ref is None:
                out.append(evaluate(crit, None, "the statistic cannot be parsed"))
                continue
            try:
                value, note = self.statistic(spec, stats, ref)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                value, note = None, f"not in the stored statistics ({type(exc).__name__})"
            out.append(evaluate(crit, value, note))
        return out


class FolderKind(AnalysisKind):
    """A kind assembled from the modules of its folder ``analyses/<kind>/``: ``spec``
    (``check_spec``, ``check_statistic``), ``inputs`` (``inputs``), ``compute`` (``analyse``) and
    ``criteria`` (``statistic``)."""

    def __init__(
        self,
        kind: str,
        parts: Mapping[str, Any],
        *,
        examples: str,
        protocol_defaults: tuple[str, ...] = (),
        takes_target: bool = False,
    ) -> None:
        self.kind = kind
        self.examples = examples
        self.protocol_defaults = protocol_defaults
        self.takes_target = takes_target
        self._parts = dict(parts)

    def check_spec(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
        return self._parts["spec"].check_spec(spec, data)

    def check_statistic(
        self, spec: Mapping[str, Any], data: Mapping[str, Any], ref: StatisticRef
    ) -> str | None:
        return self._parts["spec"].check_statistic(spec, data, ref)

    def inputs(
        self, spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
    ) -> dict[str, list[str]]:
        return self._parts["inputs"].inputs(spec, study, layout)

    def analyse(self, run: AnalysisRun) -> AnalysisResult:
        return self._parts["compute"].analyse(run)

    def statistic(
        self, spec: Mapping[str, Any], stats: Mapping[str, Any], ref: StatisticRef
    ) -> tuple[float | None, str]:
        return self._parts["criteria"].statistic(spec, stats, ref)


# --- pieces the kinds share ------------------------------------------------------------
def condition_problems(
    names: Sequence[str], data: Mapping[str, Any], key: str = "conditions"
) -> list[Problem]:
    """A problem for every name in ``names`` (the spec's ``key`` list) that is not registered."""
    registered = [c["name"] for c in data["conditions"]]
    return [
        Problem(
            (key, i),
            f"'{c}' is not a registered condition",
            f"use names from 'conditions' ({', '.join(registered)})" + did_you_mean(c, registered),
        )
        for i, c in enumerate(names)
        if c not in registered
    ]


def scorer_scales(data: Mapping[str, Any], scorer: Mapping[str, Any]) -> list[str]:
    """The scales a registered scorer is analysed on: every registered scale for a bounded
    (probability) scorer, ``identity`` for an unbounded one."""
    if scorer.get("bounded", True):
        return [str(s) for s in data["transform"]["scales"]]
    return ["identity"]


def scorer_problems(spec: Mapping[str, Any], data: Mapping[str, Any]) -> list[Problem]:
    """The spec's ``scorer`` must be registered and analysed on the spec's ``scale``."""
    scorers = {s["name"]: s for s in data["scorers"]}
    name = spec["scorer"]
    if name not in scorers:
        return [
            Problem(
                ("scorer",),
                f"'{name}' is not a registered scorer",
                f"use one of {', '.join(scorers)}" + did_you_mean(name, scorers),
            )
        ]
    scale = spec.get("scale", "identity")
    have = scorer_scales(data, scorers[name])
    if scale not in have:
        return [
            Problem(
                ("scale",),
                f"scorer '{name}' is not analysed on the {scale} scale",
                f"use one of {', '.join(have)}",
            )
        ]
    return []


def severity_paths(
    spec: Mapping[str, Any], layout: Mapping[str, str], conditions: Sequence[str]
) -> list[str]:
    """The severities artifacts of the spec's scorer and scale (absent: identity)."""
    scale = spec.get("scale", "identity")
    return [
        layout["severities"].format(scorer=spec["scorer"], scale=scale, condition=c)
        for c in conditions
    ]


def shard_paths(
    study: Study, layout: Mapping[str, str], key: str, tail: str, **fields: str
) -> list[str]:
    """The shards of one artifact: the workflow's path template ``layout[key]`` (or, for a
    layout that names only the severities, ``tail`` in their place) for every shard of the
    study's generation."""
    template = layout.get(key) or layout["severities"].replace(
        "/severities/{scorer}/{scale}/{condition}.parquet", tail
    )
    shards = study.shards
    return [template.format(**fields, shard=k) for k in range(shards)]


def unknown_args(args: Sequence[str], allowed: Sequence[str]) -> str | None:
    """Why a criterion's arguments are not among ``allowed`` conditions (None if they are)."""
    for a in args:
        if a not in allowed:
            return f"names '{a}', which is not among the analysis's conditions"
    return None


def sorted_values(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Values in prompt-id order (rows of an artifact are not guaranteed sorted)."""
    return values[np.argsort(ids, kind="stable")]
