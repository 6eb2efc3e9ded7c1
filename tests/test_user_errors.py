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
