"""The statistics of a ``percentiles`` analysis (Guo et al. (2025); methods note C): the mean
and percentiles of each condition's per-token losses with sequence-bootstrap CIs, the concordance
of each registered summary set, the selection by each summary and the reshaping histograms."""

from __future__ import annotations

from typing import Any

import numpy as np

from tailgate.errors import InputError
from tailgate.stats.stored import finite_or_none

from ..base import AnalysisResult, AnalysisRun
from . import statistics as PC
from .inputs import read_tokens, tokens_from_rows
from .spec import settings, summary_names_of

__all__ = ["HIST_EDGES", "analyse"]


def analyse(run: AnalysisRun) -> AnalysisResult:
    """The summaries of each condition's per-token losses with their sequence-bootstrap CIs, the
    concordance of each summary set, the selection and the reshaping histograms."""
    st = settings(run.spec)
    if st["sequence_length"] is None:
        data = {c: read_tokens(run.inputs[f"shards_{c}"]) for c in st["conditions"]}
    else:
        data = {
            c: tokens_from_rows(path, st["sequence_length"])
            for c, path in zip(st["conditions"], run.inputs["severities"], strict=True)
        }
    summaries = {c: PC.summarise(d, st["percentiles"]) for c, d in data.items()}
    if st["resampling"] == "paired":
        seeds: Any = run.seed("sequences")
    else:
        seeds = {c: run.seed("sequences", c) for c in data}
    try:
        boot = PC.bootstrap_summaries(data, st["resamples"], seeds, st["percentiles"])
    except ValueError as exc:
        raise InputError(
            f"percentiles analysis '{run.name}': {exc} (register 'resampling: independent' "
            "if the conditions were evaluated on different sequences)"
        ) from None
    names = summary_names_of(st)
    conc = {
        k: PC.concordance(summaries, v, boot, st["level"]) for k, v in st["summary_sets"].items()
    }
    sel = PC.selection(summaries, names, st["metric"], boot, st["level"])
    return AnalysisResult(
        {
            "settings": st,
            "summaries": {
                c: {
                    "values": s.values,
                    "ci": {n: list(boot.confidence_interval(c, n, st["level"])) for n in names},
                    "standardized": s.standardized,
                    "tokens": s.tokens,
                    "sequences": s.sequences,
                    "status": s.status,
                }
                for c, s in summaries.items()
            },
            "concordance": {
                k: {
                    "summaries": list(v.summaries),
                    "statistic": v.statistic,
                    "ci": [finite_or_none(x) for x in v.confidence_interval],
                    "concordant": v.concordant,
                    "pairs": v.pairs,
                    "disagreeing": [list(p) for p in v.disagreeing],
                }
                for k, v in conc.items()
            },
            "selection": {
                "selected": sel.selected,
                "correlations": {
                    r.summary: {
                        "spearman": finite_or_none(r.spearman),
                        "spearman_ci": _interval(r.spearman_ci),
                        "kendall": finite_or_none(r.kendall),
                        "kendall_ci": _interval(r.kendall_ci),
                    }
                    for r in sel.correlations
                },
            },
            "first_last": _histograms(data[st["conditions"][0]], data[st["conditions"][-1]]),
        }
    )


def _interval(ci: Any) -> list[float | None] | None:
    return None if ci is None else [finite_or_none(x) for x in ci]


#: bins of the reshaping histograms (log-spaced per-token CE)
HIST_EDGES = np.logspace(-4, 2, 61)


def _histograms(first: PC.TokenLosses, last: PC.TokenLosses) -> dict[str, Any]:
    def h(x: np.ndarray) -> list[int]:
        return np.histogram(np.clip(x, HIST_EDGES[0], HIST_EDGES[-1]), HIST_EDGES)[0].tolist()

    return {"edges": HIST_EDGES.tolist(), "first": h(first.losses), "last": h(last.losses)}
