"""The protocol every analysis kind implements (see :mod:`tailgate.analyses`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tailgate.prereg.validated import Study

from .criteria import Criterion, CriterionOutcome, StatisticRef, evaluate, parse_statistic

__all__ = ["AnalysisKind", "AnalysisResult", "Problem"]


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


class AnalysisKind(ABC):
    """One kind of pre-registered analysis (``analyses.<name>.kind``).

    Subclasses set :attr:`kind` and implement :meth:`check_statistic`, :meth:`inputs`,
    :meth:`compute` and :meth:`statistic`; :meth:`validate` and :meth:`criteria` have generic
    implementations built on :meth:`check_spec` and :meth:`statistic`. What the report draws of
    a kind is :mod:`tailgate.report.sections`' business.
    """

    kind: str = ""
    #: the protocol fields (``alpha``, ``bootstrap``…) the kind falls back on for a parameter its
    #: spec leaves out (:func:`tailgate.prereg.answer.protocol_settings`)
    protocol_defaults: tuple[str, ...] = ()

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
            why = (
                "does not follow [target:]name(arg, ...)"
                if ref is None
                else self.check_statistic(spec, data, ref)
            )
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
        """Why ``ref`` names no statistic this analysis stores (None if it does)."""

    def statistic_help(self, spec: Mapping[str, Any], data: Mapping[str, Any]) -> str:
        """The fix shown when a criterion names an unknown statistic."""
        return "see the statistics of this kind in the README's analyses table"

    # --- computation ---------------------------------------------------------------------
    @abstractmethod
    def inputs(
        self, spec: Mapping[str, Any], study: Study, layout: Mapping[str, str]
    ) -> dict[str, list[str]]:
        """Named lists of input artifacts, from the workflow's path templates ``layout``
        (``severities``: ``…/severities/{scorer}/{scale}/{condition}.parquet``, ``fits``)."""

    @abstractmethod
    def compute(
        self,
        study: Study,
        name: str,
        spec: Mapping[str, Any],
        inputs: Mapping[str, Sequence[str]],
        *,
        threads: int = 1,
    ) -> AnalysisResult:
        """The statistics of the analysis from its input artifacts. Every random stream must
        come from :func:`tailgate.seeds.seed_sequence` keyed by ``("analysis", name, …)``, and
        the result must not depend on ``threads``."""

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
