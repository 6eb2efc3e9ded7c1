"""The plain audit (``tailgate audit`` without ``--reproduce``): every check of the package
docstring (:mod:`tailgate.audit`), run in order as one list, each guarded so that a damaged
input is a failed check naming the file, never a crashed audit."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tailgate.forked import Forked
from tailgate.plans.layout import Layout
from tailgate.prereg.guard import links_in
from tailgate.prereg.study import NAME_RE, lock_path_for, prereg_for, results_dir_for
from tailgate.runs.ledger import LEDGER
from tailgate.runtime.provenance import PROVENANCE_DIR

from .artifacts import check_artifacts, read_records
from .environment import environment_check, run_environments
from .findings import AuditReport, Check, guarded
from .realised import check_realised
from .receipts import check_expected_runs
from .registration import (
    check_git,
    check_lock,
    check_prereg,
    check_published,
    check_timestamps,
    first_artifact,
)
from .report import outcome_checks
from .runs import check_code, check_confirmatory, check_ledger, check_results, check_runtime
from .verdicts import check_verdicts


def audit(
    results_dir: str | Path,
    *,
    prereg: str | Path | None = None,
    expected_hash: str | None = None,
    no_git: bool = False,
    tsa_cert: str | Path | None = None,
    expected_runs: Sequence[str] = (),
    report_to: str | Path | None = None,
) -> AuditReport:
    """Audit ``results_dir`` (``results/<study>``) against its pre-registration and lock;
    ``expected_runs``: published run receipts (:mod:`tailgate.audit.receipts`); ``report_to``:
    a folder the re-made report is written to (:mod:`tailgate.audit.report`)."""
    rd = Path(results_dir)
    # 1. the results folder itself
    refused = _not_a_results_folder(rd, prereg)
    if refused is not None:
        return AuditReport(rd, [Check("results folder", str(rd), [refused])])
    prereg_path = Path(prereg) if prereg is not None else prereg_for(rd)
    fails = [f"{link}: links are not allowed in a results folder" for link in links_in(rd)]
    if os.path.realpath(results_dir_for(prereg_path)) != os.path.realpath(rd):
        fails.append(
            f"{rd}: not the results folder of {prereg_path} (that is "
            f"{results_dir_for(prereg_path)})"
        )
    checks = [Check("results folder", f"{rd} (no links)", fails)]

    # 2. lock chain
    lock_path = lock_path_for(prereg_path)
    lock = guarded(checks, "lock", lock_path, check_lock, lock_path, checks)

    # 3. pre-registration, pins, published hash
    study = guarded(
        checks, "pre-registration", prereg_path, check_prereg, prereg_path, lock, checks
    )
    # the run's environments decide how the outcome is compared (exact or tolerant)
    early: list[Check] = []
    records = guarded(early, "artifacts", rd / PROVENANCE_DIR, read_records, rd, early)
    envs = guarded(early, "environment", rd / LEDGER, run_environments, rd, records or [])
    exact = envs.exact_for if envs is not None else None
    # the outcome is re-made beside the other checks, which do not read what it computes
    # (most of the audit's time: the report's figures); it is still listed last. What both
    # import (the stages, statistics, scipy and pyarrow: 219 modules) is imported once, here
    import scipy.special  # noqa: F401

    from tailgate.stages.sensitivity import sensitivity_document  # noqa: F401

    to = Path(report_to) if report_to is not None else None
    with Forked(outcome_checks, rd, study, exact, to) as outcome:
        if expected_hash is not None:
            _add(
                checks, "published hash", lock_path, check_published, expected_hash, lock, lock_path
            )
        if expected_runs:
            _add(checks, "published runs", rd / LEDGER, check_expected_runs, rd, expected_runs)
        checks.extend(early)
        first = guarded(checks, "artifacts", rd / PROVENANCE_DIR, first_artifact, records)

        # 4. git
        _add(checks, "git", lock_path, check_git, prereg_path, lock_path, lock, first, no_git)
        if lock is not None and (tsa_cert is not None or lock.timestamps):
            _add(checks, "trusted timestamps", lock_path, check_timestamps, lock, tsa_cert, first)

        # 5-8. files, inputs, production head, code
        if records is not None:
            checks.extend(
                guarded(
                    checks, "artifacts", rd, check_artifacts, rd, records, lock, lock_path, first
                )
                or []
            )
            _add(checks, "code", rd / PROVENANCE_DIR, check_code, records)
            _add(checks, "runtime", rd / PROVENANCE_DIR, check_runtime, records)
            _add(checks, "run ledger", rd / LEDGER, check_ledger, rd, lock)
            _add(checks, "run results", rd / LEDGER, check_results, rd, records, lock)
            _add(checks, "confirmatory", rd, check_confirmatory, rd, records)

        # 9-11. realised design, verdicts, report
        if study is not None:
            verdict = Layout(rd).file("verdict")
            _add(checks, "realised design", verdict, check_realised, rd, study, lock)
        checks.extend(guarded(checks, "verdicts", rd, check_verdicts, rd, study, prereg_path) or [])
        remade, tolerant = outcome.result()
        checks.extend(remade)
        environment = environment_check(envs, tolerant)
        return AuditReport(rd, [c for c in (environment, *checks) if c is not None])


def _not_a_results_folder(rd: Path, prereg: str | Path | None) -> str | None:
    """Why ``rd`` cannot be audited as a results folder (None: it can be)."""
    if rd.is_symlink():
        return (
            f"{rd}: the results folder is a link to {os.readlink(rd)}; audit the real folder "
            "inside the project that registered it"
        )
    if not rd.is_dir():
        return f"{rd}: no such folder"
    if prereg is None and not NAME_RE.match(rd.name):
        return f"{rd}: not a results/<study> folder"
    return None


def _add(checks: list[Check], name: str, where: Path, fn: Any, *args: Any) -> None:
    """Append the check ``fn(*args)`` returns to ``checks`` (:func:`guarded`: a damaged input
    is a failed check naming ``where`` instead, and None is appended, dropped at the end)."""
    checks.append(guarded(checks, name, where, fn, *args))
