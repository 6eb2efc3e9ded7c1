"""The report as it is built: parallel HTML and Markdown bodies (:class:`Document`).

Headings (with the table of contents), paragraphs, tables, collapsible blocks and figures, each
text passing through :func:`tailgate.report.glossary.cite`; figures are drawn in batches of at
most :data:`FIGURE_BATCH` (:func:`tailgate.report.figures.png_all`) and embedded as base64 PNGs
carrying the digest of what they plot (:mod:`tailgate.report.content`).
"""

from __future__ import annotations

import base64
import dataclasses
import html
import re
from typing import Any

from . import figures, tables
from .content import content_of, digest
from .glossary import cite

__all__ = ["CSS", "FIGURE_BATCH", "Document"]

#: the report's inline style sheet
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{font-size:1.1em;margin-top:1.4em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:1em 0;font-size:.85em}
caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.note{font-size:.85em;color:#555;margin-top:-.6em}
td.pass{background:#eaf7ea}td.fail{background:#fdecea}
.sub{font-size:.8em;color:#555}
.alert{border-left:4px solid #d62728;background:#fdecea;padding:.5em 1em}
.ok{border-left:4px solid #2ca02c;background:#eaf7ea;padding:.5em 1em}
.answer{font-size:1.15em}
figure{margin:1em 0}figure img{max-width:100%;height:auto}figcaption{font-size:.85em;color:#555}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:.5em 1em}
.grid figure{margin:.3em 0}
details{margin:.6em 0;border:1px solid #ddd;border-radius:4px;padding:.2em .8em}
summary{cursor:pointer;font-weight:600;padding:.2em 0}
.toc{font-size:.9em}dt{font-weight:600;margin-top:.5em}dd{margin-left:1.5em}
.verdict-PASS{color:#2ca02c;font-weight:700}
.verdict-KILL,.verdict-FAIL{color:#d62728;font-weight:700}
@media (max-width:900px){body{margin:1em auto}.grid{grid-template-columns:1fr}}
"""


#: figures a report holds undrawn at most: they are drawn as a batch, split between processes
#: (:func:`figures.png_all`), and then let go
FIGURE_BATCH = 32


class Document:
    """Parallel HTML and Markdown bodies of the report; every text passes through :func:`cite`."""

    def __init__(self) -> None:
        self.html: list[str] = []
        self.md: list[str] = []
        self.n_figures = 0
        self.n_tables = 0
        self.sections: list[tuple[str, str]] = []
        #: figures whose images are still to be drawn: (index in ``html``, figure, the HTML
        #: before and after the image's data)
        self._figures: list[tuple[int, Any, str, str]] = []

    def heading(self, text: str, level: int = 2) -> None:
        text = cite(text)
        if level == 2:
            anchor = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
            self.sections.append((anchor, text))
            self.html.append(f"<h2 id='{anchor}'>{html.escape(text)}</h2>")
        else:
            self.html.append(f"<h{level}>{html.escape(text)}</h{level}>")
        self.md.append(f"{'#' * level} {text}\n")

    def para(self, text: str, css: str | None = None) -> None:
        text = cite(text)
        cls = f" class='{css}'" if css else ""
        self.html.append(f"<p{cls}>{html.escape(text)}</p>")
        self.md.append(f"{'> ' if css == 'alert' else ''}{text}\n")

    def free(self, label: str, text: str) -> None:
        """``label: text`` where ``text`` is registered free text: one line, escaped in HTML,
        inert in Markdown (:func:`tailgate.report.tables.inert_markdown`), never passed through
        :func:`cite`."""
        one = html.escape(" ".join(text.split()))
        self.html.append(f"<p><b>{html.escape(label)}</b>: {one}</p>")
        self.md.append(f"**{tables.inert_markdown(label)}**: {tables.inert_markdown(text)}\n")

    def raw(self, html_text: str, md_text: str | None = None) -> None:
        """Pre-escaped HTML (and its Markdown, if any)."""
        self.html.append(html_text)
        if md_text is not None:
            self.md.append(md_text)

    def table(self, table: tables.Table) -> None:
        table = dataclasses.replace(
            table,
            title=cite(table.title),
            header=tuple(cite(h) for h in table.header),
            rows=tuple(
                tuple(c if j in table.free else cite(c) for j, c in enumerate(row))
                for row in table.rows
            ),
            note=cite(table.note),
        )
        self.html.append(table.html())
        self.md.append(table.markdown())
        self.n_tables += 1

    def figure(self, fig: Any, caption: str, alt: str) -> None:
        """A figure; its image is drawn by :meth:`draw_figures`, with all the others."""
        caption = cite(caption)
        content = content_of(fig)
        plotted = "" if content is None else f"data-content='{digest(content)}' "
        head = f"<figure><img alt='{html.escape(alt, quote=True)}' {plotted}"
        tail = f"'/><figcaption>{html.escape(caption)}</figcaption></figure>"
        self._figures.append((len(self.html), fig, head, tail))
        self.html.append("")  # the figure's place, filled by draw_figures
        self.md.append(f"*Figure ({alt}), embedded in report.html: {caption}*\n")
        self.n_figures += 1
        if len(self._figures) >= FIGURE_BATCH:  # a study of many conditions: bounded memory
            self.draw_figures()

    def draw_figures(self) -> None:
        """Put every figure's PNG into the HTML: drawn as one batch (:func:`figures.png_all`)."""
        images = figures.png_all([fig for _, fig, _, _ in self._figures])
        for (at, _, head, tail), data in zip(self._figures, images, strict=True):
            encoded = base64.b64encode(data).decode("ascii")
            self.html[at] = f"{head}src='data:image/png;base64,{encoded}{tail}"
        self._figures = []

    def open_details(self, summary: str, is_open: bool = False) -> None:
        """A collapsible block (HTML ``<details>``); in Markdown a bold line."""
        summary = cite(summary)
        flag = " open" if is_open else ""
        self.html.append(f"<details{flag}><summary>{html.escape(summary)}</summary>")
        self.md.append(f"**{summary}**\n")

    def close_details(self) -> None:
        self.html.append("</details>")
