"""What the run would refuse is refused by ``design`` and ``freeze`` first: a criterion naming a
condition the analysis does not have, and a design below the Eq. 2 bound of Zhou (2026) without an
accepted lower power. ``design`` exits 2 whenever ``freeze`` would, and nothing is written."""

from __future__ import annotations

import json

DOMINANCE = """analyses:
  ranking:
    kind: dominance
    conditions: [clean, noisy]
    scorers: [toxicity]
    scale: probability
    orientation: {toxicity: higher_is_worse}
    orders: [1]
    resamples: 200
    criteria:
      - {name: clean-safer, statistic: "r_fsd(CLEAN_NAME, noisy)", comparison: "<=", threshold: 0.0}
"""


def _with_analysis(study_text: str, condition: str) -> str:
    """The small study with one dominance analysis whose criterion names ``condition``."""
    assert "analyses: {}\n" in study_text
    return study_text.replace("analyses: {}\n", DOMINANCE.replace("CLEAN_NAME", condition))


def test_a_criterion_naming_an_unknown_condition_is_refused_by_design_and_freeze(
    project, study_text
):
    proj = project
    proj.write(_with_analysis(study_text, "claen").replace("study: NAME", "study: study"))
    for verb in ("design", "freeze"):
        code, out, err = proj.cli(verb, proj.prereg)
        assert code == 2, (verb, out, err)
        assert "claen" in err and "analyses.ranking.criteria[0].statistic" in err, err
        assert "Traceback" not in out + err
    assert not proj.lock.exists()
    # the same registration with the right name is accepted by both
    proj.write(_with_analysis(study_text, "clean").replace("study: NAME", "study: study"))
    code, out, err = proj.cli("freeze", proj.prereg)
    assert code == 0, err
    assert proj.lock.exists()


def test_design_exits_2_whenever_freeze_would_refuse_the_cap(project, study_text):
    small = study_text.replace("sample_cap: 40000", "sample_cap: 2000")
    proj = project
    proj.write(small.replace("study: NAME", "study: study"))
    code, out, err = proj.cli("design", proj.prereg)
    assert code == 2, out
    assert "cap check: FAILS" in out
    assert "freeze would refuse" in err and "accepted_power" in err
    code, out, err = proj.cli("design", proj.prereg, "--json")
    assert code == 2
    doc = json.loads(out)
    assert doc["freeze_refusals"] and "accepted_power" in doc["freeze_refusals"][0]
    code, out, err = proj.cli("freeze", proj.prereg)
    assert code == 2 and "accepted_power" in err
    assert not proj.lock.exists()
    # the fix the message names makes both pass
    supported = doc["design"]["supported_power"]  # 0: H1 cannot PASS at this size
    proj.write(
        small.replace("study: NAME", "study: study").replace(
            "accepted_power: null", f"accepted_power: {supported:g}"
        )
    )
    code, out, err = proj.cli("design", proj.prereg)
    assert code == 0, err
    code, out, err = proj.cli("freeze", proj.prereg)
    assert code == 0, err


def test_every_entry_point_checks_the_analyses_itself(project, study_text, monkeypatch):
    """A lock that holds an analysis the run would refuse (made by a freeze that skipped the
    kinds' checks, as another tool or a hand-made lock could): ``verify``, ``design`` and
    Snakemake's parse-time guard each refuse it as invalid input (exit 2, the field named), not
    only ``freeze``."""
    import tailgate.plans.registration

    proj = project
    proj.write(_with_analysis(study_text, "claen").replace("study: NAME", "study: study"))
    monkeypatch.setattr(tailgate.plans.registration, "check_analyses", lambda *_a, **_k: None)
    proj.freeze()
    monkeypatch.undo()
    assert proj.lock.exists()
    for verb in ("verify", "design"):
        code, out, err = proj.cli(verb, proj.prereg)
        assert code == 2, (verb, out, err)
        assert "analyses.ranking.criteria[0].statistic" in err and "Traceback" not in err, err
    run = proj.snakemake("-n")
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert "analyses.ranking.criteria[0].statistic" in run.stderr
    assert "Traceback" not in run.stdout + run.stderr
