"""A study as the entry points load it: the contract's checks, then each analysis kind's own.

:func:`tailgate.prereg.study.load` checks what the contract knows (strict YAML, the schema, the
cross-field rules); an ``analyses`` entry's criteria, conditions and scorers are checked by its
kind (:func:`tailgate.analyses.registry.check_analyses`), a layer above the contract. Every entry
point that acts on a registration loads it here — ``tailgate design``, ``freeze``, ``amend``,
``verify``, the analyses commands, ``init``'s proposals, the audit and Snakemake's parse-time
guard — so a registration the run would refuse is never designed, frozen or run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tailgate.analyses.registry import check_analyses
from tailgate.errors import InputError, TailgateError
from tailgate.prereg import guard
from tailgate.prereg.committed import set_run_mode
from tailgate.prereg.study import Study
from tailgate.prereg.study import load as load_contract
from tailgate.runtime.loadable import missing_packages

__all__ = ["load", "require_frozen", "workflow_guard"]


def _checked(study: Study) -> Study:
    check_analyses(study.data, study.path)
    return study


def load(path: str | Path) -> Study:
    """Load, validate and hash the pre-registration at ``path``, its analyses included.

    Raises :class:`tailgate.errors.PreregError` naming the file, line, field and fix.
    """
    return _checked(load_contract(path))


def require_frozen(path: str | Path) -> Study:
    """The study at ``path`` if it matches its lock's chain head (else
    :class:`tailgate.errors.RefusalError`) and its analyses are valid."""
    return _checked(guard.require_frozen(path))


def workflow_guard(
    study_name: str, root: str | Path = ".", *, exploratory: bool | str = False
) -> Study:
    """Parse-time guard for the Snakefile: the frozen (and, unless ``exploratory``, committed)
    study; otherwise the CLI's message on stderr and the CLI's exit code (3 refused, 2 invalid
    input, e.g. a registered scorer whose package is not installed) — ``SystemExit`` passes
    through Snakemake's error handling, so no traceback or job is shown and scripts see the same
    code. Sets the run mode its jobs inherit."""
    set_run_mode(exploratory in (True, "true"))  # `--config exploratory=true` gives a string
    prereg = Path(root) / "preregistrations" / f"{study_name}.yaml"
    try:
        study = _checked(guard.require_runnable(prereg))
        missing = missing_packages(study)
        if missing:  # refused before the first job, not when a job imports the package
            raise InputError("\n".join(str(p) for p in missing))
        return study
    except TailgateError as exc:
        print(str(exc), file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
