"""The study report: tables, figures, self-contained HTML and Markdown.

``render(verdict, fits, power, out_html, out_md)`` writes ``results/<study>/report.html`` and
``report.md`` from the structures documented in :mod:`tailgate.protocol.documents`;
:mod:`tailgate.report.figures` writes standalone PNG figures (Figs 2–5 of Zhou (2026));
:mod:`tailgate.report.document` is the HTML and Markdown body being built, and
:mod:`tailgate.report.sections` the section of each pre-registered analysis kind (the report sits
above :mod:`tailgate.analyses`: a kind computes, its section here presents).
The names below load on first use, so that a stage importing a light module of this package
(e.g. :mod:`tailgate.report.content`) does not load matplotlib.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RenderedReport", "ReportInputError", "render"]


def __getattr__(name: str) -> Any:
    if name == "ReportInputError":
        from .model import ReportInputError

        return ReportInputError
    if name in ("RenderedReport", "render"):
        import importlib

        module = importlib.import_module("tailgate.report.render")
        # the function, not the submodule of the same name that the import bound here
        globals().update(render=module.render, RenderedReport=module.RenderedReport)
        return globals()[name]
    raise AttributeError(f"module 'tailgate.report' has no attribute {name!r}")
