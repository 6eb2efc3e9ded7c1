"""The registry of analysis kinds and the checks shared by every kind.

``KINDS[kind]`` is the :class:`tailgate.analyses.base.AnalysisKind` that implements
``analyses.<name>.kind``. Stages, the report and the audit look kinds up here and never
special-case one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tailgate.errors import PreregError
from tailgate.prereg.study import Study

from .base import AnalysisKind, Problem
from .dominance_kind import DOMINANCE
from .percentiles_kind import PERCENTILES
from .perturbation_kind import PERTURBATION
from .severity_kind import SEVERITY

__all__ = ["KINDS", "analysis_spec", "check_analyses", "kind_of", "problems_of", "registered"]

KINDS: dict[str, AnalysisKind] = {
    DOMINANCE.kind: DOMINANCE,
    SEVERITY.kind: SEVERITY,
    PERTURBATION.kind: PERTURBATION,
    PERCENTILES.kind: PERCENTILES,
}


def registered(study: Study) -> dict[str, dict[str, Any]]:
    """The registered analyses, name → spec (sorted by name, as in the canonical document)."""
    return {name: study.data["analyses"][name] for name in sorted(study.data.get("analyses", {}))}


def analysis_spec(study: Study, name: str) -> dict[str, Any]:
    """The spec of analysis ``name``, or :class:`PreregError` naming the registered ones."""
    specs = study.data.get("analyses", {})
    if name not in specs:
        raise PreregError(
            f"no analysis named '{name}' is registered (registered: "
            f"{', '.join(sorted(specs)) or 'none'})",
            file=str(study.path),
            field=f"analyses.{name}",
            fix="register the analysis under 'analyses:' (an amendment if frozen) or use a "
            "registered name",
        )
    return specs[name]


def kind_of(spec: Mapping[str, Any]) -> AnalysisKind:
    """The kind implementing ``spec`` (the schema admits only registered kinds)."""
    return KINDS[str(spec["kind"])]


def problems_of(data: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], Problem]]:
    """Every cross-field problem of the ``analyses`` block of a canonical study document, as
    (path from the document root, problem)."""
    out = []
    for name in sorted(data.get("analyses", {})):
        spec = data["analyses"][name]
        kind = KINDS.get(str(spec.get("kind")))
        if kind is None:
            out.append(
                (("analyses", name, "kind"),
                 Problem((), f"unknown analysis kind '{spec.get('kind')}'",
                         f"use one of {', '.join(sorted(KINDS))}"))
            )  # fmt: skip
            continue
        for p in kind.validate(spec, data):
            out.append((("analyses", name, *p.path), p))
    return out


def check_analyses(data: Mapping[str, Any], path: str | Path, doc: Any = None) -> None:
    """Raise :class:`PreregError` for the first problem of the ``analyses`` block (file, line,
    field, fix). ``doc`` is the :class:`tailgate.prereg.strict_yaml.Located` document, for
    line numbers; without it the file is re-read."""
    from tailgate.prereg.strict_yaml import field_name, load_yaml

    problems = problems_of(data)
    if not problems:
        return
    where, p = problems[0]
    if doc is None:
        try:
            doc = load_yaml(path)
        except PreregError:
            doc = None
    line = doc.line_of(where) if doc is not None else None
    raise PreregError(p.message, file=str(path), line=line, field=field_name(where), fix=p.fix)
