"""Every figure kind of the report reads at its displayed size: no text is cut at the figure's
edge, no text is smaller than 10 px where the report shows the figure in a 1,400 px wide window,
and no legend covers a plotted point or line; and each is rasterised to the bytes ``savefig``
writes, once per content in a report."""

from __future__ import annotations

import io
import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.collections import Collection, LineCollection
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.transforms import Bbox
from tailgate.data.diagnostics import qq_data
from tailgate.protocol.multiverse import G5_VARIANTS, threshold_rules
from tailgate.report import figures, procedure

BAND = [0.95, 0.96, 0.97, 0.98, 0.99]
CONDITIONS = ["base", "tuned-long-name", "heavy", "noise-0.05", "noise-0.10", "instruct-v2"]
#: per-token cross-entropies of the first and last condition (reshaping histogram)
FIRST, LAST = (np.random.default_rng(7).lognormal(m, s, 5000) for m, s in ((0.0, 1.0), (0.6, 1.2)))


def _qq_record(scale: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.logistic(-6, 1, 3000)
    sev = 1 / (1 + np.exp(-x)) if scale == "probability" else x
    return qq_data(sev, 0.95, 0.1, 1.0, max_points=60).to_dict()


def _scan(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    q = [0.9, 0.92, 0.94, *BAND]
    xi = (0.1 + 0.05 * rng.standard_normal(len(q))).tolist()
    me = np.linspace(1.0, 1.6, len(q))
    return {
        "q": q,
        "xi": xi,
        "ci_low": [v - 0.2 for v in xi],
        "ci_high": [v + 0.2 for v in xi],
        "n_exc": [int((1 - v) * 3000) for v in q],
        "median": float(np.median(xi)),
        "std": float(np.std(xi)),
        "mean_excess": me.tolist(),
        "mean_excess_se": [0.05] * len(q),
        "modified_scale": (me - 0.2).tolist(),
    }


def _multiverse_doc(scale: str) -> dict:
    rules = [r[0] for r in threshold_rules(BAND)]
    dims = {
        "threshold_rule": rules,
        "g5": list(G5_VARIANTS),
        "p1": ["percentile", "lr_test"],
        "multiplier": [0.5, 0.75, 1.0, 1.5, 2.0],
    }
    cells = [
        {"threshold_rule": r, "g5": g, "p1": p, "multiplier": m,
         "h1": "PASS" if m >= 1.5 else "KILL",
         "registered": (r, g, p, m) == ("any", "fixed", "percentile", 1.0)}
        for r, g, p, m in itertools.product(*dims.values())
    ]  # fmt: skip
    return {"scorer": "toxicity", "scale": scale, "dimensions": dims, "cells": cells,
            "pass_share": 0.4, "registered": cells[0]}  # fmt: skip


def _power() -> dict:
    dxi = [0.0, 0.1, 0.2]
    return {
        "delta_xi": dxi,
        "n_exc": [200, 500, 1000],
        "pass_rate": [[0.02, 0.03, 0.02], [0.2, 0.35, 0.45], [0.3, 0.6, 0.94]],
        "power": 0.8,
        "frontier": [{"delta_xi": d, "n_exc_star": 15.7 / d**2} for d in dxi if d > 0],
        "design_n_exc": 900,
    }


def _forest_rows() -> list[figures.ForestRow]:
    rows = []
    for i, (a, b) in enumerate(itertools.combinations(CONDITIONS[:4], 2)):
        d = 0.04 * (i + 1)
        rows.append({"label": f"{a} vs {b}", "delta_xi": d, "ci": [d - 0.1, d + 0.1],
                     "admissible": i % 2 == 0, "passed": i == 2})  # fmt: skip
    return rows


def _analysis_figures() -> dict:
    from tailgate.analyses.dominance.meanrisk import RISKS
    from tailgate.analyses.percentiles import compute as percentiles_compute
    from tailgate.analyses.percentiles.statistics import summary_names
    from tailgate.analyses.severity import statistics as S
    from tailgate.report.sections import dominance, percentiles, perturbation, severity

    rng = np.random.default_rng(3)
    conds = CONDITIONS[:4]
    scores = {r: (0.5 + 0.03 * rng.standard_normal(len(conds))).tolist() for r in RISKS}
    st_pc = {"conditions": conds, "percentiles": [10, 50, 90, 95, 99]}
    summ = {c: {"values": {n: float(np.exp(rng.normal(k / 2, 0.1)))
                           for k, n in enumerate(summary_names(st_pc["percentiles"]))}}
            for c in conds}  # fmt: skip
    hist = percentiles_compute._histograms(
        SimpleNamespace(losses=FIRST), SimpleNamespace(losses=LAST)
    )
    tests = {f"perturbed-{i}": {"p_test": 0.3 + 0.1 * i, "p_all": 0.3} for i in range(3)}
    pert = {"design": {"n": 50, "tau": 0.08}, "pilot": {"interval": {"low": 0.2, "high": 0.35}},
            "null": {"counts": [12, 14, 15, 16, 13]}, "tests": tests}  # fmt: skip
    step, top = 0.5, 4.0
    grid = S.make_grid(top, step)
    sev_conds = {}
    for i, c in enumerate(conds):
        counts = rng.multinomial(2000, 10 ** (-0.6 * np.arange(grid.size)) / 2.0).tolist()
        sev_conds[c] = {
            "counts": counts, "b": 0.6 + 0.1 * i, "b_ci": [0.5 + 0.1 * i, 0.7 + 0.1 * i],
            "m_c": 0.5, "n_tail": int(sum(counts[1:])),
            "families": {"delta_bic": {f: 3.0 * j * (i + 1) for j, f in enumerate(S.FAMILIES)}},
            "deployment": [{"per_million": 1e4 / (k + 1) ** 3} for k in range(3)],
        }  # fmt: skip
    st_sev = {"grid": {"top": top, "step": step}, "thresholds": [1.0, 2.0, 3.0]}
    return {
        "mean-risk": dominance._mean_risk_figure(conds, scores),
        "percentile fan": percentiles._fan_figure(st_pc, summ),
        "per-token CE": percentiles._reshape_figure(st_pc, hist),
        "p-hat": perturbation._phat_figure(pert),
        "magnitude-frequency": severity._mfd_figure(st_sev, sev_conds),
        "b forest": severity._forest_figure(sev_conds),
        "delta BIC": severity._bic_figure(sev_conds),
        "per million": severity._per_million_figure(st_sev, sev_conds),
    }


def _all_figures() -> dict:
    scans = {c: _scan(i) for i, c in enumerate(CONDITIONS[:4])}
    out = {
        "qq": figures.qq_figure(
            _qq_record("probability", 1), _qq_record("logit", 1), condition="tuned-long-name",
            ad_p_prob=0.0012, ad_p_logit=0.31,
        ),
        "stability": figures.stability_figure(
            scans, band=BAND, fishing=[{"condition": "base", "q": 0.97, "xi": 0.1, "pair": "x"}],
            title="toxicity, logit scale",
        ),
        "forest": figures.forest_figure(_forest_rows(), floor=0.1, q=0.95, title="toxicity, logit"),
        "power": figures.power_figure(_power()),
        "diagnostics": procedure.diagnostics_figure(scans, band=BAND, title="(toxicity, logit)"),
        "multiverse": procedure.multiverse_figure(
            [_multiverse_doc("logit"), _multiverse_doc("probability"), _multiverse_doc("identity")]
        ),
    }  # fmt: skip
    empty = {c: {**_scan(0), "xi": [None] * 8, "ci_low": [None] * 8, "ci_high": [None] * 8,
                 "median": None, "std": None} for c in ("yes-no-a", "yes-no-b")}  # fmt: skip
    out["stability (no ξ̂)"] = figures.stability_figure(empty, band=BAND)
    out["diagnostics (empty)"] = procedure.diagnostics_figure(
        {"yes-no-a": {"q": [], "mean_excess": []}}, band=BAND
    )
    out.update(_analysis_figures())
    return out


FIGURES = _all_figures()
#: figures shown in a column of the report's two-column grid
IN_GRID = {"qq"}


def _texts(fig) -> list[Text]:
    """The texts the figure draws: visible, non-empty, not the label of a tick outside the view
    (matplotlib keeps those but does not draw them)."""
    undrawn = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            slack = 1e-9 * max(abs(lo), abs(hi), 1.0)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - slack <= tick.get_loc() <= hi + slack:
                    undrawn.update((id(tick.label1), id(tick.label2)))
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible()
        and t.get_text().strip()
        and (t.axes is None or t.axes.get_visible())
        and id(t) not in undrawn
    ]


@pytest.fixture(params=sorted(FIGURES), ids=sorted(FIGURES))
def drawn(request):
    fig = FIGURES[request.param]
    fig.canvas.draw()
    return request.param, fig, fig.canvas.get_renderer()


def test_every_text_lies_inside_the_figure(drawn) -> None:
    name, fig, renderer = drawn
    frame = fig.bbox
    for t in _texts(fig):
        box = t.get_window_extent(renderer)
        assert (
            box.x0 >= frame.x0 - 0.5
            and box.y0 >= frame.y0 - 0.5
            and box.x1 <= frame.x1 + 0.5
            and box.y1 <= frame.y1 + 0.5
        ), f"{name}: {t.get_text()!r} at {box.bounds} leaves the figure {frame.bounds}"


def test_every_text_is_at_least_10_px_where_the_report_shows_it(drawn) -> None:
    name, fig, _ = drawn
    width = figures.GRID_WIDTH_PX if name in IN_GRID else figures.REPORT_WIDTH_PX
    shown = min(1.0, width / fig.bbox.width)  # a wider image is scaled down to the column
    assert fig.bbox.width <= width, f"{name} is {fig.bbox.width:.0f} px wide, shown in {width}"
    for t in _texts(fig):
        px = t.get_fontsize() * fig.dpi / 72.0 * shown
        assert px >= 10.0, f"{name}: {t.get_text()!r} is {px:.1f} px"


def _data_points(fig) -> list[np.ndarray]:
    """Display coordinates of every plotted point and line vertex (legend artists excluded)."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for line in ax.get_lines():
            xy = np.column_stack(line.get_data()).astype(float)
            if xy.size:
                out.append(ax.transData.transform(xy))
        for coll in ax.collections:
            if isinstance(coll, LineCollection):
                segs = [s for s in coll.get_segments() if len(s)]
                if segs:
                    out.append(ax.transData.transform(np.concatenate(segs)))
            elif isinstance(coll, Collection) and len(coll.get_offsets()):
                off = np.asarray(coll.get_offsets(), dtype=float)
                out.append(coll.get_offset_transform().transform(off))
        for patch in ax.patches:  # bars, histogram steps, spans
            out.append(patch.get_transform().transform(patch.get_path().vertices))
    return [p[np.isfinite(p).all(axis=1)] for p in out]


def test_no_legend_covers_a_plotted_point(drawn) -> None:
    name, fig, renderer = drawn
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    points = _data_points(fig)
    assert points or name in {"multiverse", "delta BIC"}
    for legend in legends:
        assert isinstance(legend, Legend)
        box: Bbox = legend.get_window_extent(renderer)
        for p in points:
            x, y = p[:, 0], p[:, 1]
            inside = (x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)
            assert not inside.any(), f"{name}: the legend covers {p[inside][:3].tolist()}"
        # and it lies wholly outside every axes, so no span or band hides under it either
        for ax in fig.axes:
            a = ax.get_window_extent(renderer)
            assert box.x1 <= a.x0 or box.x0 >= a.x1 or box.y1 <= a.y0 or box.y0 >= a.y1, name


def test_the_checks_see_a_clipped_label_and_a_legend_over_data() -> None:
    """The checks above can fail: a label pushed off the canvas, a legend placed on the data."""
    fig = figures.new_figure(3.0, 2.0)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], "o", label="points")
    ax.text(1.6, 0.5, "far right", transform=ax.transAxes)
    ax.legend(loc="center")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (far,) = [t for t in _texts(fig) if t.get_text() == "far right"]
    assert far.get_window_extent(renderer).x1 > fig.bbox.x1
    box = ax.get_legend().get_window_extent(renderer)
    a = ax.get_window_extent(renderer)
    assert not (box.x1 <= a.x0 or box.x0 >= a.x1 or box.y1 <= a.y0 or box.y0 >= a.y1)


def test_an_empty_panel_says_why_inside_its_axes() -> None:
    for name in ("stability (no ξ̂)", "diagnostics (empty)"):
        fig = FIGURES[name]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        notes = [
            (ax, t)
            for ax in fig.axes
            for t in ax.texts
            if "enough exceedances" in " ".join(t.get_text().split())
        ]
        assert notes, name
        for ax, note in notes:  # wrapped to the axes' width, clear of tick labels (none left)
            box, frame = note.get_window_extent(renderer), ax.get_window_extent(renderer)
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1, (name, box, frame)
            assert frame.y0 <= box.y0 and box.y1 <= frame.y1, (name, box, frame)
            assert not ax.get_xticks().size and not ax.get_yticks().size


def test_per_token_histogram_spans_the_occupied_bins() -> None:
    """The x range is the occupied bins and one empty bin either side, not the stored edges'
    1e-4 … 1e2: the samples of :func:`_analysis_figures` (same seed) set it."""
    ax = FIGURES["per-token CE"].axes[0]
    lo, hi = ax.get_xlim()
    ratio = 10 ** (6 / 60)  # one log-spaced bin
    from tailgate.analyses.percentiles.compute import HIST_EDGES

    data = np.clip(np.concatenate([FIRST, LAST]), HIST_EDGES[0], HIST_EDGES[-1])
    assert data.min() / ratio**2 <= lo <= data.min()
    assert data.max() <= hi <= data.max() * ratio**2
    assert ax.get_xlabel().startswith("per-token cross-entropy")


def test_mean_risk_scores_share_one_axis() -> None:
    """A common scale: every condition's score for every risk is drawn at its value."""
    ax = FIGURES["mean-risk"].axes[0]
    xs = np.concatenate([line.get_xdata() for line in ax.get_lines()])
    assert xs.min() > 0.3 and xs.max() < 0.7  # the raw scores, not rescaled to [0.1, 1]
    assert ax.name == "rectilinear"


@pytest.mark.slow  # every figure drawn three times: the whole suite runs it
def test_png_bytes_are_the_bytes_savefig_writes() -> None:
    """One draw instead of savefig's two (a layout pass without output, then the rasterising
    draw): the same PNG for every figure kind, colour bar and outside legends included."""
    fresh = _all_figures()
    for name, fig in _all_figures().items():
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", metadata={"Software": None})
        assert figures.png_bytes(fresh[name]) == buffer.getvalue(), name


def test_a_figure_that_plots_the_same_is_rasterised_once(monkeypatch) -> None:
    """Within rendered_once: the same builder, arguments, order of panels, size and resolution
    reuse the figure and its bytes; another order of panels (one sidecar, sorted keys) is built
    and drawn again."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    drawn: list[object] = []
    draw = FigureCanvasAgg.draw
    monkeypatch.setattr(
        FigureCanvasAgg, "draw", lambda canvas: drawn.append(canvas) or draw(canvas)
    )
    scans = {c: _scan(i) for i, c in enumerate(CONDITIONS[:3])}
    with figures.rendered_once():
        first = figures.png_bytes(figures.stability_figure(scans, band=BAND))
        again = figures.png_bytes(figures.stability_figure(scans, band=BAND))
        turned = dict(reversed(scans.items()))
        other = figures.png_bytes(figures.stability_figure(turned, band=BAND))
        built = figures.stability_figure(scans, band=BAND)
        assert built is figures.stability_figure(scans, band=BAND)
        assert built is not figures.stability_figure(turned, band=BAND)
    assert first == again and other != first and len(drawn) == 2
    assert figures.stability_figure(scans, band=BAND) is not built  # outside the block: built
    figures.png_bytes(figures.stability_figure(scans, band=BAND))  # and drawn
    assert len(drawn) == 3


def test_a_figure_whose_arguments_changed_before_it_was_built_is_refused() -> None:
    """Within rendered_once a figure is built where it is drawn, from the arguments it was
    asked with: if they no longer plot what they plotted then, building it raises instead of
    drawing other numbers under the recorded content."""
    from tailgate.report.content import Deferred

    scans = {c: _scan(i) for i, c in enumerate(CONDITIONS[:2])}
    with figures.rendered_once():
        fig = figures.stability_figure(scans, band=BAND)
        assert isinstance(fig, Deferred)
        scans[CONDITIONS[0]]["xi"][0] += 0.5
        with pytest.raises(RuntimeError, match="changed before it was built"):
            figures.png_bytes(fig)


_FORKED_BATCH = """
import os, sys
from pathlib import Path
from test_figure_layout import _all_figures
from tailgate.report import raster

log = Path(sys.argv[1])
one = [raster.png(f) for f in _all_figures().values()]
assert raster.can_fork(), "a fresh interpreter has one thread"
draw = raster.png

def logged(fig):
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\\n")
    return draw(fig)

raster.png = logged
assert raster.rasterise(list(_all_figures().values()), 3) == one, "the same bytes"
drawers = set(log.read_text().split())
parent = os.getpid()

def failing(fig):  # every child fails: this process draws the batch itself
    if os.getpid() != parent:
        raise RuntimeError("a child that fails")
    return draw(fig)

raster.png = failing
assert raster.rasterise(list(_all_figures().values()), 3) == one, "drawn here instead"
print(len(one), len(drawers))
"""


@pytest.mark.slow
def test_a_batch_drawn_by_forked_processes_is_the_same_bytes(tmp_path) -> None:
    """A batch of every figure kind split between three processes (a fresh interpreter: a
    process with other threads never forks) gives the bytes of drawing them one by one, and
    every child that fails leaves the batch to this process."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", _FORKED_BATCH, str(tmp_path / "drawers.log")],
        capture_output=True, text=True, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    figures_drawn, processes = (int(v) for v in done.stdout.split())
    assert figures_drawn == len(_all_figures()) and processes == 3


def test_a_process_with_other_threads_draws_its_batch_itself(monkeypatch) -> None:
    """Forking from a process that runs other threads could leave a lock held in the child:
    such a process (this test's, under xdist, or with a helper thread) never forks."""
    import os
    import threading

    from tailgate.report import raster

    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked with another thread"))
        figs, fresh = (list(_all_figures().values())[:2] for _ in range(2))
        assert raster.rasterise(figs, 2) == [raster.png(f) for f in fresh]
    finally:
        stop.set()
        helper.join()
