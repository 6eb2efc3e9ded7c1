"""Checks of a registered import file before anything is frozen (``tailgate design``).

The checks are the import backend's own (:func:`tailgate.generate.importer.inspect_import`): the
columns the registration maps exist, every prompt key is a key, every row's condition is
registered and every registered condition has rows, scores are finite and within [0, 1] for
``bounded`` scorers, and no key appears twice within a condition. A failure raises
:class:`tailgate.generate.importer.ImportDataError` (a ``DataInputError``, exit code 2) listing
each problem with the file, the row and column, and the fix; the generation jobs would refuse the
same file with the same message. What passes is summarised in short lines: how keys become
prompt ids, rows per condition against the registered prompts (a shortfall becomes a deviation of
the realised design; rows beyond the registered prompts are not used), keys shared by every
condition (the pairs of paired resampling), and each imported score's range.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tailgate.errors import DataInputError, PreregError
from tailgate.plans.reads import scales_for
from tailgate.prereg.pins import project_root
from tailgate.prereg.study import worse_of
from tailgate.protocol.design import exceedances_at
from tailgate.protocol.registered import ceiling
from tailgate.stats.lattice import ceiling_problem, detect_step, pile_up
from tailgate.stats.risk import exceedances, lattice_step_of, tie_diagnostic

if TYPE_CHECKING:
    from tailgate.generate.importer import ImportedRows

__all__ = [
    "ceiling_findings",
    "ceiling_refusal",
    "import_findings",
    "lattice_refusal",
    "tie_findings",
]


def import_findings(study: Any) -> list[str]:
    """Lines describing the registered import file; raises on a problem the file already shows.

    Relative paths resolve against the project root (the folder above ``preregistrations/``), as
    for the lock's pins and the workflow's jobs. Studies on another backend give no lines.
    """
    if study.backend != "import":
        return []
    from tailgate.generate.importer import inspect_import

    summary, checked = inspect_import(study, base_dir=project_root(study.path))
    spec = summary.spec
    total = sum(summary.rows.values())
    lines = [f"import {spec.path} ({spec.format}): {total} rows, every row valid"]
    if summary.key_mode == "integer":
        lines.append(f"  prompt keys (column {spec.prompt_id!r}): integers, used as prompt ids")
    else:
        lines.append(
            f"  prompt keys (column {spec.prompt_id!r}): text; prompt id = rank of the key among "
            f"the {summary.keys} sorted keys (original key kept in prompt_key)"
        )
    q = study.thresholds.headline if study.has_protocol else None
    for cond in study.conditions():
        name = cond["name"]
        rows, prompts = summary.rows[name], int(cond["prompts"])
        used = min(rows, prompts)
        if rows < prompts:
            note = (
                f"fewer than the {prompts} registered prompts: a shortfall, reported as a deviation"
            )
        elif rows > prompts:
            note = f"the {prompts} registered prompts with the smallest ids are used"
        else:
            note = "as registered"
        expected = (
            f"; {exceedances_at(used, float(q))} exceedances expected at q = {q:g}"
            if q is not None
            else ""
        )
        lines.append(f"  condition {name}: {rows} rows ({note}){expected}")
    if len(summary.rows) > 1:
        lines.append(f"  keys present in every condition: {summary.shared_keys} of {summary.keys}")
    for s in spec.scores:
        lo, hi = summary.score_range[s.scorer]
        hint = ""
        if not s.bounded and 0.0 <= lo and hi <= 1.0:
            hint = (
                "; every value lies in [0, 1]: register `bounded: true` if these are probabilities"
            )
        lines.append(
            f"  scorer {s.scorer} (file column {s.source!r} -> {s.column}): range "
            f"[{lo:.6g}, {hi:.6g}], bounded: {str(s.bounded).lower()}{hint}"
        )
    lines += tie_findings(study, checked, [(s.scorer, s.column) for s in spec.scores])
    lines += ceiling_findings(study, checked, [(s.scorer, s.column) for s in spec.scores])
    return lines


def ceiling_findings(study: Any, rows: ImportedRows, columns: list[tuple[str, str]]) -> list[str]:
    """A pile-up of lattice scores at the largest value of the bad tail without a registered
    ``protocol.thresholds.ceiling`` (:func:`tailgate.stats.lattice.pile_up` at the headline
    quantile): the advice to register it if the scale is capped there. Advice only: the fits
    censor the top grade when the ceiling is registered, never on detection."""
    if not study.has_protocol:
        return []
    if study.thresholds.ceiling is not None:
        return []
    head = study.thresholds.headline
    out = []
    for scorer, column in columns:
        sign = -1.0 if worse_of(study.scorer(scorer)) == "lower" else 1.0
        for cond in study.conditions():
            x = sign * rows.scores[column][rows.of(cond["name"])][: int(cond["prompts"])]
            share = pile_up(x, head) if x.size > 2 and detect_step(x) is not None else None
            if share is not None:
                top = sign * float(np.max(x))
                out.append(
                    f"  ceiling: scorer {scorer}, condition {cond['name']}: {100 * share:.0f}% of "
                    f"the exceedances at q = {head:g} sit at the extreme grade {top:g} (more than "
                    "at the grade next to it): if the scale is capped there, register "
                    f"protocol.thresholds.ceiling: {top:g} before the freeze (its cell is then "
                    "fitted as right-censored; unregistered, G4 rejects a capped tail)"
                )
                break
    return out


def ceiling_refusal(study: Any) -> str | None:
    """Why the registered ``protocol.thresholds.ceiling`` cannot hold for the imported scores,
    or None: a score of some condition beyond it, or a ceiling off the scores' lattice (the fit
    stage would refuse the same scores after the freeze). Studies that register no ceiling or do
    not import their scores give None."""
    thresholds = study.thresholds if study.has_protocol and study.backend == "import" else None
    if thresholds is None or thresholds.ceiling is None or thresholds.ties != "lattice":
        return None
    from tailgate.generate.importer import inspect_import

    step = thresholds.lattice_step
    summary, rows = inspect_import(study, base_dir=project_root(study.path))
    for s in summary.spec.scores:
        worse = worse_of(study.scorer(s.scorer))
        top = ceiling(study, "identity", worse)
        sign = -1.0 if worse == "lower" else 1.0
        for cond in study.conditions():
            x = sign * rows.scores[s.column][rows.of(cond["name"])][: int(cond["prompts"])]
            try:
                h = float(lattice_step_of(x, step))  # type: ignore[arg-type]
            except ValueError:
                return None  # not on a lattice: lattice_refusal names it
            problem = ceiling_problem(x, h, top)  # type: ignore[arg-type]
            if problem:
                return f"scorer {s.scorer}, condition {cond['name']}: {problem}"
    return None


def tie_findings(study: Any, rows: ImportedRows, columns: list[tuple[str, str]]) -> list[str]:
    """Ties at the band's quantiles in the imported scores (lattice data such as 0–4 grades),
    found before the freeze: with the registered threshold rule ``strict`` the values tied at the
    threshold are dropped and ξ̂ is biased. Scores on one lattice in every condition get the
    advice that works there, ``ties: lattice`` (the discretised likelihood, methods note P10);
    other tied scores ``ties: half_step`` (:func:`tailgate.stats.risk.tie_diagnostic`). The
    scores are read as the identity scale, turned round for a scorer registered
    ``worse: lower`` (its bad tail is the low one); a monotone transform keeps the ties. A study
    without the protocol fits no tail at the band's quantiles and gets none."""
    if not study.has_protocol:
        return []  # no protocol thresholds: nothing is fitted at the band's quantiles
    rule, step, band = study.thresholds.ties, study.thresholds.lattice_step, study.thresholds.band
    out = []
    for scorer, column in columns:
        hits = []
        steps = set()
        sign = -1.0 if worse_of(study.scorer(scorer)) == "lower" else 1.0
        for cond in study.conditions():
            x = sign * rows.scores[column][rows.of(cond["name"])]
            if x.size < 2:
                continue
            h = detect_step(x)
            steps.add(None if h is None else float(f"{h:.12g}"))
            for q in band:
                d = tie_diagnostic(x, q, "strict" if rule == "lattice" else rule)
                if d.fires:
                    hits.append((cond["name"], q, d, int(np.unique(x).size)))
                    break
        if not hits:
            continue
        name, q, d, distinct = hits[0]
        lattice = None not in steps and len(steps) == 1
        if rule == "lattice":
            advice = (
                "registered: ties: lattice (the discretised GPD likelihood; lattice step "
                + (f"{step:g}, registered)" if step is not None else f"{next(iter(steps))!s}")
                + (", detected)" if step is None and lattice else "")
            )
            if step is None and not lattice:
                advice += (
                    ": WARNING: no common lattice step detected in every condition; register "
                    "protocol.thresholds.lattice_step"
                )
        elif lattice:
            advice = (
                f"the scores lie on a lattice of step {next(iter(steps))!s}: register "
                "protocol.thresholds.ties: lattice before the freeze (the discretised GPD "
                "likelihood; half_step keeps the tied values but the continuous fit still biases "
                "ξ̂ downwards on a lattice)"
            )
        else:
            advice = (
                "registered: ties: half_step (the threshold moves half-way to the next lower value)"
                if rule == "half_step"
                else "register protocol.thresholds.ties: half_step before the freeze (with strict "
                "thresholds the values tied at the quantile are dropped and ξ̂ is biased)"
            )
        out.append(
            f"  ties: scorer {scorer} has tied values at a band quantile in {len(hits)} of "
            f"{len(study.conditions())} conditions (e.g. {name}: {d.at_threshold} values equal "
            f"the q = {q:g} quantile {d.quantile_value:g}; {distinct} distinct values in all): "
            + advice
        )
    return out


