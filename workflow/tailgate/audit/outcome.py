"""The outcome re-made: every file downstream of the stored statistics, made again with the
rules' own stage code from the lock and the stored fits, bulk replicates, analysis statistics
(``measures.json``) and the registered-plan branch, and compared whole with the stored file.

What is re-made, in the rules' order (``workflow/rules/``):

- ``analyses/<name>/statistics.json`` (rule ``grade``): from the stored
  ``analyses/<name>/measures.json`` with :func:`tailgate.stages.analyses.graded`;
- ``gates/<scorer>/<scale>.json`` (rule ``gates``): from the stored ``fits/…json`` and
  ``bulk/<scorer>/<condition>.parquet`` with :func:`tailgate.stages.gates.gates_document`;
- ``sensitivity/<scorer>/<scale>.json`` (rule ``sensitivity``): from the re-made gates with
  :func:`tailgate.stages.sensitivity.sensitivity_document`;
- ``verdict.json`` (rule ``verdict``): from the re-made gates, sensitivity and analysis
  documents, the stored fits, the generation shards' row counts, the lock and the
  registered-plan branch with :func:`tailgate.stages.verdict.verdict_document` — every value:
  the headline scorer and scale as registered, the band rule, gate values, Δξ, every gates
  file, the answer, the criteria and the registered-plan block;
- ``report.html``, ``report.md``, ``figures/*.png`` and their sidecars (rule ``report``): from
  the re-made ``verdict.json`` and analysis documents (never the stored ones) with
  :func:`tailgate.report.stage.render_report`;
- the run summary: the ``answer`` and ``verdicts`` of the ledger's last successful run, from
  the re-made ``verdict.json`` as :mod:`tailgate.runs.ledger` writes them.

A file a rule makes that is missing fails, naming the rule (once the outcome exists: a results
folder that holds a verdict or a report, or whose ledger recorded a run's answer).
Re-fitting, re-scoring and re-generating, which the stored statistics stand for here, are
``--reproduce``'s job (:mod:`tailgate.audit.reproduce`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailgate.errors import DamagedFileError
from tailgate.files.atomic import write_bytes, write_json
from tailgate.files.safe_read import load_json, loads_json, read_text
from tailgate.plans.branch import registered_branch
from tailgate.plans.layout import FIGURES, LAYOUT, Layout, writer_of
from tailgate.prereg.deviations import generated_rows
from tailgate.prereg.study import Study
from tailgate.runs.ledger import LEDGER, read_ledger, run_summary
from tailgate.stages.analyses import graded, read_analyses
from tailgate.stages.gates import bulk_replicates, gates_document
from tailgate.stages.sensitivity import sensitivity_document
from tailgate.stages.verdict import verdict_bytes, verdict_document
from tailgate.user_cache import figure_cache

from .realised import generation_shards

__all__ = ["Remade", "outcome_exists", "remake_outcome", "rule_of", "run_summary_failures"]

#: the files that say the outcome was made (beside a ledger run that recorded an answer)
_OUTCOME_FILES = ("verdict", "report", "report_md")


def rule_of(rel: str) -> str:
    """The rule that makes ``rel``, a path relative to the results folder (the layout's
    writer of its artifact kind)."""
    return writer_of(rel) or "?"


@dataclass
class Remade:
    """What :func:`remake_outcome` made: (path relative to the results folder, the re-made
    file), in the rules' order, and the failures of reading what it was made from."""

    made: list[tuple[str, Path]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    verdict: dict[str, Any] | None = None


def outcome_exists(rd: Path) -> bool:
    """Whether the results folder holds the outcome: a verdict or a report, or a ledger run
    that recorded an answer (then every file the outcome's rules make must be there). A run
    of part of the workflow (its fits, say) has no outcome yet."""
    if any(Layout(rd).file(kind).exists() for kind in _OUTCOME_FILES):
        return True
    try:
        lines = read_text(rd / LEDGER).splitlines()
    except (OSError, UnicodeDecodeError, DamagedFileError):
        return False
    for line in lines:
        try:
            run = loads_json(line, rd / LEDGER)
        except DamagedFileError:
            continue
        if isinstance(run, dict) and (run.get("answer") or run.get("verdicts")):
            return True
    return False


def _read(path: Path, what: str, fails: list[str]) -> Any:
    try:
        doc = load_json(path)
    except FileNotFoundError:
        fails.append(f"{path}: missing ({what})")
        return None
    except (OSError, ValueError, DamagedFileError) as exc:
        fails.append(f"{path}: cannot be read ({type(exc).__name__}: {exc})")
        return None
    if not isinstance(doc, dict):
        fails.append(f"{path}: damaged (a JSON {type(doc).__name__}, not a {what} document)")
        return None
    return doc


def _guard(fails: list[str], where: Path, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; stored statistics the stage code cannot use fail, naming the file."""
    try:
        return fn(*args)
    except Exception as exc:  # the stage code's own refusal of a damaged input
        fails.append(
            f"{where}: cannot be re-made from the stored statistics ({type(exc).__name__}: {exc})"
        )
        return None


def remake_outcome(rd: Path, study: Study, out: Path, *, mode: str) -> Remade:
    """Re-make the outcome of ``rd`` under ``out`` (module docstring); ``mode``: the run mode
    the verdict was made in (its deviations name an exploratory run)."""
    from tailgate.plans.reads import scales_for
    from tailgate.report.stage import render_report, report_inputs

    found = Remade()
    fails = found.failures
    names = study.protocol_conditions()
    pairs = [(s["name"], sc) for s in study.scorers() for sc in scales_for(study, s["name"])]
    if not study.has_protocol:
        pairs = []
    gates_docs, sens_docs, fits_docs = [], [], []
    layout, relative = Layout(rd), Layout("")
    for scorer, scale in pairs:
        fits = {c: _read(layout.fits(scorer, scale, c), "fit", fails) for c in names}
        if any(d is None for d in fits.values()):
            continue
        fits_docs += [fits[c] for c in names]
        rel = relative.gates(scorer, scale).as_posix()
        bulk = {c: layout.bulk(scorer, c) for c in names}
        reps = _guard(fails, rd / rel, _replicates, bulk, scale)
        if reps is None:
            continue
        doc = _guard(fails, rd / rel, gates_document, study, scorer, scale, fits, reps)
        if doc is None:
            continue
        write_json(out / rel, doc)
        found.made.append((rel, out / rel))
        gates_docs.append(doc)
        srel = relative.file("sensitivity", scorer=scorer, scale=scale).as_posix()
        sens = _guard(fails, rd / srel, sensitivity_document, study, doc)
        if sens is not None:
            write_json(out / srel, sens)
            found.made.append((srel, out / srel))
            sens_docs.append(sens)
    inputs = report_inputs(rd, study)
    analyses = []
    for name in sorted(study.analyses()):
        rel = relative.analysis(name).as_posix()
        measures = _read(layout.file("measures", analysis=name), "analysis statistics", fails)
        doc = None if measures is None else _guard(fails, rd / rel, graded, study, name, measures)
        if doc is not None:
            write_json(out / rel, doc)
            found.made.append((rel, out / rel))
            analyses.append(doc)
    # the report is rendered from the re-made documents, as the verdict is
    inputs["analyses"] = [out / relative.analysis(d["analysis"]) for d in analyses]
    present = generation_shards(rd, study)
    generated = (
        _guard(fails, layout.folder("generations"), generated_rows, present) if present else None
    )
    branch = _guard(fails, study.lock_path, registered_branch, study, rd.as_posix())
    reg_gates: list[Any] = []
    reg_analyses: list[Any] = []
    if branch is not None:
        reg_gates = [_read(Path(p), "registered-plan gates", fails) for p in branch.gates_targets()]
        reg_analyses = _guard(fails, rd, read_analyses, branch.analysis_targets()) or []
    if fails or len(gates_docs) != len(pairs):
        return found
    verdict = _guard(
        fails,
        layout.file("verdict"),
        verdict_document,
        study,
        gates_docs,
        sens_docs,
        fits_docs,
        analyses,
        generated,
        mode,
        reg_gates,
        reg_analyses,
    )
    if verdict is None:
        return found
    found.verdict = json.loads(json.dumps(verdict))
    made = Layout(out)
    write_bytes(made.file("verdict"), verdict_bytes(verdict))
    found.made.append((LAYOUT["verdict"], made.file("verdict")))
    figures = {f: made.file("figure", figure=f) for f in FIGURES if study.has_protocol}
    if figures:
        made.folder("figure").mkdir(parents=True, exist_ok=True)
    written = _guard(
        fails,
        layout.file("report"),
        _render,
        render_report,
        made.file("verdict"),
        inputs,
        out,
        figures,
        study,
    )
    if written is not None:
        found.made += [(Path(p).relative_to(out).as_posix(), Path(p)) for p, _ in written]
    return found


def _replicates(bulk: dict[str, Path], scale: str) -> dict[str, Any]:
    return {c: bulk_replicates(p, scale) for c, p in bulk.items()}


def _render(
    render_report: Callable[..., Any],
    verdict: Path,
    inputs: dict[str, Any],
    out: Path,
    figure_paths: dict[str, Path],
    study: Study,
) -> Any:
    from tailgate.report import figures
    from tailgate.report.kept_figures import kept_in
    from tailgate.report.raster import available_processes

    with figures.drawing_processes(available_processes()), kept_in(figure_cache()):
        return render_report(
            verdict,
            inputs["fits"],
            inputs["power"],
            Layout(out).file("report"),
            Layout(out).file("report_md"),
            figure_paths,
            inputs["analyses"],
            study=study,
        )


def run_summary_failures(rd: Path, verdict: dict[str, Any]) -> list[str]:
    """Where the ledger's last successful run does not show the re-made verdict's answer and
    H1 verdicts (:func:`tailgate.runs.ledger.run_summary`)."""
    runs = [r for r in read_ledger(rd) if r.get("outcome") == "success"]
    if not runs:
        return []
    last = runs[-1]
    want = run_summary(verdict)
    fails = []
    for key, value in want.items():
        if last.get(key) != value:
            fails.append(
                f"{rd / LEDGER}: run {last.get('run')} records {key} {last.get(key)!r:.160}, "
                f"but the verdict re-made from the stored statistics gives {value!r:.160}"
            )
    return fails
