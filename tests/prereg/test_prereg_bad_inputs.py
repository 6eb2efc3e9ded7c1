"""The corpus of invalid pre-registrations: each gives exit 2, one paragraph naming the file,
the line and the field, no traceback, and no file written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BAD = Path(__file__).resolve().parent / "bad_inputs"
CASES = sorted(BAD.glob("*.yaml"))


def expected_field(path: Path) -> str:
    first = path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    assert first.startswith("# expect-field: ")
    return first.removeprefix("# expect-field: ").strip()


def test_corpus_is_large_enough():
    assert len(CASES) >= 30


@pytest.mark.parametrize("verb", ["design", "freeze"])
@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_bad_input_exits_2_naming_the_field(tmp_path, capsys, case, verb):
    from tailgate.cli import main

    pre = tmp_path / "preregistrations"
    pre.mkdir()
    target = pre / case.name
    shutil.copy(case, target)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code = main([verb, str(target)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "Traceback" not in err
    assert "\n\n" not in err and err.count("\n") == 0, "one paragraph"
    assert str(target) in err
    field = expected_field(case)
    if field != "(top level)":
        assert f"field '{field}" in err, err
    assert "line " in err
    assert "Fix:" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before, "no file may be written"


@pytest.mark.parametrize("name", ["duplicate_top_key", "nan_tolerance", "malformed_indent"])
def test_real_entry_point_prints_no_traceback(tmp_path, name):
    target = tmp_path / f"{name}.yaml"
    shutil.copy(BAD / target.name, target)
    res = subprocess.run(
        [sys.executable, "-m", "tailgate.cli", "verify", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stdout == ""


#: corpus case → how its fix ends: the closest registered name when one is close (a misspelt
#: enum value, key, model key, analysis kind or scorer), none when nothing is
FIX_ENDS = {
    "analysis_kind_misspelt": 'use one of the listed values; did you mean "dominance"?',
    "unknown_protocol_key": 'tvar_level, xi_bar; did you mean "delta_floor"?',
    "model_key_misspelt": 'or correct the key; did you mean "qwen-small"?',
    "analysis_scorer_misspelt": "use names from 'scorers' (tox); did you mean \"tox\"?",
    "bad_enum_backend": "Fix: use one of the listed values.",
    "pair_unknown_condition": "Fix: use names from 'conditions'.",
}


def test_a_fix_suggests_the_closest_name_only_when_one_is_close(tmp_path, capsys):
    from tailgate.cli import main

    pre = tmp_path / "preregistrations"
    pre.mkdir()
    for stem, end in FIX_ENDS.items():
        target = pre / f"{stem}.yaml"
        shutil.copy(BAD / target.name, target)
        assert main(["design", str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(end), err
        assert err.count("did you mean") == ("did you mean" in end), err
