"""The end of a run: the answer on the terminal, the run ledger, ``tailgate status`` and the
``--json`` shapes of the CLI, through Snakemake on the small study."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
from tailgate.runs.ledger import results_digest
from tailgate.runtime.provenance import iter_records
from wf_project import finished_counts, job_counts


def _status(proj, *args):
    res = proj.cli("status", "small", *args)
    assert res.returncode == 0, res.stderr
    return res


def test_a_successful_run_prints_the_answer_and_appends_to_the_ledger(small_run):
    out = small_run.first_run.stdout
    verdict = json.loads((small_run.results / "verdict.json").read_text())
    assert "tailgate · study small · run 1 · success" in out
    for g in verdict["gates"]:  # every scorer/scale with its verdict, headline first
        assert f"H1 {g['scorer']} / {g['scale']}" in out and g["h1"]["verdict"] in out
    head = verdict["headline"]
    assert out.index(f"H1 {head['scorer']} / {head['scale']} (headline)") < out.index("H1 tox / p")
    # each pair's first failing gate, or the passing pairs
    for g in verdict["gates"]:
        for name in g["h1"].get("passing_pairs", []):
            assert name in out
    assert "deviations from the registered plan: none" in out
    assert "report: results/small/report.html" in out
    runs = [json.loads(x) for x in (small_run.results / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 1
    r = runs[0]
    assert r["outcome"] == "success" and r["run"] == 1 and r["previous"] is None
    assert r["jobs"] == job_counts(small_run.first_run.stderr)
    assert r["jobs_total"] == sum(v for k, v in r["jobs"].items() if k != "all") > 10
    assert {(v["scorer"], v["scale"], v["verdict"]) for v in r["verdicts"]} == {
        (g["scorer"], g["scale"], g["h1"]["verdict"]) for g in verdict["gates"]
    }
    assert r["lock_head"]["seq"] == 0 and r["git"]["commit"]
    # the study's answer (H1: the protocol is registered and no answer is named) comes first
    summary = f"H1 {verdict['h1']['verdict']}"
    assert r["answer"] == {
        "items": ["H1"],
        "outcome": verdict["answer"]["outcome"],
        "summary": summary,
    }
    assert out.index(f"answer: {verdict['answer']['outcome']} — {summary}") < out.index("H1 tox")
    assert (small_run.results / "provenance" / "runs.jsonl.json").is_file()
    # every artifact's SHA-256 when the run ended (the ledger aside), and their digest
    made = {str(rec.path): rec.sha256 for rec in iter_records(small_run.results)}
    del made["runs.jsonl"]
    assert r["results"] == {"base": None, "files": made, "sha256": results_digest(made)}


def test_a_failed_run_names_the_job_and_its_log_and_is_in_the_ledger(small_copy):
    shard = small_copy.results / "generations" / "base" / "shard-0.parquet"
    table = pq.read_table(shard)
    bad = table.set_column(
        table.schema.get_field_index("simulated_score"),
        "simulated_score",
        pa.array(["x"] * table.num_rows),
    )
    pq.write_table(bad, shard)  # newer than its scores: the scoring job re-runs and fails
    # a missing score: its job re-runs and finishes (if it starts before the failure stops the run)
    (small_copy.results / "scores" / "tox" / "heavy" / "shard-1.parquet").unlink()
    res = small_copy.snakemake()
    assert res.returncode != 0
    out = res.stdout
    runs = [json.loads(x) for x in (small_copy.results / "runs.jsonl").read_text().splitlines()]
    # the jobs that ran, as Snakemake reports them finished, not the jobs it planned (heavy's
    # transform, ready once its scores are, may start before the failure stops the run)
    ran = runs[1]["jobs"]
    assert ran == finished_counts(res.stderr), res.stderr[-3000:]
    assert set(ran) <= {"score", "transform"}, res.stderr[-3000:]
    assert runs[1]["jobs_total"] == sum(ran.values()) < sum(job_counts(res.stderr).values())
    assert f"tailgate · study small · run 2 · error ({sum(ran.values())} job(s) run)" in out
    assert "failed: rule score, log results/small/logs/score/tox-base-0.log" in out
    assert "  | " in out  # the end of the job's log
    assert [r["outcome"] for r in runs] == ["success", "error"]
    assert runs[1]["failed"] == [
        {"rule": "score", "log": "results/small/logs/score/tox-base-0.log"}
    ]
    assert runs[1]["stopped"] == [] and runs[1]["verdicts"] is None
    status = json.loads(_status(small_copy, "--json").stdout)
    assert [e["outcome"] for e in status["events"] if e["event"] == "run"] == ["success", "error"]


def test_a_ledger_rewritten_after_an_amendment_fails_the_audit(small_copy):
    """Runs the amendment saw cannot be dropped afterwards, even with the ledger's record
    re-hashed: the lock entry (hash-chained, committed) names the line it saw."""
    small_copy.replace("tvar: 0.30", "tvar: 0.05")
    assert small_copy.cli("amend", small_copy.prereg, "--reason", "tighter").returncode == 0
    ledger = small_copy.results / "runs.jsonl"
    ledger.write_text("")
    record = next((small_copy.results / "provenance").rglob("runs.jsonl.json"))
    doc = json.loads(record.read_text())
    doc["sha256"] = hashlib.sha256(b"").hexdigest()
    record.write_text(json.dumps(doc))
    res = small_copy.cli("audit", small_copy.results)
    assert res.returncode == 4
    assert "lock entry 1 recorded the ledger at run 1" in res.stdout, res.stdout[-3000:]


def test_status_says_when_the_prereg_is_refused(small_copy):
    small_copy.replace("tvar: 0.30", "tvar: 0.40")
    doc = json.loads(_status(small_copy, "--json").stdout)
    assert doc["matches_lock"] is False and "differs" in doc["problem"]
    assert [c["field"] for c in doc["changes"]] == ["protocol.tolerances.tvar"]
    assert "REFUSED" in _status(small_copy).stdout


def test_an_edited_ledger_fails_the_audit(small_copy):
    ledger = small_copy.results / "runs.jsonl"
    run = json.loads(ledger.read_text())
    run["verdicts"][0]["verdict"] = "PASS" if run["verdicts"][0]["verdict"] != "PASS" else "KILL"
    ledger.write_text(json.dumps(run, sort_keys=True, separators=(",", ":")) + "\n")
    res = small_copy.cli("audit", small_copy.results)
    assert res.returncode == 4 and "runs.jsonl" in res.stdout


def test_verify_json_shapes(small_copy):
    res = small_copy.cli("verify", small_copy.prereg, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["format"] == "tailgate.verify/1" and doc["matches"] is True
    assert doc["changes"] == [] and len(doc["canonical_hash"]) == 64
    small_copy.replace("tvar: 0.30", "tvar: 0.40")
    res = small_copy.cli("verify", small_copy.prereg, "--json")
    assert res.returncode == 3
    doc = json.loads(res.stdout)
    assert doc["matches"] is False and "tailgate amend" in doc["message"]
    assert doc["changes"] == [
        {
            "field": "protocol.tolerances.tvar",
            "old": 0.3,
            "new": 0.4,
            "kind": "changed",
            "class": "loosening",
            "decision": True,
        }
    ]


def test_design_and_multiverse_json_shapes(small_run):
    res = small_run.cli("design", small_run.prereg, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["format"] == "tailgate.design/1" and doc["valid"] is True
    assert doc["design"]["n_exc_required"] > 0 and doc["operating_characteristics"]
    lock = json.loads(small_run.prereg.with_suffix(".lock.json").read_text())
    assert doc["canonical_hash"] == lock["chain"][-1]["canonical_hash"]
    res = small_run.cli("multiverse", small_run.prereg, small_run.results, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["format"] == "tailgate.multiverse/1" and len(doc["analyses"]) == 2


def test_snakemake_report_writes_the_workflow_report(small_copy):
    out = small_copy.root / "small-workflow.html"
    res = small_copy.snakemake("--report", str(out.relative_to(small_copy.root)))
    assert res.returncode == 0, res.stderr[-2000:]
    assert out.is_file() and out.stat().st_size > 10_000
    assert not (small_copy.root / "report.html").exists()
    assert small_copy.cli("audit", small_copy.results).returncode == 0


def test_unrecorded_files_in_the_results_folder_fail_the_audit(small_copy):
    """Nothing under results/<study> reads as the study's output without a record: a report
    beside the results (Snakemake's --report written there, or a forged one) and anything but
    a rule's *.log under logs/ fail the audit, each named (without them, a copy of the run
    audits clean: ``test_snakemake_report_writes_the_workflow_report``)."""
    forged = small_copy.results / "workflow-report.html"
    forged.write_text("<html>H1 PASS</html>")
    hidden = small_copy.results / "logs" / "report.html"
    hidden.write_text("<html>H1 PASS</html>")
    res = small_copy.cli("audit", small_copy.results)
    assert res.returncode == 4, res.stdout
    assert f"{forged}: no provenance record" in res.stdout, res.stdout
    assert f"{hidden}: not a rule log" in res.stdout, res.stdout
