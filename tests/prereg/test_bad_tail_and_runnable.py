"""The bad tail is declared once, on the scorer (``worse``), and every stage studies it; what
would fail after the freeze is refused by ``design`` and ``freeze`` first (an unknown direction,
a scorer or an embedding model whose package is missing, a constant imported column, one
condition); ``init`` names every column it leaves out, and why."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pandas as pd
import pytest
from conftest import REPO_ROOT, STUDY_TEXT
from scipy.special import logit
from tailgate.authoring.runnable import runnable_problems
from tailgate.data.transform import TransformError, transform_scores
from tailgate.errors import CPU_TORCH, InputError, PreregError
from tailgate.plans.registration import load
from tailgate.prereg.protocol_blocks import Thresholds, read_block


@pytest.mark.parametrize("scale", ["identity", "probability", "logit"])
def test_a_lower_is_worse_scorer_is_turned_round_so_its_low_tail_is_studied(scale):
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(0.0, 1.0, 500), [0.0, 1.0, 1e-9]])
    eps = 1e-6
    up = transform_scores(p, scale, eps)
    down = transform_scores(p, scale, eps, worse="lower")
    # independent references: -s, 1 - s, logit(clip(1 - s))
    want = {
        "identity": -p,
        "probability": 1.0 - p,
        "logit": logit(np.clip(1.0 - p, eps, 1.0 - eps)),
    }[scale]
    np.testing.assert_allclose(down.values, want, rtol=1e-11, atol=1e-12)  # 1 - ε rounds
    assert down.summary.worse == "lower" and up.summary.worse == "higher"
    # the largest severities are the lowest scores: the bad tail of a lower-is-worse scorer
    top = np.argsort(down.values, kind="stable")[-20:]
    assert set(top) == set(np.argsort(p, kind="stable")[:20])
    if scale == "logit":  # the clipped ends are counted at the oriented ends
        assert (down.n_clipped_low, down.n_clipped_high) == (up.n_clipped_high, up.n_clipped_low)
    with pytest.raises(TransformError, match="worse"):
        transform_scores(p, scale, eps, worse="up")


def _study(tmp_path, text: str):
    path = tmp_path / "preregistrations" / "study.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("study: NAME", "study: study"))
    return load(path)


def test_an_unknown_direction_and_a_missing_scorer_package_are_refused(tmp_path, monkeypatch):
    text = STUDY_TEXT.replace(
        "bounded: true}", "bounded: true, worse: null}\n  - {name: prof, kind: profanity}"
    )
    study = _study(tmp_path, text)
    real = importlib.util.find_spec

    def without_profanity_check(name, *args, **kwargs):
        return None if name == "profanity_check" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", without_profanity_check)
    problems = [str(p) for p in runnable_problems(study)]
    assert len(problems) == 2, problems
    assert "field 'scorers[0].worse'" in problems[0] and "worse: lower" in problems[0]
    assert "field 'scorers[1].kind'" in problems[1]
    assert "alt-profanity-check" in problems[1] and "-e '.[llm]'" in problems[1]
    # on a CPU machine, the line printed installs PyTorch's CPU build first, not the CUDA one
    assert problems[1].index(CPU_TORCH) < problems[1].index("-e '.[llm]'")
    from tailgate.authoring.freeze import freeze

    with pytest.raises(InputError, match="2 problems") as refused:  # freeze names both
        freeze(study.path)
    assert problems[0] in str(refused.value) and problems[1] in str(refused.value)
    assert not study.lock_path.exists()


def test_a_dominance_orientation_must_agree_with_the_scorers_worse(tmp_path):
    analysis = """analyses:
  ranking:
    kind: dominance
    conditions: [clean, noisy]
    scorers: [toxicity]
    orientation: {toxicity: higher_is_better}
    orders: [1]
    criteria:
      - {name: a, statistic: "r_fsd(clean, noisy)", comparison: "<=", threshold: 0.0}
