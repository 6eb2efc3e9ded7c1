"""The audit's first check: the environment recorded with the results against the auditor's
(:mod:`tailgate.environment` records and compares the package versions); a difference is a
note, never a failure, and decides whether files are compared byte for byte or as values."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tailgate.environment import environment_notes, mode_line, recorded

from .findings import Check

__all__ = ["environment_check"]


def environment_check(records: Iterable[Any]) -> Check:
    """The recorded environment against the auditor's (notes only)."""
    env = recorded(records)
    return Check("environment", mode_line(env), notes=environment_notes(env))
