"""The registered plan's branch of the DAG: entry 0 of the lock evaluated beside the amended head.

After an amendment the workflow answers two questions: what the amended plan (the chain head)
gives, and what the plan as first registered would have given on the same data (DESIGN:
"Amendments"). Where the amendment changed only decision rules, the stored statistics serve
both and the registered verdict is re-derived from them
(:func:`tailgate.stages.registered_plan.registered_plan_verdicts`). Where it changed what the
statistics are (bootstrap size, seed, stability window, a threshold never fitted, an analysis's
own fields, the data…), :class:`RegisteredBranch` lays out the jobs that compute entry 0's
statistics into ``results/<study>/registered/`` — the same stage functions, run with
``plan="registered"`` (:mod:`tailgate.plans.entries`).

The workflow defines each stage's rule once (``rules/*.smk``); a job's plan is its ``{plan}``
wildcard (:class:`PlanWildcard`), the plan's folder under ``results/<study>/``: empty for the
chain head's :class:`Plan`, which writes the main tree, ``results/<study>/`` +
:data:`tailgate.plans.layout.LAYOUT`; ``registered/`` for entry 0's, which writes
``results/<study>/registered/`` + :data:`LAYOUT` and reads, through the rules' input functions
(:meth:`Plan.path`), the file of each job it reads from: the main tree's where that job is
shared, its own otherwise. A record of the registered plan's file is kept in
``provenance/registered/`` (:func:`tailgate.runtime.provenance.record_path`), so one pattern,
``provenance/{plan}<path>``, names both plans' records. The embed rule alone has no plan
wildcard: one job a model writes every embedding file of both plans, so that the model loads
once (:meth:`PlanWildcard.embedded`).

A job of entry 0's plan is *shared* — the branch reads the main tree's file — when the amended
plan runs the same job (same wildcards) with the same fingerprint (:func:`tailgate.plans.
fingerprint.stage_fingerprint`: everything the stage reads of the registration), every job it
reads in the declared stage graph (:data:`tailgate.plans.reads.STAGE_GRAPH`) is shared, and the
pinned input files it may read are the same; such a job writes the same bytes
under either plan (``tests/plans/test_stage_dependencies.py``). Every other job is the
branch's *own* and runs under entry 0. The gates, analysis and grading jobs of the branch are
always its own (they are the registered plan's decisions); they are requested only where the stored
statistics cannot serve the registered plan (:meth:`RegisteredBranch.protocol_reasons`,
:meth:`RegisteredBranch.analysis_reasons`), so an amendment of decision rules alone adds no job.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from itertools import product
from pathlib import Path
from string import Formatter
from typing import Any

from tailgate.analyses.registry import kind_of
from tailgate.prereg.lock import read_lock
from tailgate.prereg.study import Study

from .entries import (
    BRANCH_DIR,
    HEAD,
    REGISTERED,
    changed_pins,
    entry_study,
    registered_pin_problems,
)
from .fingerprint import stage_fingerprint
from .layout import LAYOUT, WRITER, wildcards_of
from .reads import STAGE_GRAPH, analysis_reads, scales_for, statistics_changes

__all__ = [
    "LAYOUT",
    "WRITER",
    "Plan",
    "PlanWildcard",
    "RegisteredBranch",
    "plans",
    "registered_branch",
]

#: the stages that read the pinned input files (an import file, a scorer's checkpoint…)
_READ_PINS = ("select_prompts", "generate", "score", "embed")


def _scales(study: Study, scorer: str) -> list[str]:
    try:
        return scales_for(study, scorer)
    except KeyError:
        return []


def _names(items: list[dict[str, Any]]) -> list[str]:
    return [str(i["name"]) for i in items]


class _Template(str):
    """A path template whose :meth:`format` gives a plan's file of one job (what an analysis
    kind's ``inputs`` formats, :meth:`Plan.analysis_inputs`)."""

    plan: Plan
    kind: str

    def __new__(cls, plan: Plan, kind: str) -> _Template:
        out = super().__new__(cls, plan.pattern(kind))
        out.plan, out.kind = plan, kind
        return out

    def format(self, *args: Any, **wildcards: Any) -> str:  # type: ignore[override]
        return self.plan.path(self.kind, **wildcards)


