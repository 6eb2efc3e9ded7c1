"""The study report: tables, figures, self-contained HTML and Markdown.

``render(verdict, fits, power, out_html, out_md)`` writes ``results/<study>/report.html`` and
``report.md`` from the structures documented in :mod:`tailgate.report.model`;
:mod:`tailgate.report.figures` writes standalone PNG figures (Figs 2–5 of Zhou (2026)).
"""

from .model import ReportInputError
from .render import RenderedReport, render

__all__ = ["RenderedReport", "ReportInputError", "render"]
