"""The environment each run of the study ran in, decided once per run from the run ledger.

Every run's ledger line (:mod:`tailgate.runs.ledger`, hash-chained) records the environments its
jobs ran in (``environments``: the package versions their provenance records name; one, unless
rules ran in environments of their own). A record is made by the first run that ended after it
was created; its ``versions`` must be one of that run's environments, else the audit fails
naming the file (a record whose versions were edited to open the tolerant mode for it).

The comparison mode is the run's, never the file's: a file is compared byte for byte (**exact**)
when every environment of the run that made it is the auditor's in each entry that can change a
number, a table's bytes or a picture's pixels
(:data:`tailgate.runtime.environment.NUMERIC_PACKAGES`), else by content (**tolerant**,
:mod:`tailgate.audit.compare`). A ledger written before runs recorded their environments leaves the
records' own versions to decide, and says so. The environment line says "tolerant" whenever any file
was compared tolerantly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tailgate.prereg.lock import parse_time
from tailgate.runs.ledger import LEDGER, read_ledger
from tailgate.runtime.environment import describe, environment_notes, numeric_differences, recorded

from .findings import Check

__all__ = ["RunEnvironments", "environment_check", "run_environments"]

#: a ledger line's time has whole seconds: a record created in that second belongs to it
_SECOND = timedelta(seconds=1)


def _versions(content: Mapping[str, Any]) -> dict[str, str]:
    v = content.get("versions")
    return {str(k): str(x) for k, x in v.items()} if isinstance(v, Mapping) else {}


@dataclass
class RunEnvironments:
    """The runs' environments and, per recorded file, whether it is compared exactly."""

    #: path relative to the results folder → compared byte for byte
    exact: dict[str, bool] = field(default_factory=dict)
    #: every environment of the runs that made the files, and the runs with none recorded
    environments: list[dict[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    from_ledger: bool = True

    def exact_for(self, rel: str) -> bool:
        return self.exact.get(rel, False)


def _time(text: Any) -> datetime | None:
    try:
        return parse_time(str(text))
    except (ValueError, TypeError):
        return None


def run_environments(rd: Path, records: Sequence[Any]) -> RunEnvironments:
    """Each record's run, its environments and the comparison mode (module docstring)."""
    found = RunEnvironments()
    runs = []
    for run in read_ledger(rd):
        envs = run.get("environments")
        when = _time(run.get("time"))
        if isinstance(envs, list) and when is not None:
            good = [{str(k): str(v) for k, v in e.items()} for e in envs if isinstance(e, Mapping)]
            runs.append((run.get("run"), when, good))
    if not runs:  # an older ledger, or none: each record's own versions decide
        found.from_ledger = False
        for rec in records:
            versions = _versions(rec.content)
            found.exact[str(rec.path)] = not numeric_differences(versions)
            if versions not in found.environments:
                found.environments.append(versions)
        found.notes.append(
            f"{rd / LEDGER}: no run records its environment (made by an older tailgate): each "
            "file's comparison follows the versions its own record names"
        )
        return found
    mode_of_run: dict[Any, bool] = {}
    for number, _, envs in runs:
        mode_of_run[number] = all(not numeric_differences(e) for e in envs) and bool(envs)
    for rec in records:
        rel = str(rec.path)
        if rel == LEDGER:  # re-recorded by every run, as the last file of the run
            found.exact[rel] = mode_of_run[runs[-1][0]]
            continue
        created = _time(rec.content.get("created"))
        run = next((r for r in runs if created is not None and created < r[1] + _SECOND), runs[-1])
        number, _, envs = run
        versions = _versions(rec.content)
        found.exact[rel] = mode_of_run[number]
        for e in envs:
            if e not in found.environments:
                found.environments.append(e)
        if versions not in envs:
            theirs = envs[0] if envs else {}
            diffs = [
                (k, theirs.get(k), versions.get(k))
                for k in sorted(set(theirs) | set(versions))
                if theirs.get(k) != versions.get(k)
            ]
            found.failures.append(
                f"{rd / rel}: its record names another environment than run {number} that made "
                f"it records in {LEDGER} ({describe(diffs) or 'the versions differ'}, run → "
                "record): a record's versions are not the run's"
            )
    return found


def environment_check(envs: RunEnvironments | None, tolerant: bool) -> Check:
    """The audit's first check: the run's environment against the auditor's, the mode the files
    were compared in (``tolerant``: some file was compared by content), and each record that
    disagrees with its run's environment."""
    if envs is None:
        return Check("environment", "not read (the records cannot be read)")
    combined = recorded(envs.environments)
    diffs = [d for e in envs.environments for d in numeric_differences(e)]
    whose = "the run's" if envs.from_ledger else "the recorded"
    if not tolerant and not diffs:
        line = f"exact: {whose} versions are the auditor's (files compared byte for byte)"
    else:
        why = describe(sorted(set(diffs), key=str)) if diffs else "per-file records"
        line = (
            f"tolerant: other versions than {whose.split()[0]} run's ({why}), so tables and "
            "statistics are compared as values (floats within the ULP tolerance), the report "
            "by its text, what its figures plot and their pixels within the picture tolerance"
        )
    return Check(
        "environment",
        line,
        envs.failures,
        notes=[*environment_notes(combined), *envs.notes],
    )