def _fields(template: str) -> list[str]:
    """The wildcards a path template names."""
    return [f for _, f, _, _ in Formatter().parse(template) if f]


class Plan:
    """The chain head's jobs as the rules declare them (module docstring), its files the main
    tree's under ``results``; :class:`RegisteredBranch` is entry 0's beside an amendment."""

    #: the plan a stage computes under (:mod:`tailgate.plans.entries`)
    name = HEAD

    def __init__(self, study: Study, results: str | Path) -> None:
        self.study = study
        self.results = str(results).rstrip("/")

    def fingerprint(self, stage: str, **wildcards: str) -> str:
        """The ``registered`` parameter of a job of the plan: its stage's fingerprint
        (:func:`tailgate.plans.fingerprint.stage_fingerprint`) under the plan's study."""
        return stage_fingerprint(self.study, stage, **wildcards)

    # --- the plan's lists (``wildcards``, a job's, where a rule asks: the same for every job) --
    def conditions(self, wildcards: Any = None) -> list[str]:
        return _names(self.study.conditions())

    def protocol_conditions(self, wildcards: Any = None) -> list[str]:
        return self.study.protocol_conditions()

    def scorers(self) -> list[str]:
        return _names(self.study.scorers())

    def scales(self, scorer: str) -> list[str]:
        return _scales(self.study, scorer)

    def scales_of(self, wildcards: Any) -> list[str]:
        """The scales of a job's scorer."""
        return self.scales(wildcards.scorer)

    def shards(self, wildcards: Any = None) -> list[int]:
        return list(range(self.study.shards))

    def analyses(self) -> list[tuple[str, str]]:
        """The plan's (scorer, scale) pairs with fits, gates and an H1 verdict."""
        if not self.study.has_protocol:
            return []
        return [(s, sc) for s in self.scorers() for sc in self.scales(s)]

    # --- paths --------------------------------------------------------------------------------
    #: the plan's ``{plan}`` wildcard: its folder under ``results/<study>/`` with a slash
    prefix = ""

    @property
    def root(self) -> str:
        """The folder of the plan's own files."""
        return f"{self.results}/{self.prefix}".rstrip("/")

    def pattern(self, kind: str) -> str:
        """The path template of the plan's own files of an artifact kind (Snakemake wildcards
        in braces): a rule's output."""
        return f"{self.root}/{LAYOUT[kind]}"

    def main(self, kind: str) -> str:
        """The main tree's path template of an artifact kind."""
        return f"{self.results}/{LAYOUT[kind]}"

    def own(self, stage: str, **wildcards: str) -> bool:
        """Whether the plan's job of ``stage`` writes its own file (the head's always does)."""
        return True

    def path(self, kind: str, **wildcards: Any) -> str:
        """The file of the plan's job: its own, or the main tree's where the job is shared."""
        wc = {k: str(wildcards[k]) for k in _fields(LAYOUT[kind])}
        own = self.own(WRITER[kind], **wc)
        return (self.pattern(kind) if own else self.main(kind)).format(**wc)

    def each(self, kind: str, **over: Any) -> Callable[[Any], list[str]]:
        """A rule's input: the files of ``kind`` for every combination of the values ``over``
        (lists, or methods of a plan, ``Plan.shards``, called with the job's wildcards) beside
        the job's wildcards, in order."""

        def paths(wc: Any) -> list[str]:
            axes = [values(self, wc) if callable(values) else values for values in over.values()]
            return [
                self.path(kind, **{**dict(wc.items()), **dict(zip(over, combo, strict=True))})
                for combo in product(*axes)
            ]

        return paths

    def generate_inputs(self, wildcards: Any) -> dict[str, str]:
        """The generate job's inputs (:meth:`data_inputs` of its condition)."""
        return self.data_inputs(wildcards.condition)

    def data_inputs(self, condition: str) -> dict[str, str]:
        """What a condition's generation reads: the prompt selection (transformers backend,
        unless the condition answers its registered query) or the import file."""
        data = self.study.source()
        if data["backend"] == "transformers":
            if self.study.condition(condition).get("query") is not None:
                return {}  # a query condition answers its registered query
            return {"prompts": self.path("prompts")}
        if data["backend"] == "import":
            return {"data": str(data["import"]["path"])}
        return {}

    def layout(self) -> dict[str, str]:
        """Templates for an analysis kind's ``inputs`` (each formats to the plan's file)."""
        return {k: _Template(self, k) for k in ("severities", "fits", "embeddings", "scores")}

    def analysis_inputs(self, name: str) -> dict[str, list[str]]:
        """Named input lists of the plan's analysis ``name``, as its kind declares them."""
        spec = self.study.analyses()[name]
        return kind_of(spec).inputs(spec, self.study, self.layout())

    def summaries(self, analyses: Sequence[str]) -> list[str]:
        """The transform summary of each (scorer, scale) whose severities the analyses
        ``analyses`` read, the plan's own or the main tree's (a fit reads its own: an input)."""
        pairs: dict[tuple[str, str], None] = {}
        for name in analyses:
            for path in self.analysis_inputs(name).get("severities", []):
                rel = next(
                    path[len(root) + 1 :]
                    for root in (self.root, self.results)
                    if path.startswith(root + "/")
                )
                wc = wildcards_of("severities", rel)
                if wc is not None:
                    pairs[wc["scorer"], wc["scale"]] = None
        return [self.path("transform_summary", scorer=s, scale=sc) for s, sc in pairs]

    def embedded(self) -> list[tuple[str, str]]:
        """(condition, shard) of each embedding file the plan's analyses read that the plan
        writes itself (entry 0's plan shares the others with the main tree), of any model, in
        order."""
        own = (
            wildcards_of("embeddings", f.removeprefix(self.root + "/"))
            for name in self.study.analyses()
            for f in self.analysis_inputs(name).get("embeddings", [])
            if f.startswith(self.root + "/")
        )
        return sorted({(w["condition"], w["shard"]) for w in own if w is not None})

    def analysis_files(self, wildcards: Any) -> dict[str, list[str]]:
        """The analysis job's inputs."""
        return self.analysis_inputs(wildcards.analysis)

    def analysis_input_names(self, wildcards: Any) -> list[str]:
        """The names of the analysis job's input lists (its ``inputs`` parameter)."""
        return list(self.analysis_inputs(wildcards.analysis))


