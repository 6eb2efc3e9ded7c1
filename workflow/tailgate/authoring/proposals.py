"""What ``tailgate init`` reads from an import file's scores and proposes from them (marked
REVIEW in the written registration): each score column's values (:func:`numeric_values`), the
G3 and tie warnings for the registered design (:func:`g3_and_tie_notes`), ``ties: lattice`` for
scores on a lattice (:func:`propose_lattice`; methods note P10) and the G1 and G2 tolerances of
every analysed scale from the pooled within-condition s.d. (:func:`propose_tolerances`).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from tailgate.authoring.importcheck import ceiling_findings, tie_findings
from tailgate.protocol.design import exceedances_at
from tailgate.stats.gpd import MIN_LEVELS
from tailgate.stats.lattice import detect_step

__all__ = [
    "PROPOSED_SD_MULTIPLES",
    "TIES_LINE",
    "g3_and_tie_notes",
    "is_constant",
    "load_text",
    "numeric_values",
    "pooled_sd",
    "propose_lattice",
    "propose_tolerances",
]


def numeric_values(rows: list[dict[str, Any]], column: str, unit: str) -> tuple[list[float], str]:
    """The column's values when every row holds a finite number; else no values and why the
    column is not a score (the rows that are not numbers, or text), for init to say."""
    values: list[float] = []
    missing: list[int] = []
    text: list[tuple[int, Any]] = []
    for r in rows:
        v = r.get(column)
        x = None
        if not isinstance(v, bool) and v is not None and v != "":
            try:
                x = float(v)
            except (TypeError, ValueError):
                text.append((r["__row__"], v))
                continue
        if x is None or not math.isfinite(x):
            missing.append(r["__row__"])
            continue
        values.append(x)
    if not missing and not text:
        return values, ""
    n = len(rows)
    if text and len(text) * 2 > n:
        return [], f"text, not a score ({unit} {text[0][0]}: {str(text[0][1])[:40]!r})"
    parts = []
    if missing:
        shown = ", ".join(map(str, missing[:3])) + (" …" if len(missing) > 3 else "")
        parts.append(f"{len(missing)} of {n} {unit}s are empty, NaN or infinite ({unit}s {shown})")
    if text:
        parts.append(
            f"{len(text)} of {n} {unit}s are not numbers ({unit} {text[0][0]}: "
            f"{str(text[0][1])[:40]!r})"
        )
    return [], (
        "; ".join(parts) + ": a score column needs a finite number in every row. Fix: drop or "
        "rescore those rows, then run init again"
    )


def is_constant(values: list[float]) -> bool:
    """Whether a column holds one value (up to the float noise of its own magnitude): a
    constant score has no tail to compare, and its s.d. would be noise."""
    lo, hi = min(values), max(values)
    return hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi))


def load_text(text: str, study: str, root: Path | None = None) -> Any:
    """Load ``text`` as ``preregistrations/<study>.yaml`` of a scratch folder (the full loader)."""
    from tailgate.plans.registration import load

    with tempfile.TemporaryDirectory(prefix="tailgate-init-") as tmp:
        path = Path(tmp) / "preregistrations" / f"{study}.yaml"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        loaded = load(path)
        if root is not None:
            from tailgate.generate.importer import inspect_import

            inspect_import(loaded, base_dir=root)
        return loaded


def g3_and_tie_notes(text: str, study: str, root: Path) -> list[str]:
    """Warnings init prints for the written registration: G3 (n_exc ≥ N*) failing for every pair
    at the headline threshold or the whole band, and ties in the scores that call for
    ``protocol.thresholds.ties: half_step``
    (:func:`tailgate.authoring.importcheck.tie_findings`), and a pile-up at a capped top grade
    that calls for ``protocol.thresholds.ceiling``
    (:func:`tailgate.authoring.importcheck.ceiling_findings`)."""
    from tailgate.generate.importer import inspect_import

    loaded = load_text(text, study)
    summary, checked = inspect_import(loaded, base_dir=root)
    n_star = loaded.rules.min_exceedances
    smallest = min(min(summary.rows.values()), loaded.sample_cap)
    head, band = loaded.thresholds.headline, loaded.thresholds.band
    notes = []
    at_head, best = exceedances_at(smallest, head), exceedances_at(smallest, min(band))
    if best < n_star:
        notes.append(
            f"G3 cannot pass: the smallest condition ({smallest} rows) gives at most {best} "
            f"exceedances in the band (q = {min(band):g}), below N* = {n_star} "
            "(protocol.min_exceedances), so every pair fails G3 at every threshold and H1 cannot "
            "PASS: import more rows, or REVIEW min_exceedances and the band"
        )
    elif at_head < n_star:
        notes.append(
            f"G3 fails at the headline q = {head:g}: the smallest condition gives {at_head} "
            f"exceedances there, below N* = {n_star}; only lower thresholds of the band can pass"
        )
    columns = [(s.scorer, s.column) for s in summary.spec.scores]
    notes += [line.strip() for line in tie_findings(loaded, checked, columns)]
    notes += [line.strip() for line in ceiling_findings(loaded, checked, columns)]
    return notes


TIES_LINE = "    # ties: strict           #"
SE_RULE_LINE = "    # tolerance_rule: fixed  #"


def propose_lattice(
    text: str, rows: list[dict[str, Any]], scores: list[tuple[str, str, bool, str | None]]
) -> tuple[str, list[str]]:
    """``protocol.thresholds.ties: lattice`` written (marked REVIEW) when every score column
    lies on a lattice (judge grades, Likert items, counts, probability grades): the rule under
    which the fits use the discretised likelihood (methods note P10). On the logit scale of
    bounded scores each exceedance keeps the image of its grade's cell, so the rule fits there
    too. Scores with fewer distinct values than a discretised fit needs (0/1 outcomes) get none."""
    steps = []
    for _, column, *_ in scores:
        values, why = numeric_values(rows, column, "row")
        few = why or np.unique(np.asarray(values, float)).size < MIN_LEVELS
        step = None if few else detect_step(np.asarray(values, float))
        if step is None:
            return text, []
        steps.append(f"{column} (step {step:g})")
    if not steps or TIES_LINE not in text:
        return text, []
    line = "    ties: lattice            # REVIEW: scores on a lattice; discretised GPD fits"
    text = text.replace(TIES_LINE, line + "\n" + TIES_LINE, 1)
    # G5's fixed tolerance has no nominal rate on a lattice; the s.e. rule holds it (P10)
    text = text.replace(SE_RULE_LINE, "    tolerance_rule: se       # REVIEW: G5 on a lattice;", 1)
    return text, [
        f"ties: lattice is written: {', '.join(steps)} lie on a lattice, whose tails the "
        "discretised GPD likelihood fits (REVIEW it); design and freeze refuse a headline "
        "threshold that leaves fewer distinct exceedance values than protocol.thresholds."
        "min_levels (absent: 30); stability.tolerance_rule: se is written with it, the rule "
        "under which G5 keeps its size on a lattice"
    ]


#: the G1 and G2 tolerances init proposes, as multiples of a scale's pooled s.d.
PROPOSED_SD_MULTIPLES = {"mean": 0.1, "tvar": 0.2}


def pooled_sd(groups: list[list[float]]) -> float:
    """The pooled within-group standard deviation, sqrt(Σ (n_g − 1) s_g² / (N − G))."""
    num = sum((len(g) - 1) * float(np.var(g, ddof=1)) for g in groups if len(g) > 1)
    dof = sum(len(g) - 1 for g in groups if len(g) > 1)
    return math.sqrt(num / dof) if dof > 0 else float("nan")


def propose_tolerances(
    text: str,
    study: str,
    rows: list[dict[str, Any]],
    cond_col: str | None,
    scores: list[tuple[str, str, bool, str | None]],
) -> tuple[str, int]:
    """Write ``protocol.tolerances.scales``: for every scorer and scale the run analyses,
    :data:`PROPOSED_SD_MULTIPLES` of the scale's pooled within-condition s.d. (the scale's own
    units) of the scores that carry information (bounded scores strictly inside the ε clip),
    each marked REVIEW, and ``protocol.tolerances.proposed: data``, so the lock records and the
    report says that they came from the data; return the text and the number of entries."""
    from tailgate.data.transform import transform_scores
    from tailgate.plans.reads import scales_for

    loaded = load_text(text, study)
    eps = loaded.epsilon
    lines = []
    for name, column, bounded, *_ in scores:
        groups: dict[str, list[float]] = {}
        for r in rows:
            value = float(r[column])
            # bounded scores at the ε clip carry no information about spread: on the logit
            # scale a mass of clipped zeros sets the s.d. by the clip (1.4 s.d. of the rest)
            if bounded and not eps < value < 1.0 - eps:
                continue
            groups.setdefault(str(r.get(cond_col) if cond_col else ""), []).append(value)
        for scale in scales_for(loaded, name):
            values = [
                transform_scores(np.asarray(g, dtype=float), scale, epsilon=eps).values.tolist()
                for g in groups.values()
            ]
            sd = pooled_sd(values)
            spread = max((abs(v) for g in values for v in g), default=0.0)
            if not (math.isfinite(sd) and sd > 1e-9 * max(1.0, spread)):
                continue  # a constant scale: its s.d. would be float noise, not a design
            tol = {k: float(f"{m * sd:.2g}") for k, m in PROPOSED_SD_MULTIPLES.items()}
            lines.append(
                f"      {name}/{scale}: {{mean: {tol['mean']:g}, tvar: {tol['tvar']:g}}}"
                f"   # REVIEW: pooled s.d. {sd:.3g}"
            )
    if not lines:
        return text, 0
    anchor = "    tvar: 0.20\n"
    block = (
        "    proposed: data         # init proposed the scales' tolerances from the data\n"
        "    scales:                # REVIEW: proposed by init, in each scale's units\n"
        + "\n".join(lines)
        + "\n"
    )
    return text.replace(anchor, anchor + block, 1), len(lines)
