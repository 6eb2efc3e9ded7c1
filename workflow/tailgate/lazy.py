"""Modules loaded on first use.

Every job validates its study, and validating a study imports the analysis kinds it registers;
the kinds' statistics need scipy only when they compute. ``stats = lazy_module("scipy.stats")``
at module level keeps ``stats.norm.ppf(...)`` as written while the import waits for the first
attribute read (scipy.stats alone is 0.7 s of a job's start-up on the demo's machine).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["lazy_module"]


class _LazyModule(ModuleType):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_loaded"] = None

    def __getattr__(self, attr: str) -> Any:
        loaded = self.__dict__["_loaded"]
        if loaded is None:
            loaded = importlib.import_module(self.__name__)
            self.__dict__["_loaded"] = loaded
        return getattr(loaded, attr)


def lazy_module(name: str) -> Any:
    """A stand-in for module ``name`` that imports it on the first attribute read."""
    return _LazyModule(name)