class RegisteredBranch(Plan):
    """Entry 0's plan beside the chain head: which of its jobs are shared with the main tree
    and which are its own (module docstring), and the files it must produce."""

    name = REGISTERED
    prefix = f"{BRANCH_DIR}/"

    def __init__(
        self,
        head: Study,
        registered: Study,
        results: str | Path,
        chain: Sequence[Mapping[str, Any]],
    ) -> None:
        super().__init__(registered, results)
        self.head = head
        self.registered = registered
        self.chain = chain
        self._own: dict[tuple[str, tuple[tuple[str, str], ...]], bool] = {}

    # --- which jobs are the branch's own ------------------------------------------------------
    def own(self, stage: str, **wildcards: str) -> bool:
        """Whether entry 0's job of ``stage`` with ``wildcards`` runs in the branch."""
        key = (stage, tuple(sorted(wildcards.items())))
        if key not in self._own:
            self._own[key] = self._decide(stage, **wildcards)
        return self._own[key]

    @cached_property
    def _pins_changed(self) -> bool:
        return bool(changed_pins(self.chain))

    @cached_property
    def _head_embeddings(self) -> set[str]:
        """The embedding files the amended plan's analyses read."""
        head = Plan(self.head, self.results)
        out: set[str] = set()
        for name in self.head.analyses():
            out.update(head.analysis_inputs(name).get("embeddings", []))
        return out

    def _same(self, stage: str, **wildcards: str) -> bool:
        key = STAGE_GRAPH.get(stage, ((), None))[1]
        wc = {k: v for k, v in wildcards.items() if k == key}
        return stage_fingerprint(self.registered, stage, **wc) == stage_fingerprint(
            self.head, stage, **wc
        )

    def _decide(self, stage: str, **wc: str) -> bool:
        """Shared where the amended plan runs the same job with the same fingerprint and every
        job it reads (:data:`STAGE_GRAPH`) is shared, and no pinned input file it may read was
        re-pinned; the gates, analyses and grading are always entry 0's own."""
        if stage in ("gates", "analysis", "grade") or (stage in _READ_PINS and self._pins_changed):
            return True
        if not self._same(stage, **wc) or not self._in_head(stage, wc):
            return True
        return any(self.own(up, **job) for up, job in self._reads(stage, wc))

    def _in_head(self, stage: str, wc: Mapping[str, str]) -> bool:
        """Whether the amended plan runs the job of ``stage`` with wildcards ``wc`` too."""
        head = self.head
        if stage == "select_prompts":
            return head.backend == "transformers"
        s, head_conditions = wc.get("scorer", ""), _names(head.conditions())
        head_shards = head.shards
        if stage in ("generate", "score", "embed"):
            if wc["condition"] not in head_conditions or int(wc["shard"]) >= head_shards:
                return False
            if stage == "score":
                return s in _names(head.scorers())
            return stage == "generate" or self.main("embeddings").format(**wc) in (
                self._head_embeddings
            )
        if stage in ("transform", "transform_summary"):  # one condition's severities, or the
            same = (  # clip counts of every condition
                wc["condition"] in head_conditions
                if stage == "transform"
                else head_conditions == self.conditions()
            )
            return wc["scale"] in _scales(head, s) and same and head_shards == len(self.shards())
        if stage in ("fit", "bulk"):
            if not head.has_protocol or wc["condition"] not in head.protocol_conditions():
                return False
            if stage == "bulk":  # the bulk table holds one column pair per scale
                return _scales(head, s) == self.scales(s)
            return wc["scale"] in _scales(head, s)
        raise ValueError(f"no registered-plan branch for stage {stage!r}")

    def _reads(self, stage: str, wc: Mapping[str, str]) -> list[tuple[str, dict[str, str]]]:
        """The jobs the job ``wc`` of ``stage`` reads (:data:`STAGE_GRAPH`): each job's stage
        and wildcards."""
        s = wc.get("scorer", "")
        if stage == "generate":
            return (
                [("select_prompts", {})] if "prompts" in self.data_inputs(wc["condition"]) else []
            )
        if stage in ("score", "embed"):
            return [("generate", {"condition": wc["condition"], "shard": str(int(wc["shard"]))})]
        if stage in ("transform", "transform_summary"):
            conditions = [wc["condition"]] if stage == "transform" else self.conditions()
            return [
                ("score", {"scorer": s, "condition": c, "shard": str(k)})
                for c in conditions
                for k in self.shards()
            ]
        c, scales = wc["condition"], [wc["scale"]] if stage == "fit" else self.scales(s)
        severities = [("transform", {"scorer": s, "scale": sc, "condition": c}) for sc in scales]
        if stage == "fit":  # and the clip counts
            return [*severities, ("transform_summary", {"scorer": s, "scale": wc["scale"]})]
        return severities

    # --- what the branch must produce ---------------------------------------------------------
    @cached_property
    def unavailable(self) -> list[str]:
        """Why entry 0's pinned input files cannot be read now (empty: they can)."""
        return registered_pin_problems(self.registered, self.chain)

    def protocol_reasons(self) -> list[str]:
        """Why the amended plan's stored statistics cannot give the registered plan's gates and
        H1 verdict (empty: re-derived from them; otherwise the branch computes them)."""
        from tailgate.protocol.registered import registered_settings

        reg, head = self.registered, self.head
        if not reg.has_protocol:
            return []
        if not head.has_protocol:
            return ["protocol.enabled (the amended plan registers no protocol)"]
        out = statistics_changes(reg, head)
        if self._pins_changed:
            out.append("the pinned input files")
        fitted = {(s, sc) for s in _names(head.scorers()) for sc in _scales(head, s)}
        out += [f"{s}/{sc} (not analysed as amended)" for s, sc in self.analyses()
                if (s, sc) not in fitted]  # fmt: skip
        out += [
            f"condition {c} (not fitted as amended)"
            for c in reg.protocol_conditions()
            if c not in head.protocol_conditions()
        ]
        pairs = set(head.pairs())
        out += [f"pair {a} vs {b} (no bulk CIs as amended)" for a, b in reg.pairs()
                if (a, b) not in pairs]  # fmt: skip
        out += [
            f"threshold q = {q:g} (not fitted as amended)"
            for q in reg.thresholds.band
            if not any(abs(q - h) < 1e-9 for h in head.thresholds.band)
        ]
        r, h = registered_settings(reg), registered_settings(head)
        out += [
            f"the {g} CI level ({r.level_of(g):g} registered, {h.level_of(g):g} amended)"
            for g in ("G1", "G2")
            if abs(r.level_of(g) - h.level_of(g)) > 1e-12
        ]
        return out

    def analysis_reasons(self, name: str) -> list[str]:
        """Why the amended plan's stored statistics of analysis ``name`` are not entry 0's
        (empty: its registered criteria are re-derived from them)."""
        if name not in self.registered.analyses():
            return []
        if name not in self.head.analyses():
            return ["the analysis (removed by an amendment)"]
        before, after = analysis_reads(self.registered, name), analysis_reads(self.head, name)
        out = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        if self._pins_changed:
            out.append("the pinned input files")
        if not out:
            own = [
                p
                for paths in self.analysis_inputs(name).values()
                for p in paths
                if p.startswith(self.root + "/")
            ]
            if own:
                out.append(f"its inputs ({len(own)} file(s) recomputed under entry 0)")
        return out

    def gates_targets(self) -> list[str]:
        """The branch's gates documents (none where the stored statistics serve entry 0)."""
        if self.unavailable or not self.protocol_reasons():
            return []
        return [self.pattern("gates").format(scorer=s, scale=sc) for s, sc in self.analyses()]

    def analysis_targets(self) -> list[str]:
        """The branch's analysis statistics (entry 0's analyses the stored ones cannot serve)."""
        if self.unavailable:
            return []
        return [
            self.pattern("analysis").format(analysis=n)
            for n in self.registered.analyses()
            if self.analysis_reasons(n)
        ]


