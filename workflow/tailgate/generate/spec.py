"""What every generation backend reads of a registration: the backends, a condition's
registered entry, and the error a backend raises for bad user input.
"""

from __future__ import annotations

from typing import Any

from tailgate.errors import DataInputError

__all__ = ["BACKENDS", "DataInputError", "condition_spec"]

BACKENDS = ("simulate", "import", "transformers")


def condition_spec(study: Any, condition: str) -> dict[str, Any]:
    """The registered entry of ``condition`` in ``study.conditions()``."""
    conditions = study.conditions()
    for entry in conditions:
        if entry.get("name") == condition:
            return entry
    names = ", ".join(repr(c.get("name")) for c in conditions) or "none"
    raise DataInputError(
        f"Condition {condition!r} is not registered in the pre-registration of study "
        f"{study.name!r} (field `conditions[].name`; registered: {names}). Fix: use one of the "
        f"registered names, or add the condition to the pre-registration and amend it."
    )
