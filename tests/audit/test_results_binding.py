"""The contract, a receipt binds the results: each run's ledger line records the SHA-256 of every
artifact when the run ended (hash-chained, so the run's receipt vouches for them). The plain
audit fails when the folder is not as the newest successful run left it, naming the file, and
when two successful runs of one deterministic procedure (the same code, lock entry and versions)
disagree on a file: the consistently forged PASS run appended after the honest KILL run. Honest
histories pass: a deterministic re-run, an amendment, another code or versions, a failed run, an
exploratory one, a ledger written before runs recorded their results (a note)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from attack_project import Project

AUDIT_FAILED = 4
_A, _B, _C = "a" * 64, "b" * 64, "c" * 64


def _reseal(proj: Project, rel: str) -> None:
    """The record of ``rel`` made to match the file again, and every record that read it made
    to name its new hash (a forger with the library)."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import PROVENANCE_DIR, record_path

    f = proj.results / rel
    digest = sha256_file(f)
    rec_file = record_path(f, proj.results)
    rec = json.loads(rec_file.read_text())
    rec["sha256"], rec["bytes"] = digest, f.stat().st_size
    rec_file.write_text(json.dumps(rec))
    for other in (proj.results / PROVENANCE_DIR).glob("*.json"):
        doc = json.loads(other.read_text())
        inputs = [i for i in doc.get("inputs", []) if i.get("artifact") == rel]
        for inp in inputs:
            inp["sha256"] = digest
        if inputs:
            other.write_text(json.dumps(doc))


def _receipt(output: str) -> str:
    found = re.findall(r"run receipt: ([0-9a-f]{64}) \(run (\d+)\)", output)
    assert found, output[-3000:]
    return found[-1][0]


def _forged_fits(proj: Project) -> list[str]:
    """q = 0.97 made to look like q = 0.95 (which passes) in both fits, each re-sealed."""
    rels = []
    for cond in ("base", "heavy"):
        rel = f"fits/tox/logit/{cond}.json"
        doc = json.loads((proj.results / rel).read_text())
        doc["thresholds"][1] = {**doc["thresholds"][0], "q": doc["thresholds"][1]["q"]}
        (proj.results / rel).write_text(json.dumps(doc))
        _reseal(proj, rel)
        rels.append(rel)
    return rels


# the attacks, on copies of the honest run (H1 KILL)


def test_the_honest_run_records_every_artifact_and_audits_clean(honest_run, honest_audit):
    from tailgate.runtime.provenance import iter_records

    line = json.loads((honest_run.results / "runs.jsonl").read_text())
    recorded = {str(r.path): r.sha256 for r in iter_records(honest_run.results)}
    recorded.pop("runs.jsonl")
    assert line["results"]["base"] is None and line["results"]["files"] == recorded
    code, out = honest_audit
    assert code == 0, out[-3000:]
    assert "[ok] run results: 1 run(s) recording their results' digests" in out


def test_a_doctored_statistic_resealed_after_the_run_fails_naming_the_file(proj):
    rels = _forged_fits(proj)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out[-3000:]
    for rel in rels:
        assert re.search(
            rf"results/attack/{rel}: its SHA-256 \w+… is not the \w+… run 1 recorded when it ended "
            r"\(changed after the run",
            out,
        ), out[-3000:]


def test_a_forged_pass_run_appended_after_the_honest_run_fails_on_the_disagreement(proj):
    """The stored fits forged and re-sealed, everything downstream re-made by the workflow
    itself: the appended run answers PASS with the same code, lock, commit and data, and its
    receipt vouches for the folder; the honest run's receipt still holds too."""
    honest = json.loads((proj.results / "runs.jsonl").read_text())
    line = (proj.results / "runs.jsonl").read_text().strip()
    receipt = hashlib.sha256(line.encode()).hexdigest()
    rels = _forged_fits(proj)
    res = proj.snakemake("--forcerun", "gates")
    assert res.returncode == 0, res.stderr[-3000:]
    assert proj.verdict()["h1"]["verdict"] == "PASS"
    forged = json.loads((proj.results / "runs.jsonl").read_text().splitlines()[-1])
    assert (forged["code_digest"], forged["lock_head"]) == (
        honest["code_digest"],
        honest["lock_head"],
    )
    code, out = proj.audit("--expected-run", receipt, "--expected-run", _receipt(res.stdout))
    assert code == AUDIT_FAILED, out[-3000:]
    assert "[ok] published runs" in out and "[ok] run ledger" in out, out[-3000:]
    assert "runs 1 and 2 ran one deterministic procedure" in out, out[-3000:]
    for rel in [*rels, "gates/tox/logit.json", "verdict.json", "report.html"]:
        assert f"results/attack/{rel}: run 1 recorded " in out, out[-3000:]


def test_an_amended_re_run_audits_clean(proj):
    """The amended run re-makes the gates and what follows with other bytes: not compared with
    the run before the amendment. (A deterministic re-run, which records no change, is
    ``test_run_receipts``'s.)"""
    proj.prereg.write_text(proj.prereg.read_text().replace("tvar: 1.00", "tvar: 0.90"))
    code, out = proj.cli("amend", proj.prereg, "--reason", "tighter TVaR tolerance")
    assert code == 0, out
    res = proj.snakemake()
    assert res.returncode == 0, res.stderr[-3000:]
    runs = [json.loads(x) for x in (proj.results / "runs.jsonl").read_text().splitlines()]
    assert [r["results"]["base"] for r in runs] == [None, 1]
    assert "gates/tox/logit.json" in runs[1]["results"]["files"]
    assert "fits/tox/logit/base.json" not in runs[1]["results"]["files"]
    code, out = proj.audit()
    assert code == 0, out[-3000:]
    assert "[ok] run results: 2 run(s)" in out, out[-3000:]


