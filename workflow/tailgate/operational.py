"""Operational settings (``config/config.yaml``): checked against their schema before any job.

The file holds throughput knobs only (batch sizes, devices, threads); nothing in it is part of
a pre-registration. Every key is listed in ``workflow/tailgate/schemas/config.schema.json`` and any
other key is refused, so that a setting the workflow does not know (say ``generation.base_dir``)
can never be read by a stage and change which data a study sees.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema

from tailgate.errors import InputError

__all__ = ["SCHEMA", "check_operational", "operational_guard"]

SCHEMA = Path(__file__).resolve().parent / "schemas" / "config.schema.json"


def _where(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "(top level)"


def check_operational(config: dict[str, Any], config_file: str = "config/config.yaml") -> None:
    """Raise :class:`InputError` (exit 2) naming the file and key of the first schema violation."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    error = errors[0]
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        parent = _where(error)
        keys = ", ".join(extra if parent == "(top level)" else [f"{parent}.{k}" for k in extra])
        raise InputError(
            f"{config_file}: unknown operational setting {keys}. Operational settings are "
            f"throughput knobs only and may not change which data a study reads; allowed keys "
            f"here: {', '.join(allowed)}. Remove the key (study decisions belong in the "
            "pre-registration)."
        )
    raise InputError(f"{config_file}: {_where(error)}: {error.message}. Fix the value.")


def operational_guard(config: dict[str, Any], config_file: str = "config/config.yaml") -> None:
    """Parse-time check for the Snakefile: the message on stderr and exit 2, no traceback."""
    try:
        check_operational(config, config_file)
    except InputError as exc:
        print(str(exc), file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
