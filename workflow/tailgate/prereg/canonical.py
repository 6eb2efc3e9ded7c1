"""Canonical JSON and the canonical hash of a pre-registration (DESIGN: "Canonical hash").

The canonical form is the validated document with schema defaults applied, serialised as JSON
with sorted keys, no whitespace, ASCII escapes and one fixed spelling per number:

* integral numbers are written as integers (``1.0`` and ``1`` mean the same), ``-0.0`` is ``0``;
* other floats use Python's shortest round-trip ``repr`` (``1e-06``, ``0.1``), so ``1.0e-6``,
  ``0.000001`` and ``1e-6`` in the YAML all hash alike.

Comments, key order, quoting and layout therefore never change the hash; any change of value does.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from tailgate.files.safe_read import sha256_file as regular_sha256

__all__ = ["canonical_hash", "canonical_json", "normalise", "sha256_bytes", "sha256_file"]


def normalise(value: Any) -> Any:
    """The JSON value with numbers in their canonical type (see module docstring)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite number {value!r} has no canonical form")
        if value == 0.0:
            return 0
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        return value
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes of ``value``."""
    return json.dumps(
        normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def canonical_hash(value: Any) -> str:
    """SHA-256 (hex) of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def sha256_bytes(data: bytes) -> str:
    """SHA-256 (hex) of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Any, chunk: int = 1 << 20) -> str:
    """SHA-256 (hex) of a file's bytes, read in chunks."""
    return regular_sha256(path, chunk)
