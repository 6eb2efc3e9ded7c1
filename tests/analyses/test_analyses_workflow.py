"""The analyses framework through Snakemake: the rule runs, verdict.json lists every criterion,
the report shows the criteria table, the cards and the analysis section, a changed criterion is
refused, and the audit re-derives the outcomes (and catches a tampered one) and reproduces an
amended study."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from tailgate.plans.registration import load
from tailgate.report.glossary import cite
from tailgate.report.sections import section_of
from tailgate.runs.joblog import job_stats


def test_analysis_runs_and_verdict_lists_every_criterion(analysis_run):
    rd = analysis_run.results
    stats = json.loads((rd / "analyses" / "ranking" / "statistics.json").read_text())
    assert stats["kind"] == "dominance"
    names = [c["name"] for c in stats["criteria"]]
    assert names == ["base-safer-than-heavy", "heavy-not-safer", "heavy-ranked-last"]
    outcomes = {c["name"]: c["outcome"] for c in stats["criteria"]}
    # heavy's GPD(0.4) tail makes it the least safe (7,200-prompt conditions); the difference
    # lies in the upper tail, which the distinctness guard (A² and W2 by permutation, on
    # pooled-quantile cells of 14,400 values) finds (p = 0.00056, where the Anderson–Darling
    # asymptotic p alone gave 0.17), but the bootstrap puts mass above 0 in Δε (base vs twin
    # is 0/0 noise): the bound does not assert it, so neither does the criterion, as the ε
    # table's missing ✓ says (methods notes D7, D8)
    assert outcomes["base-safer-than-heavy"] == "FAIL"
    base_heavy = stats["criteria"][0]
    assert "the distinctness guard rejects" in base_heavy["note"]
    assert 0.0 < base_heavy["value"] < 1.0
    assert stats["statistics"]["targets"]["tox"]["fsd"]["wins"][0][2] == 0
    assert outcomes["heavy-not-safer"] == "FAIL"
    assert outcomes["heavy-ranked-last"] == "BORDERLINE"  # |3 - 3| <= 0.5: never a pass
    verdict = json.loads((rd / "verdict.json").read_text())
    rows = verdict["criteria"]
    assert rows[0]["analysis"] == "protocol" and rows[0]["name"] == "H1"
    assert rows[0]["outcome"] == verdict["h1"]["verdict"]  # one word: PASS or KILL
    assert [(r["analysis"], r["name"], r["outcome"]) for r in rows[1:]] == [
        ("ranking", c["name"], c["outcome"]) for c in stats["criteria"]
    ]
    assert (rd / "provenance" / "analyses__ranking__statistics.json.json").is_file()
    # the calibration the registration leaves absent (methods note D7) is stored with every bound
    for o in ("fsd", "ssd"):
        assert stats["statistics"]["targets"]["tox"][o]["calibration"] == "logit_percentile"
    assert stats["statistics"]["settings"]["calibration"] == "logit_percentile"


def test_report_has_criteria_table_cards_and_section(analysis_run):
    md = (analysis_run.results / "report.md").read_text()
    assert "Pre-registered criteria and outcomes" in md
    assert "| ranking | base-safer-than-heavy | r_fsd(base, heavy) <= 0" in md
    assert "Per-condition cards" in md
    assert "ranking: R-SSD rank (tox)" in md
    assert "calibration logit_percentile: bootstrap-percentile bound" in md
    assert cite(f"Analysis ranking: {section_of('dominance').title}") in md
    html = (analysis_run.results / "report.html").read_text()
    assert html.count("data:image/png;base64") >= 1 and "mean-risk ranking tox" in html


def _outcomes(proj) -> dict[str, str]:
    path = proj.results / "analyses" / "ranking" / "statistics.json"
    return {c["name"]: c["outcome"] for c in json.loads(path.read_text())["criteria"]}


def test_changed_criterion_after_data_is_refused(analysis_copy):
    analysis_copy.replace('comparison: "==", threshold: 3,', 'comparison: "<=", threshold: 3,')
    res = analysis_copy.snakemake("-n")
    assert res.returncode != 0
    assert "analyses.ranking.criteria" in (res.stdout + res.stderr)


def test_an_amended_criterion_is_reported_beside_its_registered_outcome(analysis_copy):
    """A criterion loosened after data: the report shows every criterion's outcome under the
    registered plan (entry 0, re-derived from the same statistics) beside the amended one; the
    audit re-derives that table, and ``--reproduce`` re-runs the whole amended study from the
    registration in a scratch project and finds every file the same."""
    before = _outcomes(analysis_copy)
    analysis_copy.replace(
        'statistic: "r_fsd(heavy, base)", comparison: "<=",\n         threshold: 0.0}',
        'statistic: "r_fsd(heavy, base)", comparison: "<=",\n         threshold: 1.0e9}',
    )
    res = analysis_copy.cli("amend", analysis_copy.prereg, "--reason", "looser")
    assert res.returncode == 0, res.stdout + res.stderr
    res = analysis_copy.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # a criterion is graded, never computed: the statistics stay, only the grading re-runs
    jobs = job_stats(res.stdout + res.stderr)
    assert jobs.get("grade") == 1 and "analysis" not in jobs, jobs
    after = _outcomes(analysis_copy)
    assert after["heavy-not-safer"] == "PASS"
    md = (analysis_copy.results / "report.md").read_text()
    table = md[md.index("Analysis criteria under the registered plan and as amended") :]
    rows = {
        cells[1]: cells[2:5]
        for cells in (
            [c.strip() for c in x.strip("|").split("|")]
            for x in table.splitlines()
            if x.startswith("| ranking |")
        )
    }
    assert rows["heavy-not-safer"] == [
        before["heavy-not-safer"],
        "PASS",
        "changed by an amendment",
    ]
    assert rows["heavy-ranked-last"] == [
        before["heavy-ranked-last"],
        after["heavy-ranked-last"],
        "unchanged",
    ]
    res = analysis_copy.cli("audit", "--no-git", "--reproduce", analysis_copy.results)
    assert res.returncode == 0, res.stdout[-3000:]
    assert "compared with a re-run from the data" in res.stdout


def test_audit_rederives_outcomes_and_catches_a_tampered_one(analysis_copy):
    res = analysis_copy.cli("audit", "--no-git", analysis_copy.results)
    assert res.returncode == 0, res.stdout[-3000:]
    assert "verdicts: analyses" in res.stdout
    path = analysis_copy.results / "analyses" / "ranking" / "statistics.json"
    doc = json.loads(path.read_text())
    doc["criteria"][1]["outcome"] = "PASS"
    path.write_text(json.dumps(doc))
    res = analysis_copy.cli("audit", "--no-git", analysis_copy.results)
    assert res.returncode == 4
    assert "criterion 'heavy-not-safer' recorded PASS" in res.stdout
    # graded again from the stored statistics (measures.json) and compared whole
    assert f"{path}: differs from the one re-made from the stored statistics:" in res.stdout


def _lock_without_analyses(repo: Path) -> dict:
    """The newest committed demo lock whose registration has no analyses."""
    log = subprocess.run(
        ["git", "log", "--format=%H", "--", "preregistrations/demo.lock.json"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for commit in log:
        shown = subprocess.run(
            ["git", "show", f"{commit}:preregistrations/demo.lock.json"],
            cwd=repo, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if shown.returncode != 0:  # the commit that renamed the demo removed this path
            continue
        lock = json.loads(shown.stdout)
        if lock["chain"][0]["prereg"].get("analyses") == {}:
            return lock
    raise AssertionError("no committed demo lock without analyses")


def test_study_without_analyses_keeps_its_hash(tmp_path):
    """A lock frozen before analyses existed (its registration has analyses: {}) still
    verifies: its registration, written out with and without the analyses key, hashes to the
    lock's registered canonical hash with today's schema."""
    repo = Path(__file__).resolve().parents[2]
    frozen = _lock_without_analyses(repo)["chain"][0]
    for data in (frozen["prereg"], {k: v for k, v in frozen["prereg"].items() if k != "analyses"}):
        p = tmp_path / "demo.yaml"
        p.write_text(yaml.safe_dump(data, sort_keys=False))
        assert load(p).canonical_hash == frozen["canonical_hash"]
