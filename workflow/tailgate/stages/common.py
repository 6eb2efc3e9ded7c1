"""What every stage shares: the frozen study, its results directory, records and registered rules.

Every stage function starts with :func:`open_stage`, which refuses (``RefusalError``) unless the
pre-registration matches its lock's chain head — the same check as the Snakefile's parse-time
guard, repeated inside each job so that no entry point can produce results from a changed plan.
Every artifact is written with :mod:`tailgate.files.atomic` and then recorded with
:func:`tailgate.runtime.provenance.record` in the same job. A stage opened with
``plan="registered"`` passes the same guard and then computes under the plan entry 0 of the lock
registered (:mod:`tailgate.plans.entries`), writing only under ``results/<study>/registered/``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailgate.data.severities import read_severities
from tailgate.errors import InputError, RefusalError
from tailgate.files.safe_read import load_json
from tailgate.plans.entries import BRANCH_DIR, PLANS, REGISTERED, registered_study
from tailgate.plans.reads import scales_for
from tailgate.prereg.canonical import canonical_hash
from tailgate.prereg.guard import require_runnable
from tailgate.prereg.study import Study, results_dir_for
from tailgate.runtime.provenance import ProvenanceRecord, record

__all__ = [
    "StageContext",
    "headline_of",
    "open_stage",
    "read_json",
    "read_severities",
    "scan_quantiles",
]


@dataclass(frozen=True)
class StageContext:
    """The study the stage computes under and the directory its results go to
    (``results/<study>``). ``study`` is the chain head, or with ``plan`` ``"registered"`` the
    study as entry 0 of the lock registered it; ``head`` is the guarded chain head (None: the
    same as ``study``) and ``plan_info`` what the records say of the plan
    (:func:`tailgate.plans.entries.plan_record`)."""

    study: Study
    results: Path
    head: Study | None = None
    plan: str = "head"
    plan_info: dict[str, Any] | None = None

    def record(
        self,
        path: str | os.PathLike[str],
        *,
        inputs: Iterable[str | os.PathLike[str]] = (),
        kind: str = "derived",
        seed: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> ProvenanceRecord:
        """Record an artifact just written (its inputs always include the pre-registration);
        under the registered plan only inside ``registered/``, under the head only outside."""
        where = Path(os.path.abspath(path))
        root = Path(os.path.abspath(self.results))
        inside = root in where.parents and where.relative_to(root).parts[0] == BRANCH_DIR
        if inside != (self.plan == REGISTERED):
            raise InputError(
                f"{path}: a stage under plan '{self.plan}' writes "
                + ("only inside " if self.plan == REGISTERED else "nothing inside ")
                + f"{self.results / BRANCH_DIR} (the registered plan's artifacts). Fix: pass "
                "the output path of that plan."
            )
        if self.plan_info is not None:  # the plan in use, re-hashed now, is the one recorded
            now = canonical_hash(self.study.data)
            if now != self.plan_info["canonical_hash"] or now != self.study.canonical_hash:
                raise RefusalError(
                    f"{self.study.path}: refusing to record an artifact: the registered plan in "
                    f"use hashes to {now[:12]}…, not entry {self.plan_info['seq']}'s "
                    f"{str(self.plan_info['canonical_hash'])[:12]}… (changed after it was "
                    "loaded). Run the stage again."
                )
        return record(
            path,
            results_dir=self.results,
            study=self.head or self.study,
            inputs=[self.study.path, *inputs],
            seed=self.study.seed if seed is None else seed,
            kind=kind,  # type: ignore[arg-type]
            extra=extra,
            plan=self.plan_info,
        )


def open_stage(
    prereg: str | os.PathLike[str], results: str | os.PathLike[str], plan: str = "head"
) -> StageContext:
    """Refuse unless ``prereg`` (and the files it pins) match its lock, the registration is
    committed (a confirmatory run) and its results folder holds no link; check ``results`` is
    the study's ``<project>/results/<study>``. ``plan``: ``"head"`` (the chain head) or
    ``"registered"`` (the plan of entry 0 of the lock, :mod:`tailgate.plans.entries`)."""
    if plan not in PLANS:
        raise InputError(f"plan must be one of {', '.join(PLANS)}, not {plan!r}")
    study = require_runnable(prereg)
    rd = Path(results)
    expected = results_dir_for(study.path)
    if os.path.realpath(rd) != os.path.realpath(expected):
        raise InputError(
            f"{rd}: the results folder of study '{study.name}' is {expected} (beside the "
            f"preregistrations folder). Fix: pass results/{study.name} from the project folder."
        )
    if plan == REGISTERED:
        registered, info = registered_study(study)
        return StageContext(registered, rd, head=study, plan=plan, plan_info=info)
    return StageContext(study, rd)


def scan_quantiles(study: Study) -> list[float]:
    """The stability scan's grid start, start + step, … ≤ stop (Fig. 3 of Zhou (2026))."""
    scan = study.stability.scan
    start, stop, step = scan.start, scan.stop, scan.step
    count = math.floor((stop - start) / step + 1e-9) + 1
    return [round(start + i * step, 10) for i in range(count)]


def read_json(path: str | os.PathLike[str], what: str) -> Any:
    """A JSON artifact, or :class:`InputError` naming the file and the stage that writes it."""
    try:
        return load_json(path)
    except FileNotFoundError:
        raise InputError(
            f"{path}: the {what} file does not exist. Fix: run the workflow stage that writes it "
            "(snakemake --cores all)."
        ) from None
    except ValueError as exc:
        raise InputError(
            f"{path}: the {what} file is not valid JSON ({exc}). Fix: delete it and re-run the "
            "workflow, which rewrites it."
        ) from None


def headline_of(study: Study) -> dict[str, Any]:
    """The headline analysis: first registered scorer, registered headline scale and q."""
    scorer = study.scorers()[0]["name"]
    scales = scales_for(study, scorer)
    scale = study.rules.headline_scale
    return {
        "scorer": scorer,
        "scale": scale if scale in scales else scales[0],
        "q": study.thresholds.headline,
    }
