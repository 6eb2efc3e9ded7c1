"""Report figures in the spirit of Figs 2–5 of Zhou (2026), drawn with matplotlib's Agg canvas.

Builders take plain structures (:mod:`tailgate.protocol.documents`) and return a
:class:`matplotlib.figure.Figure`; :func:`png_bytes` renders one to PNG bytes (no timestamp or
software metadata, so identical inputs give identical bytes) and the ``write_*`` functions write
standalone PNG files atomically, e.g. for ``snakemake --report`` entries with :data:`CAPTIONS`,
each beside a sidecar ``<stem>.json`` recording what it plots (:mod:`tailgate.report.content`).
No pyplot state is used, so figures can be drawn from any thread or process.
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from tailgate.files.atomic import write_bytes, write_json
from tailgate.lazy import lazy_module
from tailgate.protocol.documents import PowerGrid, QQRecord, StabilityScan

from . import kept_figures
from .content import BUILT, Deferred, content_of, plots, sidecar
from .raster import rasterise

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: matplotlib's figure and Agg canvas, loaded when a figure is first built: an audit that takes
#: every figure from the kept ones builds none (0.3 s of its start-up)
_figure = lazy_module("matplotlib.figure")
_agg = lazy_module("matplotlib.backends.backend_agg")

__all__ = [
    "CAPTIONS",
    "GRID_WIDTH_PX",
    "LABEL_PT",
    "REPORT_WIDTH_PX",
    "FishingPoint",
    "ForestRow",
    "drawing_processes",
    "empty_note",
    "forest_figure",
    "legend_outside",
    "new_figure",
    "png_all",
    "png_bytes",
    "power_figure",
    "qq_figure",
    "rendered_once",
    "sidecar_path",
    "stability_figure",
    "write_forest",
    "write_png",
    "write_power",
    "write_qq",
    "write_stability",
]

#: Captions for standalone figure files (report entries).
CAPTIONS = {
    "qq": (
        "QQ plot of the exceedances above the threshold (empirical, vertical) against the fitted "
        "GPD (horizontal), probability scale (left) vs logit scale (right). Points that leave the "
        "diagonal and flatten near the top on the probability scale are exceedances saturating "
        "against the upper bound: bounded-support contamination (Fig. 2, Proposition 1 of Zhou "
        "2026); a straight logit-scale QQ means the transform restored the GPD."
    ),
    "stability": (
        "Parameter-stability scan: ξ̂(u) with its 95% CI over thresholds (the registered "
        "intervals: percentile bootstrap, or Wald from the observed information); the grey "
        "band is the scan's median ± one standard deviation, the shaded span the registered "
        "robustness band. "
        "Red stars mark thresholds where a pair passed every gate except stability (G5): "
        "threshold fishing (Fig. 3, Section 6.3 of Zhou (2026)); such a threshold beyond the "
        "scan's last point is named in red text instead."
    ),
    "forest": (
        "Pairwise |Δξ̂| with 95% CI at the headline threshold; the shaded band is the effect-size "
        "floor (P2). Squares: pairs that fail an admissibility gate; circles: admissible pairs; "
        "filled green: pairs passing every gate (Fig. 4 of Zhou (2026))."
    ),
    "power": (
        "Synthetic recovery: empirical P1∧P2 PASS rate against n_exc for each true Δξ; dotted "
        "lines mark the n_exc at which Eq. 2 gives the registered power (Fig. 5, App. E of Zhou "
        "2026)."
    ),
}


class FishingPoint(TypedDict):
    """A threshold where a pair passed every gate but G5: marked on the stability scan."""

    condition: str
    q: float
    xi: float
    pair: str


class ForestRow(TypedDict):
    """One pair on the forest plot."""

    label: str
    delta_xi: float | None
    ci: list[float] | None
    admissible: bool
    passed: bool


#: what the power figure draws of the power document (it also holds the operating characteristics)
_POWER_KEYS = ("n_exc", "delta_xi", "pass_rate", "frontier", "power", "design_n_exc")
#: what the stability figure draws of each condition's scan
_SCAN_KEYS = ("q", "xi", "ci_low", "ci_high", "median", "std")


def _power_shown(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"power": {k: arguments["power"].get(k) for k in _POWER_KEYS}}


def _stability_shown(arguments: dict[str, Any]) -> dict[str, Any]:
    scans = arguments["scans"]
    fishing = list(arguments["fishing"])
    beyond = [p for p in fishing if not _on_scan(p, scans)]
    return {
        **arguments,
        "scans": {name: {k: scan.get(k) for k in _SCAN_KEYS} for name, scan in scans.items()},
        "fishing": [p for p in fishing if _on_scan(p, scans)],
        **({"fishing_beyond_scan": beyond} if beyond else {}),  # named in words, not starred
    }


def _on_scan(point: FishingPoint, scans: Mapping[str, StabilityScan]) -> bool:
    """Whether a fishing point's threshold lies within its condition's scanned thresholds (a
    band threshold above the scan's last point is marked in words, not as a star past the
    curve)."""
    scan = scans.get(point["condition"])
    q = _floats(scan["q"]) if scan is not None else np.array([])
    q = q[np.isfinite(q)]
    return bool(q.size) and float(q.min()) - 1e-9 <= float(point["q"]) <= float(q.max()) + 1e-9


#: pixels per inch of every figure: a figure of w inches is w × DPI pixels wide in the report
DPI = 100
#: the report's content width in pixels (``max-width`` of its body) and the width of a column of
#: its two-column figure grid at a 1,400 px wide window; a figure no wider is shown at full size
REPORT_WIDTH_PX = 1100
GRID_WIDTH_PX = 540
#: the smallest font size of any text in a figure, in points: 8 pt at 100 dpi is 11 px, so every
#: label stays at least 10 px tall where the figure is shown at full size
LABEL_PT = 8.0


def new_figure(width: float, height: float) -> Figure:
    """A figure ``width`` × ``height`` inches with constrained layout, so that no label, title or
    outside legend is cut at the figure's edge, on its own Agg canvas."""
    fig = _figure.Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    _agg.FigureCanvasAgg(fig)
    return fig


