"""Pre-registered further analyses (the source papers): one framework, one registry of kinds.

A study registers analyses by name under ``analyses:``; each has a ``kind``, the kind's
parameters and a list of ``criteria`` (:mod:`tailgate.analyses.criteria`)::

    analyses:
      safety-ranking:
        kind: dominance
        conditions: [qwen, llama8b, nemo]
        scorers: [toxicity]
        criteria:
          - {name: qwen-safer-than-nemo, statistic: "r_ssd(qwen, nemo)",
             comparison: "<=", threshold: 0.0}

Every field is a decision field (it is frozen and hashed like the gates of Zhou (2026)). A study
that registers no analyses keeps ``analyses: {}`` and its canonical hash.

**The protocol.** ``tailgate.analyses.registry.KINDS[kind]`` is an
:class:`~tailgate.analyses.base.AnalysisKind` that provides

``validate(spec, data)``
    cross-field problems of its parameters and criteria (the JSON Schema's
    ``$defs/analysis_<kind>`` checks the types); :func:`registry.check_analyses` turns the first
    into a :class:`tailgate.errors.PreregError` naming file, line, field and fix;
``inputs(spec, study, layout)``
    the artifacts it reads, as named lists of paths built from the workflow's path templates;
``compute(study, name, spec, inputs, threads=…)``
    an :class:`~tailgate.analyses.base.AnalysisResult`: the statistics (plain JSON) and optional
    tables, deterministic for the study seed whatever ``threads`` (the kind's ``analyse`` of an
    :class:`~tailgate.analyses.base.AnalysisRun`, whose ``seed(…)`` keys every random stream);
``statistic(spec, stats, ref)`` and ``criteria(spec, stats)``
    each criterion's outcome re-derived from the stored statistics only — used by the analysis
    stage, by ``verdict.json`` and by the audit.

A kind computes and grades; the report presents: its section and figures are a
:class:`tailgate.report.sections.base.KindSection` (the report's own registry,
:func:`tailgate.report.sections.section_of`), and nothing here imports the report.

**The folders.** Each kind is a package, ``analyses/<kind>/``, of one module per job:
``spec`` (its parameters with their defaults, their checks and the statistics its criteria may
name), ``inputs`` (the artifacts it reads and their readers), ``compute`` (the statistics JSON),
``criteria`` (a criterion's value from the stored statistics), the statistical methods
(``statistics`` and its companions) and ``kind`` (the :class:`~tailgate.analyses.base.AnalysisKind`
binding them, registered in :data:`registry.MODULES`). What the kinds share — the protocol, the
checks of conditions, scorers and criterion arguments, the artifacts' paths — is in
:mod:`~tailgate.analyses.base`.

**The workflow.** One rule per analysis (``workflow/rules/analyses.smk``) runs
:func:`tailgate.stages.analyses.analysis_stage`, which writes
``results/<study>/analyses/<name>/statistics.json`` — the registered spec, the statistics and the
criteria outcomes — with provenance. ``verdict.json`` lists every criterion of the study (Zhou
2026's H1 included when the protocol is registered) in ``criteria`` and leads with the study's
registered ``answer`` (:mod:`tailgate.prereg.answer`: H1, or named criteria of the analyses); the
report draws the answer, the criteria table, a section per analysis and, with the protocol, the
per-condition cards; the audit check ``analyses`` (:mod:`tailgate.audit.criteria`)
re-derives every outcome from the stored statistics. To add a kind: implement the protocol in
a folder of this package, name it in :data:`registry.KIND_NAMES`, write its report section as the
module of :mod:`tailgate.report.sections` named after it, and its parameter schema as
``$defs/analysis_<kind>`` of ``workflow/tailgate/schemas/prereg.v1.schema.json`` (no ``default``
keywords: an absent field means the documented behaviour in code).
"""

from .base import AnalysisKind, AnalysisResult, Problem
from .criteria import Criterion, CriterionOutcome, evaluate, parse_statistic

__all__ = [
    "AnalysisKind",
    "AnalysisResult",
    "Criterion",
    "CriterionOutcome",
    "Problem",
    "evaluate",
    "parse_statistic",
]
