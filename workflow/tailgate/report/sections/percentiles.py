"""The report section of analysis kind ``percentiles`` (Guo et al. (2025),
:mod:`tailgate.analyses.percentiles`): the per-token CE summaries, standardized percentiles,
concordance and selection tables, the percentile fan and the reshaping histogram."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tailgate.analyses.percentiles import statistics as PC
from tailgate.report.content import plots
from tailgate.report.figures import LABEL_PT, legend_outside, new_figure
from tailgate.report.tables import Table, fmt

from .base import Block, FigureBlock, KindSection, Paragraph, ci_text

__all__ = ["PERCENTILES", "PercentilesSection"]


class PercentilesSection(KindSection):
    """Guo et al. (2025)'s section of the report (module docstring)."""

    kind = "percentiles"
    title = "Percentile cross-entropy, concordance and selection (Guo et al. (2025))"

    def blocks(self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]) -> list[Block]:
        st = stats["settings"]
        names = list(PC.summary_names(st["percentiles"]))
        summ = stats["summaries"]
        return [
            Paragraph(
                f"Guo et al. (2025) on the per-token losses of scorer {st['scorer']}: mean and "
                f"percentiles (numpy linear) of {len(st['conditions'])} conditions in registered "
                f"order; {st['level']:.0%} CIs from {st['resamples']} {st['resampling']} "
                "resamples of sequences (not tokens). Concordance π(S): share of condition pairs "
                "on which every summary of S agrees in sign (ties count against, methods note C)."
            ),
            Table(
                f"{name}: per-token CE summaries",
                ("condition", "tokens", *names),
                tuple(
                    (
                        c,
                        str(v["tokens"]),
                        *(f"{fmt(v['values'][n])} {ci_text(*v['ci'][n])}" for n in names),
                    )
                    for c, v in summ.items()
                ),
            ),
            Table(
                f"{name}: standardized percentiles z = (P − P50)/(P75 − P25) "
                "(Guo et al. (2025), App. F)",
                ("condition", *names[1:]),
                tuple(
                    (c, *(fmt(v["standardized"].get(n)) for n in names[1:]))
                    for c, v in summ.items()
                ),
            ),
            Table(
                f"{name}: concordance",
                ("set", "summaries", "π", "CI", "disagreeing pairs"),
                tuple(
                    (
                        k,
                        ", ".join(v["summaries"]),
                        fmt(v["statistic"]),
                        ci_text(*v["ci"]),
                        "; ".join(f"{a}–{b}" for a, b in v["disagreeing"]) or "none",
                    )
                    for k, v in stats["concordance"].items()
                ),
            ),
            Table(
                f"{name}: selection (argmin of each summary)",
                ("summary", "selects", "Spearman [CI]", "Kendall [CI]"),
                tuple(
                    (n, stats["selection"]["selected"][n], *_corr_cells(stats, n)) for n in names
                ),
            ),
            FigureBlock(
                _fan_figure(st, summ),
                f"{name}: percentile trajectories across the "
                "registered order (p10…p99 as a fan, mean dashed).",
                f"fan {name}",
            ),
            FigureBlock(
                _reshape_figure(st, stats["first_last"]),
                f"{name}: per-token CE of the first and last condition (log axis): the "
                "reshaping view.",
                f"reshaping {name}",
            ),
        ]

    def card_columns(
        self, name: str, spec: Mapping[str, Any], stats: Mapping[str, Any]
    ) -> dict[str, dict[str, str]]:
        summ = stats["summaries"]
        return {
            f"{name}: mean / p50 / p95 CE": {
                c: " / ".join(fmt(v["values"].get(n)) for n in ("mean", "p50", "p95"))
                for c, v in summ.items()
            }
        }


def _corr_cells(stats: Mapping[str, Any], n: str) -> tuple[str, str]:
    r = stats["selection"]["correlations"].get(n)
    if r is None:
        return "—", "—"
    lo, hi = r["spearman_ci"] or (None, None)
    klo, khi = r["kendall_ci"] or (None, None)
    return f"{fmt(r['spearman'])} {ci_text(lo, hi)}", f"{fmt(r['kendall'])} {ci_text(klo, khi)}"


@plots("percentiles fan")
def _fan_figure(st: Mapping[str, Any], summ: Mapping[str, Any]) -> Any:
    fig = new_figure(7.0, 3.8)
    ax = fig.add_subplot()
    x = np.arange(len(st["conditions"]))
    names = list(PC.summary_names(st["percentiles"]))[1:]
    for n in names:
        ax.plot(x, [summ[c]["values"][n] for c in st["conditions"]], "-", lw=1, label=n)
    ax.plot(x, [summ[c]["values"]["mean"] for c in st["conditions"]], "k--", lw=1.5, label="mean")
    ax.set_xticks(
        x, st["conditions"], fontsize=LABEL_PT, rotation=30, rotation_mode="anchor", ha="right"
    )
    ax.set_yscale("log")
    ax.set_ylabel("per-token CE")
    handles = ax.get_legend_handles_labels()[0]
    legend_outside(fig, [*handles[-2::-1], handles[-1]])  # top to bottom as the lines, then mean
    return fig


@plots("percentiles reshaping")
def _reshape_figure(st: Mapping[str, Any], hist: Mapping[str, Any]) -> Any:
    """Shares of tokens per log-spaced CE bin of the first and last condition; the x axis spans
    the occupied bins (one empty bin either side), not the whole range of the stored edges."""
    fig = new_figure(7.0, 3.4)
    ax = fig.add_subplot()
    edges = np.asarray(hist["edges"])
    occupied = np.zeros(edges.size - 1, dtype=bool)
    for key, label in (("first", st["conditions"][0]), ("last", st["conditions"][-1])):
        counts = np.asarray(hist[key], dtype=float)
        occupied |= counts > 0
        ax.stairs(counts / max(counts.sum(), 1.0), edges, label=label)
    ax.set_xscale("log")
    if occupied.any():
        used = np.flatnonzero(occupied)
        ax.set_xlim(edges[max(used[0] - 1, 0)], edges[min(used[-1] + 2, edges.size - 1)])
    ax.set_xlabel("per-token cross-entropy (nats, log scale)")
    ax.set_ylabel("share of tokens")
    legend_outside(fig)
    return fig


PERCENTILES = PercentilesSection()
