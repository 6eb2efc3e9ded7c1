"""The CLI explains itself and keeps its exit codes."""

from __future__ import annotations

import pytest
from tailgate.cli import main

VERBS = ["design", "freeze", "verify", "amend", "audit"]


def test_top_level_help_lists_verbs_and_exit_codes(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for verb in VERBS:
        assert verb in out
    assert "3  refused" in out and "4  audit failed" in out


@pytest.mark.parametrize("verb", VERBS)
def test_each_verb_explains_itself(capsys, verb):
    assert main([verb, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"usage: tailgate {verb}" in out and "exit codes" in out
    assert len(out.split("\n\n")[1]) > 80  # a real description


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["design"], ["amend", "x.yaml"]])
def test_usage_errors_exit_2(capsys, argv):
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_internal_errors_exit_1(capsys, monkeypatch, frozen):
    import tailgate.protocol.design as design

    def boom(study):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(design, "derived_design", boom)
    assert main(["design", str(frozen.prereg)]) == 1
    err = capsys.readouterr().err
    assert "internal error" in err and "kaboom" in err and "Traceback" not in err
