"""The realised design: rows, exceedances and bootstrap sizes behind the statistics, and the
deviations ``verdict.json`` must list (:mod:`tailgate.prereg.deviations`), derived from the
lock, the fits and the generations.
"""

from __future__ import annotations

import json
from pathlib import Path

from tailgate.errors import DamagedFileError
from tailgate.files.safe_read import load_json
from tailgate.plans.layout import Layout
from tailgate.prereg.deviations import (
    amendment_log,
    design_deviations,
    generated_rows,
    realised_design,
    run_deviations,
)
from tailgate.prereg.lock import Lock
from tailgate.prereg.study import Study

from .findings import Check
from .runs import mode_of


def generation_shards(rd: Path, study: Study) -> list[Path]:
    """The generation shards of the registered conditions that ``rd`` holds, in order."""
    shards = [
        Layout(rd).file("generations", condition=c["name"], shard=k)
        for c in study.conditions()
        for k in range(study.shards)
    ]
    return [s for s in shards if s.is_file()]


def check_realised(rd: Path, study: Study, lock: Lock | None) -> Check:
    verdict_path = Layout(rd).file("verdict")
    if not verdict_path.is_file():
        return Check("realised design", "no verdict.json to check")
    fails: list[str] = []
    fits = []
    for f in Layout(rd).every("fits"):
        try:
            fits.append(load_json(f))
        except (OSError, ValueError, DamagedFileError) as exc:
            fails.append(f"{f}: cannot be read ({exc})")
    try:
        verdict = load_json(verdict_path)
    except (OSError, ValueError, DamagedFileError) as exc:
        return Check("realised design", str(verdict_path), [f"{verdict_path}: {exc}"])
    if not isinstance(verdict, dict):
        return Check(
            "realised design",
            str(verdict_path),
            [
                f"{verdict_path}: damaged (a JSON {type(verdict).__name__}, not the verdict "
                "document)"
            ],
        )
    for f in Layout(rd).every("fits"):  # one damaged fit is named, not a crash
        try:
            realised_design(study, [load_json(f)])
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            fails.append(f"{f}: damaged fit document ({type(exc).__name__}: {exc})")
    if fails:
        return Check("realised design", "the fits", fails)
    present = generation_shards(rd, study)
    try:
        generated = generated_rows(present) if present else None
    except (OSError, ValueError) as exc:
        return Check("realised design", "the generations", [f"a generation shard: {exc}"])
    realised = realised_design(study, fits, generated)
    expected = (
        run_deviations(mode_of(rd, verdict_path))
        + design_deviations(realised)
        + amendment_log(lock)[1]
    )
    recorded = verdict.get("deviations", [])
    for d in expected:
        if d not in recorded:
            fails.append(f"{verdict_path}: does not list the deviation: {d['what']}")
    for d in recorded:
        if d not in expected:
            fails.append(f"{verdict_path}: lists a deviation the audit does not derive: {d}")
    if verdict.get("realised_design") != json.loads(json.dumps(realised)):
        fails.append(f"{verdict_path}: its realised design differs from the fits and generations")
    detail = f"{len(expected)} deviation(s) derived from the lock, the fits and the generations"
    return Check("realised design", detail, fails, [d["what"] for d in expected][:10])
