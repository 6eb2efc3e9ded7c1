"""The report sections of the pre-registered analyses (:mod:`tailgate.analyses`): one per kind.

An analysis kind computes and grades (:class:`tailgate.analyses.base.AnalysisKind`); its section
here presents what it stored — the paragraphs, tables and figures of ``Analysis <name>`` and its
columns of the per-condition cards (:class:`~tailgate.report.sections.base.KindSection`).
``section_of(kind)`` finds a kind's section; the module is imported when a report first draws that
kind. A kind's section is the module of this package named after the kind, defining it in upper
case (``dominance.DOMINANCE``), for every kind of :data:`tailgate.analyses.registry.KIND_NAMES`.
"""

from __future__ import annotations

import importlib

from tailgate.analyses.registry import KIND_NAMES

from .base import Block, FigureBlock, KindSection, Paragraph

__all__ = ["Block", "FigureBlock", "KindSection", "Paragraph", "section_of"]


def section_of(kind: str) -> KindSection | None:
    """The report section of analysis kind ``kind`` (None for a kind the report does not know)."""
    if kind not in KIND_NAMES:
        return None
    module, attribute = f"tailgate.report.sections.{kind}", kind.upper()
    found: KindSection = getattr(importlib.import_module(module), attribute)
    if found.kind != kind:
        raise RuntimeError(f"{module}.{attribute} draws '{found.kind}', not '{kind}'")
    return found