def empty_note(ax: Any, text: str) -> None:
    """Say in the middle of an axes why it shows no data (instead of an unexplained frame): the
    text wrapped to the axes' own width (matplotlib's ``wrap`` wraps to the figure's), inside
    the axes, which lose their ticks (no tick label to overlap, none that would mean data)."""
    size = LABEL_PT + 1
    width_in = ax.get_position().width * ax.figure.get_figwidth()
    chars = max(12, int(0.8 * width_in * 72 / (0.6 * size)))  # 0.6 em: a mean glyph's width
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(
        0.5, 0.5, "\n".join(textwrap.wrap(text, chars)), transform=ax.transAxes, ha="center",
        va="center", fontsize=size, color="0.35", clip_on=True,
    )  # fmt: skip


def legend_outside(fig: Figure, handles: Sequence[Any] | None = None, **kw: Any) -> None:
    """The figure's legend right of the axes (constrained layout makes room): never over data.

    ``handles`` default to the labelled artists of every axes; no legend when none is labelled."""
    if handles is None:
        handles = [h for ax in fig.axes for h in ax.get_legend_handles_labels()[0]]
    if not handles:
        return
    fig.legend(
        handles=list(handles),
        loc=kw.pop("loc", "outside right upper"),
        fontsize=kw.pop("fontsize", LABEL_PT),
        frameon=kw.pop("frameon", False),
        **kw,
    )


#: within :func:`rendered_once`: PNG bytes by what a figure plots (:func:`_same_figure`)
_RENDERED: ContextVar[dict[str, bytes] | None] = ContextVar("tailgate_rendered", default=None)


