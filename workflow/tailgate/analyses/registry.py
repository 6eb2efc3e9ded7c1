"""The registry of analysis kinds and the checks shared by every kind.

``KINDS[kind]`` is the :class:`tailgate.analyses.base.AnalysisKind` that implements
``analyses.<name>.kind``. Stages, the report and the audit look kinds up here and never
special-case one.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tailgate.errors import PreregError
from tailgate.prereg.schema import load_schema
from tailgate.prereg.strict_yaml import field_name, load_yaml
from tailgate.prereg.validated import Study

from .base import AnalysisKind, Problem

__all__ = [
    "KINDS",
    "KIND_NAMES",
    "analysis_spec",
    "check_analyses",
    "kind_of",
    "problems_of",
]

#: the analysis kinds, listed once: the schema's enum of ``analyses.<name>.kind``. Each is a folder
#: of this package whose ``kind`` module defines it in upper case (``dominance.kind.DOMINANCE``),
#: its report section has its name (:func:`tailgate.report.sections.section_of`) and its
#: parameters are the schema's ``$defs/analysis_<kind>`` (a test holds each kind to the three)
KIND_NAMES: tuple[str, ...] = tuple(
    load_schema()["$defs"]["analysis"]["properties"]["kind"]["enum"]
)


class _Kinds(Mapping[str, AnalysisKind]):
    """``KINDS[kind]``: a kind's module is imported when a study first uses it, so a job of a
    study that registers no dominance analysis never loads numba, and one that registers none
    loads no analysis statistics at all (a third of every job's start-up before: 1.0 of 2.8 s
    on the demo's jobs)."""

    def __getitem__(self, kind: str) -> AnalysisKind:
        if kind not in KIND_NAMES:
            raise KeyError(kind)
        module, attribute = f"tailgate.analyses.{kind}.kind", kind.upper()
        found: AnalysisKind = getattr(importlib.import_module(module), attribute)
        if found.kind != kind:
            raise RuntimeError(f"{module}.{attribute} implements '{found.kind}', not '{kind}'")
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(KIND_NAMES)

    def __len__(self) -> int:
        return len(KIND_NAMES)


KINDS: Mapping[str, AnalysisKind] = _Kinds()


def analysis_spec(study: Study, name: str) -> dict[str, Any]:
    """The spec of analysis ``name``, or :class:`PreregError` naming the registered ones."""
    specs = study.analyses()
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
    for name, spec in sorted(data.get("analyses", {}).items()):
        for p in kind_of(spec).validate(spec, data):
            out.append((("analyses", name, *p.path), p))
    return out


def check_analyses(data: Mapping[str, Any], path: str | Path, doc: Any = None) -> None:
    """Raise :class:`PreregError` for the first problem of the ``analyses`` block (file, line,
    field, fix). ``doc`` is the :class:`tailgate.prereg.strict_yaml.Located` document, for
    line numbers; without it the file is re-read."""
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