"""
    text = STUDY_TEXT.replace("analyses: {}\n", analysis)
    with pytest.raises(PreregError, match=r"contradicts the scorer's `worse: higher`"):
        _study(tmp_path, text)
    agreed = text.replace("bounded: true}", "bounded: true, worse: lower}")
    assert _study(tmp_path, agreed).scorer("toxicity")["worse"] == "lower"


def test_init_names_dropped_columns_and_design_refuses_a_constant_one(tmp_path):
    from cli_call import tailgate

    rng = np.random.default_rng(5)
    n = 3000
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "id": np.arange(n),
                    "model": m,
                    "loss": rng.gamma(2.0, 1.0, n),
                    "headline": rng.uniform(0, 1, n),
                    "match": 0.0,
                    "note": "text",
                }
            )
            for m in ("a", "b")
        ],
        ignore_index=True,
    )
    frame.loc[[17, 4000], "headline"] = np.nan  # 2 NaNs in 6,000 rows
    (tmp_path / "data").mkdir()
    frame.to_csv(tmp_path / "data" / "scores.csv", index=False)
    res = tailgate("init", "s1", "--from-import", "data/scores.csv", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert (
        "column 'headline' skipped: 2 of 6000 rows are empty, NaN or infinite (rows 18, 4001)"
        in out
    )
    assert "column 'match' skipped: constant (every row is 0)" in out
    assert "column 'note' skipped: text, not a score" in out
    prereg = tmp_path / "preregistrations" / "s1.yaml"
    data = load(prereg).data
    assert [(s["name"], s.get("worse", "absent")) for s in data["scorers"]] == [("loss", None)]
    assert data["accepted_power"] is None
    assert "match" not in str(data["protocol"]["tolerances"])
    # registered by hand, the constant column is refused before the freeze (exit 2)
    text = prereg.read_text().replace("worse: null}", "worse: higher}")
    text = text.replace("score: loss ", "score: {loss: loss, match: match} ", 1)
    text = text.replace(
        "worse: higher}",
        "worse: higher}\n  - {name: match, kind: column, column: match, bounded: true}",
        1,
    )
    prereg.write_text(text)
    res = tailgate("design", prereg, cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "scorer 'match' (file column 'match') is constant in a (every value 0)" in res.stderr


def test_ties_are_looked_for_in_the_bad_tail_of_a_lower_is_worse_scorer():
    from tailgate.authoring.importcheck import tie_findings
    from tailgate.generate.importer import ImportedRows

    rng = np.random.default_rng(9)
    n = 2000
    # grades: a continuous upper part, ties only at the bottom (the bad tail when lower is worse)
    x = np.where(rng.uniform(size=n) < 0.2, 0.0, rng.uniform(1.0, 5.0, n))
    rows = ImportedRows(
        np.arange(n, dtype=np.int64),
        np.full(n, None, dtype=object),
        np.full(n, "a", dtype=object),
        np.full(n, "", dtype=object),
        np.full(n, "", dtype=object),
        {"grade": x},
    )

    class Study:
        has_protocol = True

        def __init__(self, worse):
            self.worse = worse
            block = {"headline": 0.95, "band": [0.95, 0.97], "ties": "strict"}
            self.thresholds = read_block(Thresholds, block)

        def conditions(self):
            return [{"name": "a"}]

        def scorer(self, name):
            return {"name": name, "kind": "column", "worse": self.worse}

    assert tie_findings(Study("higher"), rows, [("grade", "grade")]) == []
    (line,) = tie_findings(Study("lower"), rows, [("grade", "grade")])
    assert "ties: scorer grade has tied values at a band quantile" in line


def test_an_embedding_without_its_packages_is_refused(monkeypatch):
    """The perturbation example's energy test embeds responses with a registered model: without
    the llm extra, design and freeze say so (the embed jobs would fail after the freeze)."""
    study = load(REPO_ROOT / "preregistrations" / "perturbation-energy-example.yaml")
    assert runnable_problems(study) == []
    real = importlib.util.find_spec

    def without_torch(name, *args, **kwargs):
        return None if name == "torch" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", without_torch)
    (problem,) = [str(p) for p in runnable_problems(study)]
    assert "field 'analyses.composite-null.embedding.model'" in problem
    assert "needs torch" in problem and CPU_TORCH in problem and "-e '.[llm]'" in problem


@pytest.mark.parametrize(
    "study", sorted(p.stem for p in (REPO_ROOT / "preregistrations").glob("*.lock.json"))
)
def test_a_run_without_the_packages_its_jobs_need_is_refused_before_its_first_job(
    study, monkeypatch, capsys
):
    """Snakemake's parse-time guard: every shipped study either needs nothing beyond the Quick
    start's install (it starts) or is refused at once (exit 2) naming the install line, never
    after its first jobs (the perturbation example's embed jobs failed on ``import torch``)."""
    from tailgate.plans.registration import workflow_guard
    from tailgate.prereg.committed import MODE_ENV

    # the guard sets the run mode of this process's jobs: restored when the test ends, so that
    # records made later in this process are not marked exploratory
    monkeypatch.setenv(MODE_ENV, os.environ.get(MODE_ENV, "confirmatory"))
    name = study.removesuffix(".lock")
    loaded = workflow_guard(name, REPO_ROOT, exploratory=True)  # everything installed: it runs
    real = importlib.util.find_spec
    hidden = {"torch", "transformers", "detoxify", "profanity_check", "sklearn"}

    def quick_start(module, *args, **kwargs):  # what `pip install -e .` leaves out
        return None if module.split(".")[0] in hidden else real(module, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", quick_start)
    needs_llm = runnable_problems(loaded) != []
    assert needs_llm == (name == "perturbation-energy-example")  # the embedding model
    if not needs_llm:
        workflow_guard(name, REPO_ROOT, exploratory=True)
        return
    with pytest.raises(SystemExit) as refused:
        workflow_guard(name, REPO_ROOT, exploratory=True)
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert CPU_TORCH in err and "-e '.[llm]'" in err, err
