"""tailgate: pre-registered, auditable tail-shape claims for LLM evaluation.

The core protocol is the five-gate POT-GPD protocol of Zhou (2026) (Zhou 2026, Section 3); the
package is organised by the domain: ``prereg`` (the frozen contract), ``stats`` (estimators),
``protocol`` (gates and verdicts), ``generate`` and ``score`` (data), ``report``.
"""

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed metadata when first asked for: importlib.metadata
    is not loaded by a job that does not record it (every job imports this package first)."""
    if name != "__version__":
        raise AttributeError(f"module 'tailgate' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("tailgate")
    except PackageNotFoundError:  # running from a source tree without installation
        value = "0.0.0+source"
    globals()["__version__"] = value
    return value
