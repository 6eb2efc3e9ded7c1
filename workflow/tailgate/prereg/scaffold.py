"""``tailgate init``: a new pre-registration from the template."""

from __future__ import annotations

from pathlib import Path

__all__ = ["init_study"]


def init_study(study: str, *, from_import: str | None, directory: str) -> Path:
    """Write ``<directory>/<study>.yaml``; return its path."""
    raise NotImplementedError("tailgate init is being built")
