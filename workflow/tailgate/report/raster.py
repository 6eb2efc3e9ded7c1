"""Rasterise report figures to PNG bytes, a batch at a time in forked processes.

Drawing a figure is most of what re-rendering a report costs (the constrained layout measures
every tick label, then Agg rasterises; about 7 of the 11 CPU-seconds of ``tailgate audit`` on the
demo study), and each figure is drawn on its own: a batch can be split between processes. The
PNG bytes of a figure do not depend on the process that draws it (the same code, the same
inputs, no state shared between figures), so a report is the same bytes whatever the number of
processes; the tests compare both ways.

:func:`rasterise` forks only where that is safe (:func:`tailgate.forked.can_fork`: on Linux,
from a process with no other Python thread). Anywhere else, and when a child fails, the figures are
drawn one after another in this process, which is what a child does too.
"""

from __future__ import annotations

import io
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING

from tailgate.forked import can_fork, fork_child
from tailgate.lazy import lazy_module

from .content import Deferred, built

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: matplotlib's Agg canvas and image writer, loaded at the first drawing (an audit that takes
#: every figure from the kept ones draws none)
_agg = lazy_module("matplotlib.backends.backend_agg")
_image = lazy_module("matplotlib.image")

__all__ = ["MAX_PROCESSES", "available_processes", "png", "rasterise"]


def png(fig: Figure | Deferred) -> bytes:
    """PNG bytes of ``fig`` without metadata (byte-reproducible for identical inputs); a
    :class:`~tailgate.report.content.Deferred` figure is built here.

    One draw lays the figure out and rasterises it, and the pixels are written as ``savefig``
    writes them (the same bytes): ``savefig`` would first draw every artist once more, without
    output, only to run the layout engine."""
    fig = built(fig)
    agg = _agg.FigureCanvasAgg
    canvas = fig.canvas if isinstance(fig.canvas, agg) else agg(fig)
    canvas.draw()
    buffer = io.BytesIO()
    _image.imsave(
        buffer, canvas.buffer_rgba(), format="png", origin="upper", dpi=fig.dpi,
        metadata={"Software": None},
    )  # fmt: skip
    return buffer.getvalue()


#: most processes that draw one batch: a figure takes under a second (the demo's 19 distinct
#: figures 3.8 s in all), and each child is another copy of the process (its pages shared until
#: written), so more than a few buy little on a large machine
MAX_PROCESSES = 8


def available_processes() -> int:
    """The CPUs this process may run on (its affinity where the system tells it), at most
    :data:`MAX_PROCESSES`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_PROCESSES))


def rasterise(figs: Sequence[Figure | Deferred], processes: int = 1) -> list[bytes]:
    """:func:`png` of every figure, drawn by up to ``processes`` processes (this one and forked
    children, each a share of the figures); the same bytes as drawing them one by one. A
    figure is drawn once in this process or never (a second draw of a figure with constrained
    layout may lay it out again): the share of a child that fails is drawn here."""
    n = min(int(processes), len(figs))
    forks = n > 1 and len(figs) <= _MAX_QUEUED and can_fork()
    drawn = _forked(figs, n) if forks else [None] * len(figs)
    return [png(f) if data is None else data for f, data in zip(figs, drawn, strict=True)]


def _forked(figs: Sequence[Figure | Deferred], n: int) -> list[bytes | None]:
    """Each figure's bytes as this process and ``n`` - 1 forked children drew them; None for
    the figures of a child that failed, which this process has not drawn. The figures are
    handed out one at a time from a pipe that holds their indices (a read of one index is
    atomic), so a process that drew a quick figure takes the next one; the largest figures
    first (:func:`_size`), so that no process is left drawing a large one alone at the end."""
    out: list[bytes | None] = [None] * len(figs)
    queue_r, queue_w = os.pipe()
    order = sorted(range(len(figs)), key=lambda i: _size(figs[i]), reverse=True)
    os.write(queue_w, b"".join(i.to_bytes(_INDEX, "little") for i in order))
    os.close(queue_w)
    children: list[tuple[int, IO[bytes]]] = []

    def draw_share(sink: IO[bytes]) -> None:  # a child: draw what it takes, write it
        for i in _taken(queue_r):
            data = png(figs[i])
            sink.write(i.to_bytes(_INDEX, "little") + len(data).to_bytes(8, "little"))
            sink.write(data)
        sink.flush()

    try:
        for _ in range(n - 1):
            # a file, not a pipe: a child never waits for this process to read what it drew
            sink = tempfile.TemporaryFile()
            children.append((fork_child(lambda sink=sink: draw_share(sink)), sink))
        for i in _taken(queue_r):
            out[i] = png(figs[i])
        while children:
            pid, sink = children.pop(0)
            _, status = os.waitpid(pid, 0)
            with sink:
                sink.seek(0)
                blob = sink.read()
            drawn, at = {}, 0
            while at + _INDEX + 8 <= len(blob):
                i = int.from_bytes(blob[at : at + _INDEX], "little")
                size = int.from_bytes(blob[at + _INDEX : at + _INDEX + 8], "little")
                drawn[i] = blob[at + _INDEX + 8 : at + _INDEX + 8 + size]
                at += _INDEX + 8 + size
            if status == 0 and at == len(blob) and all(drawn.values()):
                for i, data in drawn.items():
                    out[i] = data
    finally:
        os.close(queue_r)
        for pid, sink in children:  # an interrupted batch leaves no process behind
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
            sink.close()
    return out


def _size(fig: Figure | Deferred) -> tuple[bool, int]:
    """How long a figure takes to draw, as an order: one still to be built before a built one,
    a deferred one by what it plots (characters), a built one by its axes (the slowest to lay
    out)."""
    if isinstance(fig, Deferred):
        return True, len(fig.key)
    return False, len(fig.axes)


#: bytes of a figure's index in the work pipe and in a child's output
_INDEX = 4
#: most figures a batch hands out through the work pipe (written whole before any process
#: reads it: 16 KiB, within a pipe's buffer)
_MAX_QUEUED = 4096


def _taken(queue: int) -> Iterator[int]:
    """The indices this process takes from the work pipe, one at a time, until it is empty."""
    while len(raw := os.read(queue, _INDEX)) == _INDEX:
        yield int.from_bytes(raw, "little")
