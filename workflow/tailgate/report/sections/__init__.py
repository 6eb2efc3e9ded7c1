"""The report sections of the pre-registered analyses (:mod:`tailgate.analyses`): one per kind.

An analysis kind computes and grades (:class:`tailgate.analyses.base.AnalysisKind`); its section
here presents what it stored — the paragraphs, tables and figures of ``Analysis <name>`` and its
columns of the per-condition cards (:class:`~tailgate.report.sections.base.KindSection`).
``section_of(kind)`` finds a kind's section; the module is imported when a report first draws that
kind. To add a kind: implement its :class:`~tailgate.report.sections.base.KindSection` in a module
of this package and add it to :data:`MODULES`.
"""

from __future__ import annotations

import importlib

from .base import Block, FigureBlock, KindSection, Paragraph

__all__ = ["MODULES", "Block", "FigureBlock", "KindSection", "Paragraph", "section_of"]

#: kind → (module, attribute) of its :class:`KindSection`
MODULES: dict[str, tuple[str, str]] = {
    "dominance": ("tailgate.report.sections.dominance", "DOMINANCE"),
    "severity": ("tailgate.report.sections.severity", "SEVERITY"),
    "perturbation": ("tailgate.report.sections.perturbation", "PERTURBATION"),
    "percentiles": ("tailgate.report.sections.percentiles", "PERCENTILES"),
}


def section_of(kind: str) -> KindSection | None:
    """The report section of analysis kind ``kind`` (None for a kind the report does not know)."""
    if kind not in MODULES:
        return None
    module, attribute = MODULES[kind]
    found: KindSection = getattr(importlib.import_module(module), attribute)
    if found.kind != kind:
        raise RuntimeError(f"{module}.{attribute} draws '{found.kind}', not '{kind}'")
    return found