@contextmanager
def rendered_once() -> Iterator[None]:
    """Within the block, a figure that plots what an earlier one plotted (the same builder and
    arguments in the same order) is neither built nor rasterised again: it is that figure, with
    the same bytes; and a figure is built only where it is drawn (:class:`Deferred`), so one
    taken from the kept figures is never built. The report stage writes the standalone figures
    that the report also embeds."""
    token = _RENDERED.set({} if _RENDERED.get() is None else _RENDERED.get())
    built = BUILT.set({} if BUILT.get() is None else BUILT.get())
    try:
        yield
    finally:
        BUILT.reset(built)
        _RENDERED.reset(token)


def _same_figure(fig: Figure | Deferred) -> str | None:
    """What determines ``fig``'s pixels, as text: its recorded content with the order of every
    mapping kept (the order of the panels; its size and resolution follow from it); None for a
    figure that does not record what it plots."""
    if isinstance(fig, Deferred):
        return fig.key
    content = content_of(fig)
    return None if content is None else json.dumps(content, ensure_ascii=False)


def png_bytes(fig: Figure) -> bytes:
    """PNG bytes of ``fig`` without metadata (byte-reproducible for identical inputs;
    :func:`tailgate.report.raster.png`)."""
    return png_all([fig])[0]


#: processes that rasterise a batch of figures (:func:`drawing_processes`)
_PROCESSES: ContextVar[int] = ContextVar("tailgate_processes", default=1)


@contextmanager
def drawing_processes(n: int) -> Iterator[None]:
    """Within the block :func:`png_all` draws a batch with up to ``n`` processes (the same
    bytes: :mod:`tailgate.report.raster`)."""
    token = _PROCESSES.set(max(1, int(n)))
    try:
        yield
    finally:
        _PROCESSES.reset(token)


def png_all(figs: Sequence[Figure]) -> list[bytes]:
    """:func:`png_bytes` of every figure of ``figs``, in order: within :func:`rendered_once` a
    figure that plots what an earlier one plotted is drawn once, within
    :func:`tailgate.report.kept_figures.kept_in` one an earlier audit on this machine drew is
    taken from the user's folder, and the batch is split between :func:`drawing_processes`
    processes."""
    seen = _RENDERED.get()
    if seen is None and not kept_figures.kept():  # every figure is drawn
        return rasterise(figs, _PROCESSES.get())
    seen = {} if seen is None else seen
    keys = [_same_figure(f) for f in figs]
    drawing: set[str] = set()
    draw = []  # a figure without a recorded content, or the first of its content not yet seen
    for i, key in enumerate(keys):
        if key is None or (key not in seen and key not in drawing):
            draw.append(i)
            if key is not None:
                drawing.add(key)
    found = kept_figures.taken(drawing)
    images = {i: found[keys[i]] for i in draw if keys[i] in found}
    fresh = [i for i in draw if i not in images]
    images.update(zip(fresh, rasterise([figs[i] for i in fresh], _PROCESSES.get()), strict=True))
    kept_figures.keep({k: images[i] for i in fresh if (k := keys[i]) is not None})
    for i, data in images.items():
        if keys[i] is not None:
            seen[keys[i]] = data
    return [images[i] if i in images else seen[key] for i, key in enumerate(keys)]


