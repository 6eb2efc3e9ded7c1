"""What the stability and multiverse figures draw, read from their content and plotted artists:
no fishing star past the scan's last point, no all-grey multiverse map."""

from __future__ import annotations

import numpy as np
from tailgate.report.content import content_of
from tailgate.report.figures import stability_figure
from tailgate.report.procedure import multiverse_figure


def _scan(stop: float) -> dict:
    q = np.round(np.arange(0.90, stop + 1e-9, 0.005), 6)
    xi = np.full(q.size, 0.1)
    return {
        "q": q.tolist(),
        "xi": xi.tolist(),
        "ci_low": (xi - 0.1).tolist(),
        "ci_high": (xi + 0.1).tolist(),
        "median": 0.1,
        "std": 0.05,
    }


def test_a_fishing_threshold_beyond_the_scan_is_named_not_starred():
    scans = {"qwen": _scan(0.985), "llama": _scan(0.985)}
    fishing = [
        {"condition": "qwen", "q": 0.97, "xi": 0.12, "pair": "qwen vs llama"},
        {"condition": "qwen", "q": 0.99, "xi": 0.30, "pair": "qwen vs llama"},
    ]
    fig = stability_figure(scans, band=[0.95, 0.99], fishing=fishing)
    shown = content_of(fig)["plots"]
    assert [p["q"] for p in shown["fishing"]] == [0.97]
    assert [p["q"] for p in shown["fishing_beyond_scan"]] == [0.99]
    ax = fig.axes[0]
    stars = [line for line in ax.lines if line.get_marker() == "*"]
    assert [float(s.get_xdata()[0]) for s in stars] == [0.97]  # none past 0.985
    assert any("0.99, beyond the scan's last point 0.985" in t.get_text() for t in ax.texts)


def _multiverse(h1: str) -> dict:
    dims = {"threshold_rule": ["any", "all"], "g5": ["fixed"], "p1": ["percentile"],
            "multiplier": [1.0]}  # fmt: skip
    cells = [
        {"threshold_rule": r, "g5": "fixed", "p1": "percentile", "multiplier": 1.0, "h1": h1,
         "registered": r == "any", "passing_pairs": []}
        for r in dims["threshold_rule"]
    ]  # fmt: skip
    return {
        "scorer": "tox",
        "scale": "logit",
        "dimensions": dims,
        "cells": cells,
        "pass_share": 1.0 if h1 == "PASS" else 0.0,
        "registered": cells[0],
    }


def test_a_multiverse_where_nothing_passes_says_so_instead_of_a_grey_map():
    fig = multiverse_figure([_multiverse("KILL"), _multiverse("PASS")])
    empty, mapped = fig.axes[0], fig.axes[1]
    assert not empty.images  # no all-grey heat map
    said = [" ".join(t.get_text().split()) for t in empty.texts]  # wrapped to the panel
    assert any("no PASS in any of the 2 analyses" in t for t in said)
    assert len(mapped.images) == 1 and mapped.images[0].get_array().min() == 1.0
    # the map beside the panel in words carries the row labels
    assert [t.get_text() for t in mapped.get_yticklabels()] == ["any | fixed", "all | fixed"]
    assert mapped.yaxis.get_tick_params()["labelleft"] is not False
