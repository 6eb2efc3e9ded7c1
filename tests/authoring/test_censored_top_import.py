"""A judge's grades capped at a top grade, imported under ``ties: lattice``: init and design advise
registering the ceiling where the grades pile up at it (advice only: nothing is censored until
it is registered), and freeze refuses a registered ceiling that an imported grade passes (the fit
stage would refuse it after the freeze), naming ``protocol.thresholds.ceiling`` (methods note
P10)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_lattice_import import init_project, tailgate


def capped_grades(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Grades 1–7: a latent 2 + Gamma score rounded, every grade above 7 recorded as 7."""
    return np.clip(np.round(2.0 + rng.gamma(2.0, 0.9 * (1.0, 1.2)[k], n)), 1, 7).astype(int)


def test_design_advises_a_ceiling_and_freeze_refuses_one_that_a_grade_passes(tmp_path):
    from tailgate.authoring.importcheck import import_findings
    from tailgate.plans.registration import load

    proj, init = init_project(tmp_path, "capped", capped_grades)
    assert "register protocol.thresholds.ceiling: 7 " in init.stdout + init.stderr
    proj.prereg.write_text(proj.prereg.read_text().replace("worse: null}", "worse: higher}"))
    lines = [ln for ln in import_findings(load(proj.prereg)) if "ceiling:" in ln]
    assert lines and "register protocol.thresholds.ceiling: 7 " in lines[0], lines
    proj.replace("    ties: lattice ", "    ceiling: 6\n    ties: lattice ")
    assert not any("ceiling:" in ln for ln in import_findings(load(proj.prereg)))
    res = tailgate(proj.root, "freeze", proj.prereg)
    assert res.returncode == 2, res.stdout + res.stderr
    err = res.stdout + res.stderr
    assert "protocol.thresholds.ceiling" in err and "lie beyond" in err
    assert "Traceback" not in err