def write_png(fig: Figure, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` as PNG, atomically; a figure that records what it plots
    (:mod:`tailgate.report.content`) also gets its sidecar :func:`sidecar_path`."""
    content = content_of(fig)
    if content is not None:
        write_json(sidecar_path(path), sidecar(fig, Path(path).name))
    write_bytes(path, png_bytes(fig))


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """Where the content of the figure at ``path`` is recorded: ``<stem>.json`` beside it."""
    return Path(path).with_suffix(".json")


def _floats(values: Sequence[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


@plots("qq")
def qq_figure(
    prob: QQRecord,
    logit: QQRecord,
    *,
    condition: str,
    ad_p_prob: float | None = None,
    ad_p_logit: float | None = None,
) -> Figure:
    """Fig. 2 of Zhou (2026): exceedance QQ plots, probability scale vs logit scale.

    It is shown in a column of the report's two-column grid, so it is no wider than
    :data:`GRID_WIDTH_PX`."""
    fig = new_figure(GRID_WIDTH_PX / DPI, 3.6)
    axes = fig.subplots(1, 2)
    for ax, rec, scale, p in (
        (axes[0], prob, "probability", ad_p_prob),
        (axes[1], logit, "logit", ad_p_logit),
    ):
        model = _floats(rec["model"])
        empirical = _floats(rec["empirical"])
        ax.scatter(model, empirical, s=8, alpha=0.7, color="#1f77b4", edgecolors="none")
        finite = np.concatenate([model[np.isfinite(model)], empirical[np.isfinite(empirical)]])
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            ax.plot([lo, hi], [lo, hi], color="black", lw=0.8, ls="--")
        ad = "—" if p is None else f"{p:.3g}"
        ax.set_title(
            f"{scale}\nξ̂ = {rec['xi']:.2f}, AD p = {ad}\nn_exc = {rec['n_exc']}",
            fontsize=LABEL_PT + 1,
        )
        ax.set_xlabel("fitted GPD quantile", fontsize=LABEL_PT + 1)
        ax.set_ylabel("empirical exceedance", fontsize=LABEL_PT + 1)
        ax.tick_params(labelsize=LABEL_PT)
    fig.suptitle(f"{condition}: exceedances above q = {prob['q']:g}", fontsize=10)
    return fig


@plots("stability", select=_stability_shown)
def stability_figure(
    scans: Mapping[str, StabilityScan],
    *,
    band: Sequence[float] = (),
    fishing: Sequence[FishingPoint] = (),
    title: str = "",
) -> Figure:
    """Fig. 3 of Zhou (2026): ξ̂(u) ± CI per condition, ±σ envelope, band, fishing stars."""
    names = list(scans)
    cols = min(len(names), 2) or 1
    rows = max(math.ceil(len(names) / cols), 1)
    fig = new_figure(4.2 * cols, 3.0 * rows)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes, names, strict=False):
        scan = scans[name]
        q = _floats(scan["q"])
        xi = _floats(scan["xi"])
        lo = _floats(scan["ci_low"])
        hi = _floats(scan["ci_high"])
        if band:
            ax.axvspan(min(band), max(band), color="#ffe9a8", alpha=0.6, lw=0)
        if scan["median"] is not None and scan["std"] is not None:
            med, sd = float(scan["median"]), float(scan["std"])
            ax.axhspan(med - sd, med + sd, color="grey", alpha=0.25, lw=0)
            ax.axhline(med, color="grey", lw=0.8)
        ax.fill_between(q, lo, hi, color="#1f77b4", alpha=0.2, lw=0)
        ax.plot(q, xi, marker="o", ms=3, color="#1f77b4")
        if not np.isfinite(xi).any():
            empty_note(ax, "no ξ̂: no threshold of the scan has enough exceedances")
        mine = [p for p in fishing if p["condition"] == name]
        for point in (p for p in mine if _on_scan(p, scans)):
            ax.plot([point["q"]], [point["xi"]], marker="*", ms=14, color="red", zorder=5)
        beyond = sorted({float(p["q"]) for p in mine if not _on_scan(p, scans)})
        scanned = q[np.isfinite(q)]
        if beyond and scanned.size:
            ax.text(
                0.02,
                0.02,
                f"G5 fails alone at q = {', '.join(f'{b:g}' for b in beyond)}, beyond the "
                f"scan's last point {scanned.max():g}",
                transform=ax.transAxes,
                fontsize=LABEL_PT,
                color="red",
                va="bottom",
            )
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("threshold quantile q")
        ax.set_ylabel("ξ̂")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


@plots("forest")
def forest_figure(rows: Sequence[ForestRow], *, floor: float, q: float, title: str = "") -> Figure:
    """Fig. 4 of Zhou (2026): |Δξ̂| per pair with CI and the effect-size floor band.

    The legend sits below the axes, so it never covers a pair."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig = new_figure(6.5, 0.45 * max(len(rows), 1) + 2.2)
    ax = fig.subplots()
    ax.axvspan(0.0, floor, color="grey", alpha=0.25, lw=0)
    for i, row in enumerate(rows):
        y = len(rows) - 1 - i
        if row["delta_xi"] is None:
            continue
        x = abs(float(row["delta_xi"]))
        if row["ci"] and None not in row["ci"]:
            a, b = (abs(float(c)) for c in row["ci"])
            if float(row["ci"][0]) <= 0 <= float(row["ci"][1]):
                a, b = 0.0, max(a, b)
            ax.plot([min(a, b), max(a, b)], [y, y], color="black", lw=1)
        if row["passed"]:
            ax.plot([x], [y], marker="o", ms=8, color="green")
        elif row["admissible"]:
            ax.plot([x], [y], marker="o", ms=8, mfc="white", color="#1f77b4")
        else:
            ax.plot([x], [y], marker="s", ms=7, color="#d62728")
    ax.set_yticks(range(len(rows)), [r["label"] for r in reversed(rows)], fontsize=8)
    ax.set_ylim(-0.6, max(len(rows), 1) - 0.4)
    ax.set_xlabel(f"|Δξ̂| at q = {q:g}")
    ax.set_xlim(left=0.0)
    handles = [
        Patch(color="grey", alpha=0.25, label=f"below the floor |Δξ| < {floor:g} (P2)"),
        Line2D([], [], marker="o", ms=7, color="green", lw=0, label="passes every gate"),
        Line2D(
            [], [], marker="o", ms=7, mfc="white", color="#1f77b4", lw=0, label="admissible (G1–G4)"
        ),
        Line2D([], [], marker="s", ms=6, color="#d62728", lw=0, label="fails G1–G4"),
        Line2D([], [], color="black", lw=1, label="95% CI"),
    ]
    legend_outside(fig, handles, loc="outside lower center", ncols=2)
    ax.set_title(title or "Pairwise tail-shape differences", fontsize=10)
    return fig


@plots("power", select=_power_shown)
def power_figure(power: PowerGrid) -> Figure:
    """Fig. 5 of Zhou (2026): PASS rate vs n_exc per true Δξ with the Eq. 2 frontier."""
    fig = new_figure(7.5, 4.0)
    ax = fig.subplots()
    n = np.asarray(power["n_exc"], dtype=float)
    colours = [f"C{i}" for i in range(len(power["delta_xi"]))]
    frontier = {format(float(p["delta_xi"]), "g"): p["n_exc_star"] for p in power["frontier"]}
    for colour, dxi, rates in zip(colours, power["delta_xi"], power["pass_rate"], strict=True):
        ax.plot(n, _floats(rates), marker="o", ms=4, color=colour, label=f"Δξ = {dxi:g}")
        star = frontier.get(format(float(dxi), "g"))
        if star is not None and math.isfinite(star) and star <= n.max() * 1.5:
            ax.axvline(star, color=colour, ls=":", lw=1)
    ax.axhline(power["power"], color="black", lw=0.6, ls="--")
    if power["design_n_exc"]:
        ax.axvline(power["design_n_exc"], color="black", lw=1.2, label="registered n_exc")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("exceedances per condition n_exc")
    ax.set_ylabel("PASS rate (P1 ∧ P2)")
    legend_outside(fig)
    ax.set_title("Synthetic recovery vs the Eq. 2 frontier", fontsize=10)
    return fig


def write_qq(path: str | os.PathLike[str], prob: QQRecord, logit: QQRecord, **kw: Any) -> None:
    """Standalone PNG of :func:`qq_figure`."""
    write_png(qq_figure(prob, logit, **kw), path)


def write_stability(
    path: str | os.PathLike[str], scans: Mapping[str, StabilityScan], **kw: Any
) -> None:
    """Standalone PNG of :func:`stability_figure`."""
    write_png(stability_figure(scans, **kw), path)


def write_forest(path: str | os.PathLike[str], rows: Sequence[ForestRow], **kw: Any) -> None:
    """Standalone PNG of :func:`forest_figure`."""
    write_png(forest_figure(rows, **kw), path)


def write_power(path: str | os.PathLike[str], power: PowerGrid) -> None:
    """Standalone PNG of :func:`power_figure`."""
    write_png(power_figure(power), path)