class PlanWildcard:
    """The rules' view of the plans (module docstring): a job's plan is its ``{plan}``
    wildcard, the plan's folder under ``results/<study>/`` (:attr:`Plan.prefix`)."""

    def __init__(self, plans: Sequence[Plan]) -> None:
        self.plans = {p.prefix: p for p in plans}
        self.results = plans[0].results

    @property
    def constraint(self) -> str:
        """The ``{plan}`` wildcard's values, as a regular expression (never empty: Snakemake
        reads an empty one as none)."""
        return "(?:" + "|".join(re.escape(prefix) for prefix in self.plans) + ")"

    def of(self, wildcards: Any) -> Plan:
        """The plan of a job."""
        return self.plans[wildcards.plan]

    def own(self, rel: str) -> str:
        """A rule's output: a plan's own file ``rel`` (a pattern of the results layout,
        checked against it) under ``results/<study>/{plan}``."""
        if rel not in LAYOUT.values():
            raise ValueError(f"{rel}: not a pattern of the results layout (tailgate.plans.layout)")
        return f"{self.results}/{{plan}}{rel}"

    def input(self, kind: str) -> Callable[[Any], str]:
        """A rule's input: the file of ``kind`` a job reads, its plan's own or the main tree's
        (:meth:`Plan.path`)."""
        return lambda wc: self.of(wc).path(kind, **dict(wc.items()))

    def each(self, kind: str, **over: Any) -> Callable[[Any], list[str]]:
        """A rule's input: :meth:`Plan.each` of the job's plan."""
        return lambda wc: self.of(wc).each(kind, **over)(wc)

    def job(self, method: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
        """A rule's input or parameter: ``method`` (of a plan) of the job's plan and wildcards."""
        return lambda wc: method(self.of(wc), wc)

    def name(self, wildcards: Any) -> str:
        """The ``plan`` parameter: the plan a job's stage computes under."""
        return self.of(wildcards).name

    def fingerprint(self, stage: str, wildcard: str | None = None) -> Callable[[Any], str]:
        """The ``registered`` parameter (:meth:`Plan.fingerprint`) of the job's plan, keyed by
        one of its wildcards or none."""
        return lambda wc: self.of(wc).fingerprint(
            stage, **({wildcard: getattr(wc, wildcard)} if wildcard else {})
        )

    def embedded(self) -> list[tuple[Plan, str, str]]:
        """(plan, condition, shard) of every plan's own embedding files (one embed job a model
        writes them all)."""
        return [(p, *job) for p in self.plans.values() for job in p.embedded()]

    # --- the embed rule: one job a model, every plan's files ----------------------------------
    def embed_outputs(self) -> list[str]:
        """Every plan's own embedding files (the model a wildcard); where no analysis reads
        one, the template of one shard, which nothing requests."""
        files = [
            p.pattern("embeddings").replace("{condition}", c).replace("{shard}", k)
            for p, c, k in self.embedded()
        ]
        return files or [self.own(LAYOUT["embeddings"])]

    def embed_inputs(self) -> list[str] | Callable[[Any], str]:
        """The generations each of :meth:`embed_outputs` embeds, the same order."""
        jobs = self.embedded()
        return [p.path("generations", condition=c, shard=k) for p, c, k in jobs] or self.input(
            "generations"
        )

    def embed_shards(self, wildcards: Any) -> list[tuple[str, str]]:
        """The ``shards`` parameter: (plan, condition) of each of :meth:`embed_outputs`."""
        jobs = self.embedded() or [(self.of(wildcards), wildcards.condition, "")]
        return [(p.name, c) for p, c, _ in jobs]

    def embed_fingerprint(self, wildcards: Any) -> dict[str, str]:
        """The ``registered`` parameter: each writing plan's fingerprint of the model's job."""
        plans = dict.fromkeys(p for p, _, _ in self.embedded()) or [self.of(wildcards)]
        return {p.name: p.fingerprint("embed", embedder=wildcards.embedder) for p in plans}


def registered_branch(
    head: Study, results: str | Path, chain: Sequence[Mapping[str, Any]] | None = None
) -> RegisteredBranch | None:
    """The branch of ``head``'s lock chain (read from its lock unless given), None when the
    chain has no amendment (the head is the registered plan)."""
    if chain is None:
        lock = read_lock(head.lock_path)
        chain = lock.chain if lock is not None else []
    if len(chain) < 2:
        return None
    return RegisteredBranch(head, entry_study(head, chain[0]), results, chain)


def plans(head: Study, results: str | Path) -> list[Plan]:
    """The plans whose rules the workflow defines: the chain head's, and entry 0's beside an
    amendment (:func:`registered_branch`)."""
    branch = registered_branch(head, results)
    return [Plan(head, results)] if branch is None else [Plan(head, results), branch]
