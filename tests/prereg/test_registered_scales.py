"""What is registered is what runs, for the scales: an unbounded scorer (values outside [0, 1]) is
analysed on identity only, so a headline scale the run would not compute is refused when the
registration loads, and ``tailgate init`` writes scales the run uses for lattice grades."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tailgate.errors import PreregError
from tailgate.plans.reads import scales_for
from tailgate.plans.registration import load
from tailgate.stages.verdict import headline_of


def _grades(path: Path, rows: int = 400, seed: int = 3) -> None:
    """Two conditions of judge grades on the 0–4 lattice (unbounded: values above 1)."""
    rng = np.random.default_rng(seed)
    parts = [
        pd.DataFrame(
            {
                "prompt_id": np.arange(rows),
                "model": cond,
                "grade": rng.integers(0, 5, rows).astype(float),
            }
        )
        for cond in ("judge-a", "judge-b")
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.concat(parts).to_csv(path, index=False)


def _init(root: Path, source: Path) -> Path:
    cmd = [sys.executable, "-m", "tailgate.cli", "init", "grades", "--from-import", str(source)]
    res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    return root / "preregistrations" / "grades.yaml"


def test_init_of_lattice_grades_registers_the_scales_the_run_computes(tmp_path):
    _grades(tmp_path / "data" / "grades.csv")
    study = load(_init(tmp_path, tmp_path / "data" / "grades.csv"))
    (scorer,) = study.scorers()
    assert scorer["bounded"] is False
    # every registered scale is computed, and the headline is one of them
    assert study.data["transform"]["scales"] == scales_for(study, scorer["name"]) == ["identity"]
    assert study.protocol["headline_scale"] == headline_of(study)["scale"] == "identity"


def test_a_headline_scale_the_run_would_not_compute_is_refused(tmp_path):
    _grades(tmp_path / "data" / "grades.csv")
    path = _init(tmp_path, tmp_path / "data" / "grades.csv")
    text = path.read_text()
    edited = text.replace("  scales: [identity]", "  scales: [identity, logit]", 1).replace(
        "  headline_scale: identity", "  headline_scale: logit", 1
    )
    assert edited != text
    path.write_text(edited)
    with pytest.raises(PreregError) as err:
        load(path)
    assert err.value.field == "protocol.headline_scale" and "bounded: false" in str(err.value)
    # scales no scorer can take are refused too
    path.write_text(text.replace("  scales: [identity]", "  scales: [identity, logit]", 1))
    with pytest.raises(PreregError) as err:
        load(path)
    assert err.value.field == "transform.scales" and "logit" in str(err.value)
