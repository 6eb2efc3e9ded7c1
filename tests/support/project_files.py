"""The files of a throw-away study project, shared by the project helpers of the test folders
(each adds how it runs the CLI and Snakemake)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class StudyFiles:
    """``<root>/preregistrations/<name>.yaml``, its lock and ``<root>/results/<name>``."""

    root: Path
    name: str

    @property
    def prereg(self) -> Path:
        return self.root / "preregistrations" / f"{self.name}.yaml"

    @property
    def lock(self) -> Path:
        return self.root / "preregistrations" / f"{self.name}.lock.json"

    @property
    def results(self) -> Path:
        return self.root / "results" / self.name

    def replace(self, old: str, new: str, count: int = 1) -> None:
        """Edit the pre-registration's text (``old`` must be in it)."""
        text = self.prereg.read_text()
        assert old in text, f"{old!r} not in the study text"
        self.prereg.write_text(text.replace(old, new, count))
