"""What a scorer or embedder loads, and why the reproduction cannot load it here
(:mod:`tailgate.runtime.loadable`), and ``audit --generate`` without ``--reproduce``."""

from __future__ import annotations

from pathlib import Path

import pytest
from tailgate.prereg.validated import Study
from tailgate.runtime.loadable import Need, model_needs, scorer_needs, why_unloadable


def _study(tmp_path: Path) -> Study:
    (tmp_path / "judge").mkdir()
    return Study(
        tmp_path / "study.yaml",
        {
            "models": {
                "local": {"id": "judge", "dtype": "float32"},
                "hub": {"id": "no-such-org/no-such-model", "revision": "main"},
                "gone": {"id": "/nonexistent/model"},
            },
            "scorers": [
                {"name": "nll", "kind": "token_nll", "judge": "local"},
                {"name": "hubnll", "kind": "token_nll", "judge": "hub"},
                {"name": "gonenll", "kind": "token_nll", "judge": "gone"},
                {"name": "prof", "kind": "profanity"},
                {"name": "len", "kind": "column", "column": "n"},
                {"name": "tox", "kind": "detoxify", "checkpoint": "missing.ckpt"},
            ],
        },
        "0",
        "0",
    )


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))


def test_local_models_and_model_free_scorers_load(tmp_path, offline):
    study = _study(tmp_path)
    for name in ("nll", "prof", "len"):
        assert why_unloadable(scorer_needs(study, name), tmp_path) is None, name
    assert scorer_needs(study, "len") == []
    assert why_unloadable(model_needs(study, "local"), tmp_path) is None


def test_each_unloadable_model_names_itself_and_why(tmp_path, offline):
    study = _study(tmp_path)
    hub = why_unloadable(scorer_needs(study, "hubnll"), tmp_path)
    assert hub.startswith("judge model 'hub' (no-such-org/no-such-model): a hub id")
    assert "offline" in hub
    gone = why_unloadable(scorer_needs(study, "gonenll"), tmp_path)
    assert gone == "judge model 'gone' (/nonexistent/model): no such local path"
    tox = why_unloadable(scorer_needs(study, "tox"), tmp_path)
    assert tox == "checkpoint missing.ckpt: no such local file or folder"
    missing = why_unloadable([Need("package 'nope'", package="no_such_package_x")], tmp_path)
    assert missing == "package 'nope': the package is not installed"


def test_generate_without_reproduce_is_a_usage_error(tmp_path, capsys):
    from tailgate.cli import main

    assert main(["audit", str(tmp_path), "--generate"]) == 2
    assert "--generate re-generates data for --reproduce only" in capsys.readouterr().err
