"""Every command that takes a registration ends with 0, 2 or 3, never 1 (an internal error), on
any registration the schema allows and on any registration one edit away from it.

The registrations are drawn from the schema (:mod:`registration_strategies`): the protocol on
and off, each analysis kind, each scorer kind, scale and ``ties`` rule, the simulate and import
backends; then amended within the schema, or broken (a wrong type, an out-of-range number, an
unknown key, a missing required field). The commands run in this process (:mod:`cli_call`), as
the installed ``tailgate`` script runs them; Snakemake's parse-time guard is called as the
Snakefile calls it. The number of examples is the Hypothesis profile's (``tests/conftest.py``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cli_call import tailgate
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from registration_strategies import (
    Registration,
    amendments,
    mutations,
    registrations,
    write_project,
)
from tailgate.plans.registration import workflow_guard
from tailgate.prereg.committed import MODE_ENV

#: what a command may end with on a registration: ok, invalid input, refused
ALLOWED = (0, 2, 3)

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: a valid registration runs every command and an amendment (about twice a broken one's time):
#: half the profile's examples
VALID = settings(SETTINGS, max_examples=max(10, settings.default.max_examples // 2))


def _run(root: Path, reg: Registration, *args: str) -> int:
    res = tailgate(*args, cwd=root)
    assert res.returncode in ALLOWED, (
        f"tailgate {' '.join(args)} exited {res.returncode}\n{res.stderr[-3000:]}\n"
        f"--- {reg.name}.yaml\n{reg.yaml()}"
    )
    return res.returncode


def _guard(root: Path, reg: Registration, exploratory: bool) -> int:
    """The Snakefile's parse-time guard: the study, or SystemExit with the CLI's code."""
    saved = os.environ.get(MODE_ENV)
    try:
        workflow_guard(reg.name, root, exploratory=exploratory)
        return 0
    except SystemExit as exc:
        assert exc.code in ALLOWED, f"guard exited {exc.code}\n{reg.yaml()}"
        return int(exc.code)
    finally:  # the guard sets the run mode of this process's jobs
        if saved is None:
            os.environ.pop(MODE_ENV, None)
        else:
            os.environ[MODE_ENV] = saved


def _every_command(root: Path, reg: Registration, exploratory: bool) -> dict[str, int]:
    prereg = f"preregistrations/{reg.name}.yaml"
    return {
        "design": _run(root, reg, "design", prereg),
        "freeze": _run(root, reg, "freeze", prereg),
        "verify": _run(root, reg, "verify", prereg),
        "status": _run(root, reg, "status", reg.name),
        "multiverse": _run(root, reg, "multiverse", prereg, f"results/{reg.name}"),
        "guard": _guard(root, reg, exploratory),
    }


@VALID
@given(reg=registrations(), exploratory=st.booleans(), data=st.data())
def test_no_command_fails_internally_on_a_valid_registration(reg, exploratory, data):
    """design, freeze, verify, status, multiverse and the parse-time guard on a registration;
    once it is frozen, an amendment within the schema, and verify after it: 0, 2 or 3 each, and
    a registration that froze verifies (and after an accepted amendment still does)."""
    # a project per example in a folder of its own (pytest's tmp_path is one for all examples)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_project(root, reg)
        codes = _every_command(root, reg, exploratory)
        event(f"{next(iter(reg.doc.get('analyses', {'protocol': 0})))} freeze {codes['freeze']}")
        if codes["freeze"] != 0:
            return
        assert codes["verify"] == 0, codes
        amended, what = data.draw(amendments(reg), label="amendment")
        write_project(root, amended)
        prereg = f"preregistrations/{reg.name}.yaml"
        code = _run(root, amended, "amend", prereg, "--reason", f"change {what}")
        if code == 0:
            assert _run(root, amended, "verify", prereg) == 0
        _run(root, amended, "status", reg.name)
        _guard(root, amended, exploratory)


@SETTINGS
@given(reg=registrations(), frozen_first=st.booleans(), data=st.data())
def test_no_command_fails_internally_on_a_broken_registration(reg, frozen_first, data):
    """The same commands on a registration one edit outside the schema (or past a cross-field
    rule), unfrozen or edited after its freeze: 0, 2 or 3, never 1."""
    broken, what = data.draw(mutations(reg), label="mutation")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        prereg = f"preregistrations/{reg.name}.yaml"
        if frozen_first:
            write_project(root, reg)
            tailgate("freeze", prereg, cwd=root)
        write_project(root, broken)
        _every_command(root, broken, exploratory=True)
        _run(root, broken, "amend", prereg, "--reason", what)
