"""Every committed lock in preregistrations/ still matches its registration: fields added to the
schema without defaults (the composite null's ``null_model`` and ``min_null_queries``, the
severity kind's ``decisive.rule``, ``protocol.lr_calibration``) leave existing canonical hashes
unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from tailgate.cli import main

PREREGS = Path(__file__).resolve().parents[2] / "preregistrations"
LOCKED = sorted(
    p.with_name(p.name.replace(".lock.json", ".yaml")) for p in PREREGS.glob("*.lock.json")
)


def test_the_shipped_studies_are_locked() -> None:
    assert len(LOCKED) >= 4


@pytest.mark.parametrize("prereg", LOCKED, ids=lambda p: p.stem)
def test_a_shipped_lock_verifies(prereg: Path, capsys) -> None:
    assert main(["verify", str(prereg)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("prereg", LOCKED, ids=lambda p: p.stem)
def test_a_shipped_lock_is_append_only_in_the_history(prereg: Path) -> None:
    """Every committed version of a shipped lock extends the one before it, as the audit
    requires: a shipped study registered afresh takes a new name (a new lock file), never a
    replaced lock."""
    from tailgate.prereg.history import lock_history

    lock = prereg.with_name(prereg.name.replace(".yaml", ".lock.json"))
    assert lock_history(lock).violations == []