def lattice_refusal(study: Any) -> str | None:
    """Why the registered ``ties: lattice`` cannot be fitted on the imported scores, or None.

    A discretised GPD fit needs distinct exceedance values: the headline threshold must leave at
    least ``protocol.thresholds.min_levels`` in every condition and
    scorer (of the scores' bad tail; a monotone transform keeps the count, the cells on the
    logit scale being the images of the grades' cells), and the scores must lie on a lattice
    whose step is more than twice the logit's clipping ε where the logit scale is analysed (else
    two grades clip to one value). Studies that do not register ``ties: lattice`` or do not
    import their scores give None (their scores do not exist before the freeze)."""
    thresholds = study.thresholds if study.has_protocol and study.backend == "import" else None
    if thresholds is None or thresholds.ties != "lattice":
        return None

    from tailgate.generate.importer import inspect_import

    minimum, head, step, eps = (
        thresholds.min_levels,
        thresholds.headline,
        thresholds.lattice_step,
        study.epsilon,
    )
    summary, rows = inspect_import(study, base_dir=project_root(study.path))
    short = []
    for s in summary.spec.scores:
        sign = -1.0 if worse_of(study.scorer(s.scorer)) == "lower" else 1.0
        logit = "logit" in scales_for(study, s.scorer)
        for cond in study.conditions():
            x = sign * rows.scores[s.column][rows.of(cond["name"])][: int(cond["prompts"])]
            try:
                ex = exceedances(x, head, "lattice", step)
            except ValueError as exc:
                return f"scorer {s.scorer}, condition {cond['name']}: {exc}"
            if logit and not eps < 0.5 * ex.step:  # type: ignore[operator]
                return (
                    f"scorer {s.scorer}: transform.epsilon {eps:g} is not below half the lattice "
                    f"step {ex.step:g}, so the logit scale clips two grades to one value; "
                    "register a smaller transform.epsilon (e.g. 1.0e-6)"
                )
            levels = int(np.unique(ex.y).size)
            if levels < minimum:
                short.append((levels, s.scorer, cond["name"]))
    if not short:
        return None
    levels, scorer, name = min(short)
    return (
        f"the headline threshold q = {head:g} leaves {levels} distinct exceedance values "
        f"(scorer {scorer}, condition {name}; {len(short)} condition(s) below the minimum), "
        f"fewer than the {minimum} that a discretised GPD fit of the tail needs"
    )


def import_rows(study: Any, root: Path) -> dict[str, int]:
    """Rows per registered condition in the import file (the realised design's first fact)."""
    from tailgate.generate.importer import import_spec, read_rows

    names = [c["name"] for c in study.conditions()]
    try:
        spec = import_spec(study, base_dir=root)
        records, _ = read_rows(spec)
    except DataInputError as exc:
        raise PreregError(
            str(exc), file=str(study.path), field="data.import", fix="see the message above"
        ) from None
    counts = dict.fromkeys(names, 0)
    for r in records:
        c = str(r.get(spec.condition)) if spec.condition else names[0]
        if c in counts:
            counts[c] += 1
    return counts
