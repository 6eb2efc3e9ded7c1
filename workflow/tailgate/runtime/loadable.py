"""Which registered models a stage needs, and whether they can be loaded on this machine.

``tailgate audit --reproduce`` recomputes scores, per-token losses, judge grades and embeddings
with the registered models. A model it cannot load here (a hub id with no local copy while the
hub is offline, a package that is not installed) is not a failure of the study: the reproduction
takes that one scorer's recorded files as they are and says what it therefore cannot prove.
This module answers, before anything runs, *what* each scorer or embedder loads
(:func:`scorer_needs`, :func:`model_needs`) and *why not* when it cannot (:func:`why_unloadable`).

The probe is cheap and does not load weights: a local path must exist; a hub id must resolve its
``config.json`` (from the cache when ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set); a
Detoxify head without a registered checkpoint must be in torch's hub cache when offline; the
package a scorer imports must be installed.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailgate.errors import PreregError, install_fix

__all__ = ["PACKAGES", "Need", "missing_packages", "model_needs", "scorer_needs", "why_unloadable"]

#: what each scorer kind (and the transformers backend, and an embedding model: the same loader)
#: imports, as (module, distribution), the first its own; kinds absent need nothing beyond tailgate
PACKAGES: dict[str, tuple[tuple[str, str], ...]] = {
    "profanity": (("profanity_check", "alt-profanity-check"), ("sklearn", "scikit-learn")),
    "detoxify": (("detoxify", "detoxify"), ("torch", "torch"), ("transformers", "transformers")),
    "token_nll": (("transformers", "transformers"), ("torch", "torch")),
    "judge": (("transformers", "transformers"), ("torch", "torch")),
    "transformers": (("transformers", "transformers"), ("torch", "torch")),
}
#: the optional extra that installs them
_EXTRA = "llm"
_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def _missing(kind: str) -> list[str]:
    """The distributions of :data:`PACKAGES` ``[kind]`` that cannot be found here (by
    :func:`importlib.util.find_spec`, which imports nothing)."""
    out = []
    for module, dist in PACKAGES.get(kind, ()):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(dist)
    return out


def missing_packages(study: Any) -> list[PreregError]:
    """A problem for each registered scorer, the generation backend and each analysis's
    embedding model whose packages cannot be found in this environment: its jobs would stop
    with ``ModuleNotFoundError``. Each names the packages and the install line that works."""
    file = str(study.path)
    problems = []
    for i, sc in enumerate(study.scorers()):
        name, kind = sc["name"], sc["kind"]
        missing = _missing(kind)
        if missing:
            problems.append(
                PreregError(
                    f"scorer '{name}' (kind {kind}) needs {', '.join(missing)}, which cannot be "
                    "found in this environment: its scoring job would fail",
                    file=file,
                    field=f"scorers[{i}].kind",
                    fix=f"{install_fix(_EXTRA)}, or register another scorer",
                )
            )
    backend = study.backend
    missing = _missing(backend)
    if missing:
        problems.append(
            PreregError(
                f"the {backend} backend needs {', '.join(missing)}, which cannot be found in "
                "this environment: its generation jobs would fail",
                file=file,
                field="data.backend",
                fix=install_fix(_EXTRA),
            )
        )
    for name, spec in study.analyses().items():
        emb = spec.get("embedding")
        missing = _missing("transformers") if emb else []
        if missing:
            problems.append(
                PreregError(
                    f"analysis '{name}' embeds responses with model '{emb['model']}', which needs "
                    f"{', '.join(missing)}, which cannot be found in this environment: its embed "
                    "jobs would fail",
                    file=file,
                    field=f"analyses.{name}.embedding.model",
                    fix=f"{install_fix(_EXTRA)}, or drop 'embedding'",
                )
            )
    return problems


@dataclass(frozen=True)
class Need:
    """One thing a stage loads: ``what`` in words, and a hub id or local path (``source``, with
    its ``revision``), a local file or folder (``path``), a package, or a Detoxify head that the
    package downloads (``detoxify_head``)."""

    what: str
    source: str | None = None
    revision: str | None = None
    path: str | None = None
    package: str | None = None
    detoxify_head: str | None = None


def _offline() -> bool:
    return any(
        os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in _OFFLINE
    )


def model_needs(study: Any, key: str) -> list[Need]:
    """The registered model ``models.<key>`` (its id or path and revision)."""
    spec = study.models().get(key) or {}
    source = spec.get("id") or spec.get("path")
    return [
        Need("package 'transformers'", package="transformers"),
        Need(f"model '{key}' ({source})", source=str(source), revision=spec.get("revision")),
    ]


def scorer_needs(study: Any, name: str) -> list[Need]:
    """What the registered scorer ``name`` loads: its package, its judge model, its checkpoint."""
    entry = next((s for s in study.scorers() if s.get("name") == name), None)
    if entry is None:
        return []
    kind = entry.get("kind")
    own = PACKAGES[kind][0][0] if kind in PACKAGES else None
    needs = [Need(f"package '{own}'", package=own)] if own else []
    if kind in ("token_nll", "judge") and entry.get("judge"):
        needs += [
            Need(f"judge {n.what}", n.source, n.revision)
            for n in model_needs(study, str(entry["judge"]))
            if n.source is not None
        ]
    elif kind == "detoxify":
        for field in ("checkpoint", "config_path"):
            if entry.get(field):
                needs.append(Need(f"{field} {entry[field]}", path=str(entry[field])))
        if not entry.get("checkpoint"):
            head = str(entry.get("head") or "original")
            needs.append(Need(f"Detoxify head '{head}'", detoxify_head=head))
    return needs


def _local(source: str, root: Path) -> Path | None:
    """``source`` as a local path (relative ones against the project ``root``), if it is one."""
    p = Path(os.path.expanduser(source))
    p = p if p.is_absolute() else root / p
    return p if p.exists() else None


def _looks_like_path(source: str) -> bool:
    """A hub id is ``name`` or ``org/name``; anything else names a local path."""
    return source.startswith(("/", ".", "~")) or source.count("/") > 1


def _why_hub(source: str, revision: str | None) -> str | None:
    try:
        from transformers import AutoConfig

        AutoConfig.from_pretrained(source, revision=revision)
    except Exception as exc:  # the hub client and transformers raise many types
        first = str(exc).splitlines()[0] if str(exc) else ""
        mode = "the hub is offline and it is not cached" if _offline() else "the hub"
        return f"a hub id that cannot be resolved here ({mode}: {type(exc).__name__}: {first})"
    return None


def _why_detoxify(head: str) -> str | None:
    try:
        import torch
        from detoxify.detoxify import MODEL_URLS
    except ImportError as exc:
        return f"{exc}"
    url = MODEL_URLS.get(head)
    if url is None:
        return f"the detoxify package has no head {head!r}"
    cached = Path(torch.hub.get_dir()) / "checkpoints" / url.rsplit("/", 1)[-1]
    if _offline() and not cached.is_file():
        return f"downloaded on first use, and offline with no copy at {cached}"
    return None


def why_unloadable(needs: list[Need], root: Path) -> str | None:
    """Why the first of ``needs`` that cannot be loaded here cannot (None: all can). ``root``:
    the project folder relative paths are resolved against."""
    for need in needs:
        why = None
        if need.package is not None and importlib.util.find_spec(need.package) is None:
            why = "the package is not installed"
        elif need.path is not None and _local(need.path, root) is None:
            why = "no such local file or folder"
        elif need.detoxify_head is not None:
            why = _why_detoxify(need.detoxify_head)
        elif need.source is not None and _local(need.source, root) is None:
            why = (
                "no such local path"
                if _looks_like_path(need.source)
                else _why_hub(need.source, need.revision)
            )
        if why:
            return f"{need.what}: {why}"
    return None
