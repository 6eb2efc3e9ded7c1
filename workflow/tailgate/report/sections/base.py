"""What every analysis kind's report section is made of (see :mod:`tailgate.report.sections`).

A section is a list of blocks: a :class:`Paragraph`, a :class:`FigureBlock` or a
:class:`tailgate.report.tables.Table`; :class:`KindSection` draws them, and a kind's columns of the
per-condition cards, from the statistics its analysis stored (``statistics.json``) — nothing
else, so that the audit can re-draw every figure's content from the same file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Block", "FigureBlock", "KindSection", "Paragraph", "ci_text"]


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of the report section (``css``: None, ``"note"``, ``"alert"`` or ``"ok"``)."""

    text: str
    css: str | None = None


@dataclass(frozen=True)
class FigureBlock:
    """A matplotlib figure, embedded in the HTML report."""

    figure: Any
    caption: str
    alt: str


#: A report block: a :class:`Paragraph`, a :class:`FigureBlock` or a
#: :class:`tailgate.report.tables.Table`.
Block = Any


def ci_text(low: float | None, high: float | None, digits: int = 3) -> str:
    """A confidence interval as ``[low, high]`` (``—`` when either end is missing)."""
    if low is None or high is None:
        return "—"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


class KindSection(ABC):
    """The report's face of one analysis kind (``analyses.<name>.kind``): its section's title,
    blocks and card columns, drawn from the analysis's stored statistics only."""

    kind: str = ""
    title: str = ""

    @abstractmethod
    def blocks(self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]) -> list[Block]:
        """The analysis's section of the report (paragraphs, tables, figures)."""

    @abstractmethod
    def card_columns(
        self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]
    ) -> dict[str, dict[str, str]]:
        """Columns of the per-condition cards: header → condition → cell text (its headline
        statistic; conditions it does not cover are left blank)."""
