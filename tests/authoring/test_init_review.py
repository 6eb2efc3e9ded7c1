"""What ``tailgate init --from-import`` and ``tailgate design`` tell a researcher before the
freeze: G3 that cannot pass, ties in lattice scores with the threshold rule that handles them,
tolerances proposed in each scale's units, and an import study's file without the template's
copy advice or the transformers prompt block."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy.special import logit
from tailgate.plans.registration import load
from tailgate.protocol.registered import tolerances_for


def _cli(root: Path, *args: str | Path) -> subprocess.CompletedProcess:
    """``tailgate ARGS`` in ``root`` (``design`` in this process, as the suite runs it)."""
    from cli_call import tailgate

    return tailgate(*args, cwd=root)


def _write(root: Path, frame: pd.DataFrame) -> str:
    (root / "data").mkdir(parents=True, exist_ok=True)
    frame.to_csv(root / "data" / "scores.csv", index=False)
    return "data/scores.csv"


def _grades(rows: int, seed: int = 3) -> pd.DataFrame:
    """0–4 lattice grades of two conditions."""
    rng = np.random.default_rng(seed)
    grades = {c: rng.integers(0, 5, rows).astype(float) for c in ("judge-a", "judge-b")}
    return pd.concat(
        pd.DataFrame({"prompt_id": np.arange(rows), "model": c, "grade": g})
        for c, g in grades.items()
    )


def _probabilities(rows: int, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for c, loc in (("model-a", -4.0), ("model-b", -3.6)):
        z = rng.logistic(loc, 1.0, rows)
        parts.append(pd.DataFrame({"id": np.arange(rows), "model": c, "tox": 1 / (1 + np.exp(-z))}))
    return pd.concat(parts)


def test_init_warns_that_g3_cannot_pass_and_writes_the_lattice_rule_for_grades(tmp_path):
    src = _write(tmp_path, _grades(400))
    res = _cli(tmp_path, "init", "grades", "--from-import", src)
    assert res.returncode == 0, res.stderr
    # 400 rows: ⌊400 · (1 − 0.95)⌋ = 20 exceedances at the lowest band threshold, N* = 500
    assert re.search(r"G3 cannot pass: .* at most 20 exceedances .* below N\* = 500", res.stdout)
    # grades lie on a lattice: init writes the rule that fits them (the discretised likelihood)
    assert "ties: scorer grade" in res.stdout and "ties: lattice is written" in res.stdout
    prereg = tmp_path / "preregistrations" / "grades.yaml"
    assert "    ties: lattice " in prereg.read_text()
    design = _cli(tmp_path, "design", prereg)
    assert "registered: ties: lattice" in design.stdout
    # without it the advice is the rule that works on a lattice, not half_step
    prereg.write_text(prereg.read_text().replace("    ties: lattice ", "    # ties: lattice ", 1))
    design = _cli(tmp_path, "design", prereg)
    assert "ties: scorer grade has tied values" in design.stdout
    assert "register protocol.thresholds.ties: lattice before the freeze" in design.stdout
    band = "    band: [0.95,"
    text = prereg.read_text().replace(band, "    ties: half_step\n" + band, 1)
    prereg.write_text(text)
    design = _cli(tmp_path, "design", prereg)
    assert "half_step keeps the tied values but the continuous fit still biases" in design.stdout


def test_continuous_scores_with_enough_rows_get_no_g3_or_tie_warning(tmp_path):
    frame = _probabilities(12_000)
    src = _write(tmp_path, frame)
    res = _cli(tmp_path, "init", "probs", "--from-import", src)
    assert res.returncode == 0, res.stderr
    assert "G3" not in res.stdout and "ties:" not in res.stdout  # 600 exceedances ≥ 500


def test_init_proposes_tolerances_in_each_scales_units_marked_review(tmp_path):
    frame = _probabilities(3000)
    src = _write(tmp_path, frame)
    assert _cli(tmp_path, "init", "probs", "--from-import", src).returncode == 0
    prereg = tmp_path / "preregistrations" / "probs.yaml"
    text = prereg.read_text()
    assert re.search(r"tox/logit: \{mean: [0-9.e-]+, tvar: [0-9.e-]+\}\s+# REVIEW", text)
    study = load(prereg)
    # independent reference: the pooled within-condition s.d. on each scale, from the file's
    # probabilities (the logit after the registered ε = 1e-6 clipping)
    probs = np.stack([g["tox"].to_numpy() for _, g in frame.groupby("model", sort=False)])
    for scale, values in (("logit", logit(np.clip(probs, 1e-6, 1 - 1e-6))), ("probability", probs)):
        sd = float(np.sqrt(np.mean([np.var(v, ddof=1) for v in values])))  # equal group sizes
        tol = tolerances_for(study, "tox", scale)
        assert tol["mean"] == float(f"{0.1 * sd:.2g}") and tol["tvar"] == float(f"{0.2 * sd:.2g}")
    # the two scales' tolerances differ by the scales' spread, not one number for both
    assert (
        tolerances_for(study, "tox", "logit")["mean"]
        > 5 * tolerances_for(study, "tox", "probability")["mean"]
    )


def test_an_import_study_has_its_own_header_and_no_transformers_prompt_block(tmp_path):
    frame = _probabilities(500)
    src = _write(tmp_path, frame)
    assert _cli(tmp_path, "init", "probs", "--from-import", src).returncode == 0
    text = (tmp_path / "preregistrations" / "probs.yaml").read_text()
    assert "Copy to preregistrations" not in text and "template" not in text.split("\n\n")[0]
    assert "# Pre-registration of study probs" in text
    data = yaml.safe_load(text)["data"]
    assert "prompts" not in data and data["backend"] == "import"
    assert "allenai/real-toxicity-prompts" not in text
    # the prompt selection's defaults still apply: the same canonical form as written out
    study = load(tmp_path / "preregistrations" / "probs.yaml")
    assert study.data["data"]["prompts"]["source"] == "allenai/real-toxicity-prompts"
