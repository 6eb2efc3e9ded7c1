"""tailgate: pre-registered, auditable tail-shape claims for LLM evaluation.

The core protocol is the five-gate POT-GPD protocol of Zhou (2026) (Zhou 2026, Section 3); the
package is organised by the domain: ``prereg`` (the frozen contract), ``stats`` (estimators),
``protocol`` (gates and verdicts), ``generate`` and ``score`` (data), ``report``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tailgate")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
