"""Whether data exists for a study: a fact read from evidence, never from a flag.

"Data exists" decides whether a changed registration may simply be frozen again or must be
recorded as an amendment (and shown as a deviation when it changes a decision rule). The
researcher who runs tailgate cannot steer it: there is no option that names another folder,
and every source that can show data counts (when in doubt, data exists):

* the study's results folder ``<project>/results/<study>`` — any file or link in it, whether
  or not a provenance record describes it (job logs aside: a run that failed before writing
  anything leaves only logs), and the folder itself when it is a link;
* the lock — an entry that recorded that data existed;
* git history — any commit that touched ``results/<study>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailgate.prereg.gitinfo import ever_committed
from tailgate.prereg.study import results_dir_for

__all__ = ["DataEvidence", "data_evidence"]

_NOT_DATA = ("logs", ".snakemake")


@dataclass(frozen=True)
class DataEvidence:
    """The reasons to believe data exists (empty: none found)."""

    reasons: tuple[str, ...]

    @property
    def exists(self) -> bool:
        return bool(self.reasons)

    def describe(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "no data found"


def _files_in(rd: Path, limit: int = 3) -> tuple[int, list[str]]:
    count, examples = 0, []
    for dirpath, dirnames, filenames in os.walk(rd, followlinks=False):
        if dirpath == str(rd):
            dirnames[:] = [d for d in dirnames if d not in _NOT_DATA]
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in [*filenames, *links]:
            count += 1
            if len(examples) < limit:
                examples.append(os.path.relpath(os.path.join(dirpath, name), rd))
    return count, examples


def data_evidence(prereg_path: str | Path, lock: Any | None = None) -> DataEvidence:
    """Every reason to believe data exists for the study registered at ``prereg_path``."""
    rd = results_dir_for(prereg_path)
    reasons: list[str] = []
    if rd.is_symlink():
        reasons.append(f"{rd} is a link")
    elif rd.is_dir():
        count, examples = _files_in(rd)
        if count:
            reasons.append(f"{rd} holds {count} file(s), e.g. {', '.join(examples)}")
    elif rd.exists():
        reasons.append(f"{rd} exists and is not a folder")
    if lock is not None:
        seqs = [int(e.get("seq", -1)) for e in lock.chain if e.get("data_existed")]
        if seqs:
            reasons.append(
                f"{Path(lock.path).name} records that data existed at entry "
                + ", ".join(map(str, seqs))
            )
    if ever_committed(rd):
        reasons.append(f"git history holds files under {rd}")
    return DataEvidence(tuple(reasons))
