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

from typing import TYPE_CHECKING, Any

from tailgate.prereg.design import exceedances_at
from tailgate.prereg.pins import project_root

if TYPE_CHECKING:
    from tailgate.generate.importer import ImportedRows

__all__ = ["import_findings", "tie_findings"]


def import_findings(study: Any) -> list[str]:
    """Lines describing the registered import file; raises on a problem the file already shows.

    Relative paths resolve against the project root (the folder above ``preregistrations/``), as
    for the lock's pins and the workflow's jobs. Studies on another backend give no lines.
    """
    if study.data["data"]["backend"] != "import":
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
    q = study.protocol["thresholds"]["headline"] if study.has_protocol else None
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
    return lines


def tie_findings(study: Any, rows: ImportedRows, columns: list[tuple[str, str]]) -> list[str]:
    """Ties at the band's quantiles in the imported scores (lattice data such as 0–4 grades),
    found before the freeze: with the registered threshold rule ``strict`` the values tied at the
    threshold are dropped and ξ̂ is biased, so the line suggests ``ties: half_step``
    (:func:`tailgate.stats.risk.tie_diagnostic`). The scores are read as the identity scale,
    turned round for a scorer registered ``worse: lower`` (its bad tail is the low one); a
    monotone transform keeps the ties."""
    import numpy as np

    from tailgate.stats.risk import tie_diagnostic

    rule = study.protocol["thresholds"].get("ties", "strict")
    band = [float(q) for q in study.protocol["thresholds"]["band"]]
    out = []
    from tailgate.prereg.study import worse_of

    for scorer, column in columns:
        hits = []
        sign = -1.0 if worse_of(study.scorer(scorer)) == "lower" else 1.0
        for cond in study.conditions():
            x = sign * rows.scores[column][rows.of(cond["name"])]
            if x.size < 2:
                continue
            for q in band:
                d = tie_diagnostic(x, q, rule)
                if d.fires:
                    hits.append((cond["name"], q, d, int(np.unique(x).size)))
                    break
        if not hits:
            continue
        name, q, d, distinct = hits[0]
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
