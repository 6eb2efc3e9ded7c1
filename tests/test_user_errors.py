"""One root for the user's mistakes: every error class tailgate raises for something the user can
fix derives from :class:`tailgate.errors.TailgateError`, and the command and the rule jobs decide
by that class alone (message, exit code, no traceback)."""

from __future__ import annotations

import pytest
from tailgate.errors import EXIT_INVALID, EXIT_REFUSED, TailgateError
from tailgate.stages.rule import is_user_error


def _user_error_classes() -> list[tuple[type[BaseException], int]]:
    from tailgate.data.transform import TransformError
    from tailgate.generate.harness import HarnessMissingError
    from tailgate.generate.importer import ImportDataError
    from tailgate.generate.shards import ShardInputError
    from tailgate.generate.spec import DataInputError
    from tailgate.prereg.lock import LockIntegrityError
    from tailgate.report.model import ReportInputError
    from tailgate.score.common import ScoringError

    return [
        (DataInputError, EXIT_INVALID),
        (ShardInputError, EXIT_INVALID),
        (ImportDataError, EXIT_INVALID),
        (HarnessMissingError, EXIT_INVALID),
        (ScoringError, EXIT_INVALID),
        (TransformError, EXIT_INVALID),
        (ReportInputError, EXIT_INVALID),
        (LockIntegrityError, EXIT_REFUSED),
    ]


@pytest.mark.parametrize(
    ("cls", "code"), _user_error_classes(), ids=lambda v: getattr(v, "__name__", str(v))
)
def test_every_user_error_has_the_one_root(cls: type[TailgateError], code: int) -> None:
    assert issubclass(cls, TailgateError)
    exc = cls("the field is missing. Fix: add it.")
    assert is_user_error(exc) and exc.exit_code == code


def test_value_errors_stay_value_errors() -> None:
    # the classes that were ValueErrors before they had the root still are (callers catch them)
    for cls, _ in _user_error_classes()[:3] + _user_error_classes()[5:7]:
        assert issubclass(cls, ValueError), cls
    assert not is_user_error(ValueError("x"))


def test_the_command_and_a_job_decide_by_the_root(tmp_path, capsys) -> None:
    import argparse

    from tailgate.cli.base import call
    from tailgate.data.transform import TransformError
    from tailgate.stages.rule import run

    def broken(**_: object) -> int:
        raise TransformError("scores outside [0, 1]. Fix: register the identity scale.")

    args = argparse.Namespace(func=lambda a: broken(), debug=False)
    assert call(args) == EXIT_INVALID
    with pytest.raises(SystemExit) as info:
        run(str(tmp_path / "job.log"), broken)
    assert info.value.code == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.count("scores outside [0, 1]") == 2 and "Traceback" not in err


@pytest.fixture
def sigint_handler():
    """The process's Ctrl-C handler as it was (a job's adapter leaves its own installed: the job
    ends with it)."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)


def _ctrl_c(*_: object, **__: object) -> None:
    import signal

    signal.raise_signal(signal.SIGINT)


def _the_job_stops_quietly(tmp_path, capsys, stage) -> None:
    from tailgate.stages.rule import run

    with pytest.raises(SystemExit) as info:
        run(str(tmp_path / "job.log"), stage)
    assert info.value.code == 130
    captured = capsys.readouterr()
    assert captured.out == captured.err == ""
    assert "Traceback" not in (tmp_path / "job.log").read_text()


@pytest.mark.usefixtures("sigint_handler")
def test_ctrl_c_in_the_stage_ends_the_job_with_130_and_no_traceback(tmp_path, capsys) -> None:
    _the_job_stops_quietly(tmp_path, capsys, _ctrl_c)


@pytest.mark.usefixtures("sigint_handler")
def test_ctrl_c_as_the_log_closes_ends_the_job_with_130_and_no_traceback(
    tmp_path, capsys, monkeypatch
) -> None:
    """The stage has returned; the signal arrives while the job's output goes back to its
    streams (a loaded machine made a traceback of this window in the interrupt test)."""
    import contextlib

    class Interrupted(contextlib.redirect_stderr):
        def __exit__(self, *exc: object) -> None:
            super().__exit__(*exc)
            _ctrl_c()

    monkeypatch.setattr(contextlib, "redirect_stderr", Interrupted)
    _the_job_stops_quietly(tmp_path, capsys, lambda: None)


@pytest.mark.usefixtures("sigint_handler")
def test_ctrl_c_while_a_failure_is_reported_ends_the_job_with_130(
    tmp_path, capsys, monkeypatch
) -> None:
    import traceback

    def broken() -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(traceback, "print_exc", _ctrl_c)
    _the_job_stops_quietly(tmp_path, capsys, broken)
