"""A study registers its answer: the tail-shape protocol of Zhou (2026) is optional
(``protocol.enabled: false``), it fits only the conditions its pairs name, and the registered
answer (H1, or named analysis criteria) leads ``verdict.json``, the run summary and the report."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from tailgate.errors import PreregError
from tailgate.plans.registration import load
from tailgate.prereg.answer import answer_document, registered_answer
from wf_project import REPO_ROOT, Project

SHIPPED = sorted(p for p in (REPO_ROOT / "preregistrations").glob("*.yaml") if p.stem != "template")

#: the protocol on one pair of perturbation-energy-example (a registration that fits it)
OLD_PROTOCOL = """\
protocol:
  headline_scale: identity
  thresholds: {headline: 0.95, band: [0.95, 0.97]}
  min_exceedances: 20
  stability: {scan: {start: 0.80, stop: 0.97, step: 0.01}, resamples: 10, min_exceedances: 10}
  bootstrap: {resamples: 100}
  pairs: [[base, outside]]
  sensitivity: {tolerance_multipliers: [1.0]}
  power_simulation: {delta_xi: [0.0, 0.2], n_exc: [50], trials: 4, resamples: 10}
  operating_characteristics: {trials: 10}
"""
NO_PROTOCOL = re.compile(r"^protocol: \{enabled: false\}.*\n", re.M)


def _project(root: Path, name: str, text: str | None = None, freeze: bool = True) -> Project:
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    (root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    proj = Project(root, name)
    if text is None:
        shutil.copy(REPO_ROOT / "preregistrations" / f"{name}.yaml", proj.prereg)
    else:
        proj.prereg.write_text(text)
    if freeze:
        from tailgate.authoring.freeze import freeze as do_freeze

        do_freeze(proj.prereg)
    return proj


def _shipped_text(name: str) -> str:
    return (REPO_ROOT / "preregistrations" / f"{name}.yaml").read_text()


def _outputs(dry_run: str, folder: str) -> set[str]:
    """The files under results/<study>/<folder>/ that a dry run would write."""
    return set(re.findall(rf"results/[^/\s]+/{folder}/(\S+?\.(?:json|parquet))", dry_run))


# --- registration -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_preregistration_matches_its_committed_lock(path: Path) -> None:
    proj = Project(REPO_ROOT, path.stem)
    res = proj.cli("verify", path)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_study_opens_without_a_deviation(path: Path) -> None:
    """A shipped example is confirmatory: its amendments, if any, changed no decision rule (a
    user's first report should not open with the box that says its results are not)."""
    from tailgate.prereg.deviations import amendment_log
    from tailgate.prereg.lock import read_lock

    _, deviations = amendment_log(read_lock(load(path).lock_path))
    assert deviations == []


def test_the_protocol_demo_keeps_its_registered_hash_and_answers_h1() -> None:
    from tailgate.prereg.lock import read_lock

    study = load(REPO_ROOT / "preregistrations" / "protocol-demo.yaml")
    lock = read_lock(study.lock_path)
    assert lock is not None and lock.chain
    # the fields added to the schema since (``answer``, ``protocol.enabled``) leave the hash of
    # what is registered alone: the chain head is still this file's hash
    assert study.canonical_hash == lock.chain[-1]["canonical_hash"]
    assert "enabled" not in study.data["protocol"] and "answer" not in study.data
    assert study.has_protocol
    assert registered_answer(study.data) == (["H1"], False)


def test_a_study_without_the_protocol_registers_none_of_its_settings() -> None:
    study = load(REPO_ROOT / "preregistrations" / "perturbation-energy-example.yaml")
    assert not study.has_protocol
    assert study.data["protocol"] == {"enabled": False}  # no defaults filled in
    assert study.protocol_conditions() == []
    assert registered_answer(study.data) == (["composite-null"], False)


def _refused(tmp_path: Path, text: str, field: str, words: str) -> None:
    path = tmp_path / "preregistrations" / "perturbation-energy-example.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(PreregError) as exc:
        load(path)
    assert exc.value.field == field, str(exc.value)
    assert words in str(exc.value)


def test_registration_refusals(tmp_path: Path) -> None:
    text = _shipped_text("perturbation-energy-example")
    _refused(
        tmp_path,
        NO_PROTOCOL.sub("protocol: {enabled: false, pairs: [[base, outside]]}\n", text),
        "protocol.pairs",
        "the run would ignore it",
    )
    _refused(
        tmp_path,
        text.replace("sample_cap: 500\n", "sample_cap: 500\naccepted_power: 0\n"),
        "accepted_power",
        "nothing would check it",
    )
    _refused(tmp_path, text + "answer: [H1]\n", "answer[0]", "the protocol is not registered")
    _refused(
        tmp_path,
        text + "answer: [composite-null.no-such-criterion]\n",
        "answer[0]",
        "has no criterion 'no-such-criterion'",
    )
    _refused(tmp_path, text + "answer: [no-such-analysis]\n", "answer[0]", "no analysis")
    _refused(tmp_path, text[: text.index("analyses:")], "protocol.enabled", "has no answer")


def test_answer_document_names_the_registered_criteria() -> None:
    study = load(REPO_ROOT / "preregistrations" / "perturbation-energy-example.yaml")
    rows = [
        {"analysis": "composite-null", "name": n, "outcome": o}
        for n, o in [("variant-kept", "PASS"), ("outside-rejected", "PASS"),
                     ("naive-test-rejects-variant", "BORDERLINE"), ("design-valid", "PASS")]
    ]  # fmt: skip
    doc = answer_document(study.data, rows)
    assert (doc["outcome"], doc["summary"]) == ("FAIL", "3 of 4 criteria PASS")
    assert [r["name"] for r in doc["criteria"]] == [r["name"] for r in rows]
    data = {
        **study.data,
        "answer": ["composite-null.outside-rejected", "composite-null.variant-kept"],
    }
    doc = answer_document(data, rows)
    assert (doc["outcome"], doc["summary"], doc["registered"]) == (
        "PASS",
        "2 of 2 criteria PASS",
        True,
    )
    assert [r["name"] for r in doc["criteria"]] == ["outside-rejected", "variant-kept"]
    h1 = {"analysis": "protocol", "name": "H1", "value": "KILL", "outcome": "KILL"}
    demo = load(REPO_ROOT / "preregistrations" / "protocol-demo.yaml")
    doc = answer_document(demo.data, [h1, *rows])
    assert (doc["outcome"], doc["summary"], doc["criteria"]) == ("FAIL", "H1 KILL", [h1])


# --- the workflow's jobs ------------------------------------------------------------------------


def test_the_protocol_fits_only_the_conditions_its_pairs_name(tmp_path: Path) -> None:
    """perturbation-energy-example with the protocol registered on one pair: 29 conditions."""
    text = NO_PROTOCOL.sub(OLD_PROTOCOL, _shipped_text("perturbation-energy-example"))
    text = text.replace("sample_cap: 500\n", "sample_cap: 500\naccepted_power: 0\n")
    proj = _project(tmp_path, "perturbation-energy-example", text)
    res = proj.snakemake("-n")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    out = res.stdout + res.stderr
    assert _outputs(out, "fits") == {
        "says-yes/identity/base.json",
        "says-yes/identity/outside.json",
    }
    assert _outputs(out, "bulk") == {"says-yes/base.parquet", "says-yes/outside.parquet"}
    assert len(_outputs(out, "generations")) == 29  # every condition is still generated


def test_a_study_without_the_protocol_has_no_protocol_jobs(tmp_path: Path) -> None:
    proj = _project(tmp_path, "perturbation-energy-example")
    res = proj.snakemake("-n")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    out = res.stdout + res.stderr
    from tailgate.runs.joblog import job_stats

    jobs = job_stats(out)
    assert jobs and not {"fit", "bulk", "gates", "sensitivity", "power", "operating"} & set(jobs)
    assert jobs["analysis"] == jobs["grade"] == 1 and jobs["generate"] == 29
    assert not _outputs(out, "fits") and "power.json" not in out


# --- the answer, first --------------------------------------------------------------------------


def test_the_summary_leads_with_the_answer() -> None:
    from tailgate.runs.summary import verdict_lines

    rows = [
        {"analysis": "composite-null", "name": "variant-kept", "outcome": "PASS"},
        {"analysis": "composite-null", "name": "design-valid", "outcome": "FAIL"},
    ]
    study = load(REPO_ROOT / "preregistrations" / "perturbation-energy-example.yaml")
    verdict = {
        "answer": answer_document(study.data, rows),
        "headline": None,
        "h1": None,
        "gates": [],
        "criteria": rows,
        "deviations": [],
        "amendments": [],
    }
    lines = verdict_lines(verdict)
    assert lines[0].startswith("answer: FAIL — 1 of 2 criteria PASS")
    assert "composite-null · design-valid: FAIL" in lines[2]
    assert not any("H1" in line for line in lines)
    assert not any("further analyses" in line for line in lines)  # every criterion is the answer


def test_a_protocol_study_answering_with_criteria_reports_h1_after_them(
    analysis_run, tmp_path: Path
) -> None:
    """The small study (protocol and a dominance analysis) with ``answer: [ranking]``: the
    verdict, the summary and the report lead with the criteria; H1 follows."""
    from tailgate.report.render import render
    from tailgate.report.stage import report_inputs
    from tailgate.runs.summary import verdict_lines

    verdict = json.loads((analysis_run.results / "verdict.json").read_text())
    assert verdict["answer"]["items"] == ["H1"] and verdict["answer"]["criteria"][0]["name"] == "H1"
    data = {**load(analysis_run.prereg).data, "answer": ["ranking"]}
    verdict["answer"] = answer_document(data, verdict["criteria"])
    lines = verdict_lines(verdict)
    assert lines[0].startswith("answer: ") and "criteria PASS" in lines[0]
    first_h1 = next(i for i, line in enumerate(lines) if line.startswith("H1 "))
    assert first_h1 > len(verdict["answer"]["criteria"])
    study = load(analysis_run.prereg)
    inputs = report_inputs(analysis_run.results, study)
    index: dict = {}
    for f in inputs["fits"]:
        doc = json.loads(Path(f).read_text())
        index.setdefault(doc["scorer"], {}).setdefault(doc["scale"], {})[doc["condition"]] = doc
    power = json.loads((analysis_run.results / "power.json").read_text())
    power.update(json.loads((analysis_run.results / "operating.json").read_text()))
    from tailgate.stages.analyses import read_analyses

    md = tmp_path / "answer.md"
    render(
        verdict,
        index,
        power,
        md.with_suffix(".html"),
        md,
        analyses=read_analyses(inputs["analyses"]),
    )
    text = md.read_text()
    answer = text.index("The study's answer (ranking; registered)")
    assert answer < text.index("H1 (tox, logit scale") < text.index("## Which gate stopped")
    assert text.index("The tail-shape protocol (Zhou 2026): H1") > answer


def test_verdict_json_leads_with_the_answer() -> None:
    """The document's own field order at the top level, every nested object sorted."""
    from tailgate.files.atomic import canonical_json_bytes
    from tailgate.stages.verdict import verdict_bytes

    doc = {
        "study": "s",
        "answer": {"summary": "1 of 1 criteria PASS", "criteria": [{"z": 1, "a": "é\nx"}]},
        "amendments": [],
        "h1": None,
    }
    text = verdict_bytes(doc)
    assert json.loads(text) == doc and list(json.loads(text)) == list(doc)
    assert text.startswith(b'{\n  "study": "s",\n  "answer": {\n    "criteria"')
    # the same bytes as the canonical writer once the top-level order is sorted
    assert verdict_bytes(dict(sorted(doc.items()))) == canonical_json_bytes(doc)
