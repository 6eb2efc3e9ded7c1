"""What a figure plots, on record: the numbers and the spec, apart from the rendered pixels.

Two machines with different matplotlib, Pillow or FreeType builds rasterise the same figure to
different PNG bytes; what the figure *says* is the data and options it was drawn from. Each figure
builder is decorated with :func:`plots`, which attaches that content to the returned figure
(:func:`content_of`): the builder's name and its arguments as plain JSON values (floats exactly,
by their shortest round-trip text; NaN and infinities as strings). :func:`digest` is its SHA-256
over canonical JSON. The report embeds the digest beside every image, each standalone PNG gets a
sidecar ``<name>.json`` holding its content (:func:`sidecar`), and ``tailgate audit`` re-derives
both from the stored statistics and compares them exactly — the pixels are checked only against
their own provenance record.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "BUILT",
    "CONTENT_FORMAT",
    "Deferred",
    "built",
    "content_of",
    "digest",
    "plain",
    "plots",
    "sidecar",
]

#: the ``format`` of a figure's sidecar file
CONTENT_FORMAT = "tailgate.figure/1"
_ATTR = "_tailgate_content"
F = TypeVar("F", bound=Callable[..., Any])


def plain(value: Any) -> Any:
    """``value`` as plain JSON values: mappings (string keys), lists, strings, ints, bools, None
    and exact floats; NaN and ±inf as ``"NaN"``/``"Infinity"``/``"-Infinity"``."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"a figure's content must be plain data, not {type(value).__name__}")


def digest(content: Mapping[str, Any]) -> str:
    """SHA-256 of ``content`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: within :func:`tailgate.report.figures.rendered_once`: each figure asked for, by what it plots
BUILT: ContextVar[dict[str, Any] | None] = ContextVar("tailgate_built", default=None)


class Deferred:
    """A figure not built yet: what it plots (:func:`content_of`) and its builder's call, made
    by :meth:`figure` where the figure is drawn. A figure whose drawing an earlier audit kept is
    never built, and the others are built in the processes that draw them
    (:mod:`tailgate.report.raster`)."""

    def __init__(
        self,
        content: dict[str, Any],
        key: str,
        build: Callable[[], Any],
        plotted: Callable[[], dict[str, Any]],
    ) -> None:
        setattr(self, _ATTR, content)
        #: what it plots as text (the size of the work, to hand the largest out first)
        self.key = key
        self._build, self._plotted = build, plotted
        self._figure: Any = None

    def figure(self) -> Any:
        """The figure, built at the first call from its arguments, which must still plot what
        they plotted when it was asked for."""
        if self._figure is None:
            if self._plotted() != content_of(self):
                raise RuntimeError(
                    f"the arguments of a figure changed before it was built: {self.key[:80]}"
                )
            fig = self._build()
            setattr(fig, _ATTR, content_of(self))
            self._figure = fig
        return self._figure


def built(fig: Any) -> Any:
    """``fig`` itself, or the figure a :class:`Deferred` stands for."""
    return fig.figure() if isinstance(fig, Deferred) else fig


def plots(name: str, select: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None) -> Any:
    """Decorate a figure builder: its figure carries ``{"figure": name, "plots": arguments}``;
    ``select`` narrows the bound arguments to what is drawn (e.g. the plotted keys of a larger
    document). Within :data:`BUILT` the builder returns a :class:`Deferred`, and a figure that
    plots what an earlier one plotted is that one: what a figure plots fixes its pixels, its
    size among them."""

    def wrap(builder: F) -> F:
        signature = inspect.signature(builder)

        def plotted(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            shown = select(arguments) if select is not None else arguments
            return {"figure": name, "plots": plain(shown)}

        @functools.wraps(builder)
        def build(*args: Any, **kwargs: Any) -> Any:
            content = plotted(args, kwargs)
            asked = BUILT.get()
            if asked is None:
                fig = builder(*args, **kwargs)
                setattr(fig, _ATTR, content)
                return fig
            key = json.dumps(content, ensure_ascii=False)
            if key not in asked:
                asked[key] = Deferred(
                    content,
                    key,
                    functools.partial(builder, *args, **kwargs),
                    functools.partial(plotted, args, kwargs),
                )
            return asked[key]

        return build  # type: ignore[return-value]

    return wrap


def content_of(fig: Any) -> dict[str, Any] | None:
    """The content :func:`plots` attached to ``fig`` (``None`` for an undecorated builder)."""
    return getattr(fig, _ATTR, None)


def sidecar(fig: Any, image_name: str) -> dict[str, Any]:
    """The sidecar document of a standalone figure written as ``image_name``."""
    content = content_of(fig)
    if content is None:
        raise ValueError(f"{image_name}: its figure builder does not record what it plots")
    return {
        "format": CONTENT_FORMAT,
        "image": image_name,
        "content_sha256": digest(content),
        "content": content,
    }