def test_a_ledger_of_an_older_tailgate_passes_with_a_note(proj):
    ledger = proj.results / "runs.jsonl"
    run = json.loads(ledger.read_text())
    del run["results"]
    run["ledger_version"] = 1
    ledger.write_text(json.dumps(run, sort_keys=True, ensure_ascii=True, separators=(",", ":")))
    _reseal(proj, "runs.jsonl")
    code, out = proj.audit()
    assert code == 0, out[-3000:]
    assert "run(s) 1 of results/attack/runs.jsonl record no digests of their results" in out


# the comparison, on ledgers written here (no workflow run)


@dataclass
class _Record:
    path: str
    content: dict[str, Any]


def _run(
    n: int,
    files: dict[str, str | None],
    *,
    base: int | None = None,
    now: dict[str, str] | None = None,
    outcome: str = "success",
    code: str = "code1",
    entry: str = "entry0",
    numpy: str = "2.0.0",
    mode: str = "confirmatory",
) -> dict[str, Any]:
    from tailgate.runs.ledger import results_digest

    return {
        "run": n,
        "time": "2025-01-01T00:00:00Z",
        "outcome": outcome,
        "mode": mode,
        "code_digest": code,
        "lock_head": {"seq": 0, "entry_hash": entry},
        "environments": [{"numpy": numpy, "python": "3.11.9"}],
        "results": {"base": base, "files": files, "sha256": results_digest(now or files)},
    }


def _check(tmp_path: Path, runs: list[dict[str, Any]], now: dict[str, str], lock: Any = None):
    from tailgate.audit.runs import check_results

    rd = tmp_path / "results" / "s"
    rd.mkdir(parents=True)
    (rd / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    return check_results(rd, [_Record(p, {"sha256": d}) for p, d in now.items()], lock)


@pytest.mark.parametrize(
    "second",
    [
        {"code": "code2"},  # another code
        {"entry": "entry1"},  # after an amendment
        {"numpy": "2.1.0"},  # other versions
        {"mode": "exploratory"},
    ],
)
def test_runs_of_other_procedures_are_not_compared(tmp_path, second):
    runs = [_run(1, {"x": _A}), _run(2, {"x": _B}, base=1, **second)]
    check = _check(tmp_path, runs, {"x": _B})
    assert check.ok, check.failures


def test_runs_of_one_procedure_that_disagree_fail_and_a_partial_re_run_does_not(tmp_path):
    runs = [_run(1, {"x": _A, "y": _B}), _run(2, {}, base=1, now={"x": _A, "y": _B})]
    assert _check(tmp_path / "1", runs, {"x": _A, "y": _B}).ok
    runs.append(_run(3, {"y": _C}, base=2, now={"x": _A, "y": _C}))
    check = _check(tmp_path / "2", runs, {"x": _A, "y": _C})
    assert not check.ok and any(
        "s/y: run 2 recorded bbbbbbbbbbbb…, run 3" in f for f in check.failures
    )
    assert not any("s/x:" in f for f in check.failures)


def test_a_failed_run_between_keeps_the_comparison_and_another_procedure_breaks_it(tmp_path):
    runs = [
        _run(1, {"x": _A}),
        _run(2, {}, base=1, now={"x": _A}, outcome="interrupted"),
        _run(3, {"x": _B}, base=2),
    ]
    assert not _check(tmp_path / "1", runs, {"x": _B}).ok
    # a failed run in other versions re-made x; the next successful run re-made only downstream
    runs[1] = _run(2, {"x": _C}, base=1, outcome="error", numpy="2.1.0")
    runs[2] = _run(3, {"y": _B}, base=2, now={"x": _C, "y": _B})
    check = _check(tmp_path / "2", runs, {"x": _C, "y": _B})
    assert check.ok, check.failures


def test_the_folder_must_be_the_newest_successful_runs(tmp_path):
    runs = [_run(1, {"x": _A, "y": _B}), _run(2, {"x": _C}, base=1, outcome="error", entry="e1",
                                               now={"x": _C, "y": _B})]  # fmt: skip
    check = _check(tmp_path, runs, {"x": _C, "z": _A})
    text = "\n".join(check.failures)
    assert "s/x: its SHA-256 cccccccccccc… is not the aaaaaaaaaaaa… run 1 recorded" in text
    assert "(run 2, which ended 'error', left it so: run the workflow to the end)" in text
    assert "s/y: recorded by run 1 when it ended, and gone now" in text
    assert "s/z: not among the files run 1 recorded when it ended" in text


def test_a_study_computing_with_models_notes_a_disagreement(tmp_path):
    snapshot = {"data": {"backend": "transformers"}}
    lock = SimpleNamespace(chain=[{"entry_hash": "entry0", "prereg": snapshot}])
    runs = [_run(1, {"x": _A}), _run(2, {"x": _B}, base=1)]
    check = _check(tmp_path, runs, {"x": _B}, lock)
    assert check.ok and "the study computes with models" in check.notes[0]


@pytest.mark.parametrize("how", ["unbound", "edited", "dangling base"])
def test_a_line_without_or_with_edited_results_after_bound_runs_fails(tmp_path, how):
    runs = [_run(1, {"x": _A}), _run(2, {"x": _A}, base=1)]
    if how == "unbound":
        del runs[1]["results"]
    elif how == "edited":
        runs[1]["results"]["files"] = {"x": _B}
    else:
        runs[1]["results"]["base"] = 5
    check = _check(tmp_path, runs, {"x": _A})
    assert not check.ok, check.notes
