"""Runs out to the tracker researchers use: ``tailgate export mlflow`` logs every run of a
finished study's ledger to a live ``mlflow server`` on the loopback interface and to a local file
store, read back through MLflow's client; a second export logs nothing new."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_call import tailgate
from git_repo import git_commit
from tailgate.cli.export import _millis, results_digest
from wf_project import Project, make_project

IDENTITY = "tailgate.ledger_line_sha256"

# Two simulated conditions with a real tail difference (xi 0 vs 0.4), small resampling sizes.
STUDY = """\
schema_version: 1
study: small
seed: 4242
sample_cap: 4000
accepted_power: 0
conditions:
  - name: base
    simulate: {tail: {xi: 0.0, sigma: 1.0, share: 0.10}}
  - name: heavy
    simulate: {tail: {xi: 0.4, sigma: 0.6, share: 0.10}}
data: {backend: simulate}
generation: {shards: 1}
scorers:
  - {name: tox, kind: column, column: simulated_score, bounded: true}
transform: {scales: [probability, logit], epsilon: 1.0e-12}
protocol:
  tolerances: {mean: 0.10, tvar: 0.30}
  thresholds: {headline: 0.95, band: [0.95, 0.97]}
  min_exceedances: 100
  stability: {scan: {start: 0.85, stop: 0.97, step: 0.04}, resamples: 10, min_exceedances: 50}
  bootstrap: {resamples: 100}
  sensitivity: {tolerance_multipliers: [1.0]}
  power_simulation: {delta_xi: [0.2], n_exc: [200], trials: 4, resamples: 10}
  operating_characteristics: {trials: 10, resamples: 10}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory) -> Iterator[str]:
    """``mlflow server`` on 127.0.0.1 (a free port), a SQLite backend and a local artifact
    store in a scratch folder; stopped after the module."""
    root = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    cmd = [
        sys.executable, "-m", "mlflow", "server",
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination", str(root / "artifacts"),
    ]  # fmt: skip
    log = (root / "server.log").open("w")
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}  # no job workers
    server = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, cwd=root, env=env, start_new_session=True
    )
    uri = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):  # bounded: about two minutes
            if server.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("mlflow server did not answer: " + (root / "server.log").read_text())
        assert server.poll() is None, (root / "server.log").read_text()[-3000:]
        yield uri
    finally:  # the server and the workers it started: its own process group
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Project:
    """A small simulated study run once, amended after data (a tolerance) and run again: two
    ledger runs, the second under an amendment that is a deviation."""
    proj = make_project(tmp_path_factory.mktemp("export") / "proj", STUDY)
    first = proj.snakemake()
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    proj.replace("tolerances: {mean: 0.10, tvar: 0.30}", "tolerances: {mean: 0.10, tvar: 0.25}")
    amend = proj.cli("amend", proj.prereg, "--reason", "tighter TVaR tolerance")
    assert amend.returncode == 0, amend.stdout + amend.stderr
    git_commit(proj.root, "Amend the TVaR tolerance", "preregistrations")
    second = proj.snakemake()
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    return proj


def export(proj: Project, *args: str) -> subprocess.CompletedProcess:
    res = proj.cli("export", "mlflow", proj.results, *args)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def runs_of(uri: str, experiment: str) -> list:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None
    return client.search_runs([exp.experiment_id], order_by=["tags.`tailgate.run` ASC"])


def check_runs(proj: Project, uri: str, experiment: str, tmp_path: Path) -> None:
    """The exported runs against the ledger, the lock and the verdict read from disk."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    ledger = [x for x in (proj.results / "runs.jsonl").read_text().splitlines() if x.strip()]
    lock = json.loads(proj.lock.read_text())
    verdict = json.loads((proj.results / "verdict.json").read_text())
    runs = sorted(runs_of(uri, experiment), key=lambda r: int(r.data.tags["tailgate.run"]))
    assert len(runs) == len(ledger) == 2
    import hashlib

    for run, line, entry in zip(runs, ledger, lock["chain"], strict=True):
        record = json.loads(line)
        params, tags = run.data.params, run.data.tags
        assert tags[IDENTITY] == hashlib.sha256(line.encode()).hexdigest()
        assert run.info.status == "FINISHED"
        assert record["lock_head"]["entry_hash"] == entry["entry_hash"]
        # params: the lock entry, its hashes and the registered decision fields
        assert params["lock.entry_hash"] == entry["entry_hash"]
        assert params["lock.canonical_hash"] == entry["canonical_hash"]
        assert params["lock.raw_hash"] == entry["raw_hash"]
        assert params["prereg.seed"] == "4242"
        assert params["prereg.protocol.alpha"] == json.dumps(entry["prereg"]["protocol"]["alpha"])
        assert params["prereg.conditions.1.name"] == "heavy"
        tvar = entry["prereg"]["protocol"]["tolerances"]["tvar"]
        assert float(params["prereg.protocol.tolerances.tvar"]) == tvar
        assert params["derived.n_exc_required"] == str(entry["derived"]["n_exc_required"])
        # verdicts as metrics and tags, from the ledger line
        for v in record["verdicts"]:
            key = f"{v['scorer']}/{v['scale']}"
            assert tags[f"verdict.{key}"] == v["verdict"]
            assert run.data.metrics[f"h1/{key}"] == float(v["verdict"] == "PASS")
        assert run.data.metrics["jobs_total"] == record["jobs_total"]
        # the audit's outcome, the results it describes, the run's own times, no empty tag
        assert tags["tailgate.audit"] == "passed"
        assert tags["tailgate.results"] == results_digest(proj.results)
        assert "None" not in tags.values() and "" not in tags.values()
        assert run.info.end_time == _millis(record["time"])
        assert run.info.start_time == _millis(record["started"]) <= run.info.end_time
        note = tags["mlflow.note.content"]
        assert note.startswith("# small") and record["answer"]["outcome"] in note
    first, second = runs
    assert first.data.tags["tailgate.previous_line_sha256"] == "first run of the ledger"
    assert first.data.tags["tailgate.describes"] == "ledger line"
    assert second.data.tags["tailgate.describes"] == "results"
    assert tvar == 0.25 and params["lock.seq"] == "1"
    amendment = json.loads(second.data.tags["amendment.1"])
    assert amendment["reason"] == "tighter TVaR tolerance" and amendment["data_existed"] is True
    assert amendment["fields"] == ["protocol.tolerances.tvar"]
    assert "protocol.tolerances.tvar" in second.data.tags["deviation.amendment.0"]
    assert not any(k.startswith("amendment.") for k in first.data.tags)
    # the latest run: every gate value of verdict.json, and the artifacts
    gate_values = 0
    for g in verdict["gates"]:
        for pair in g["pairs"]:
            at = f"{g['scorer']}/{g['scale']}/{pair['a']} vs {pair['b']}"
            assert second.data.tags[f"pair.{at}"] == pair["verdict"]
            for t in pair["thresholds"]:
                q = f"gate/{at}/q{t['q']}"
                assert second.data.metrics[f"{q}/passed"] == float(t["passed"])
                assert second.data.metrics[f"{q}/delta_xi"] == t["delta_xi"]
                for name, gate in t["gates"].items():
                    assert second.data.metrics[f"{q}/{name}.passed"] == float(gate["passed"])
                    if isinstance(gate["value"], int | float):
                        assert second.data.metrics[f"{q}/{name}"] == gate["value"]
                        gate_values += 1
    assert gate_values > 10
    assert second.data.tags["h1"] == verdict["h1"]["verdict"]
    names = {a.path for a in client.list_artifacts(second.info.run_id)}
    assert {"verdict.json", "report.html", "runs.jsonl", "figures"} <= names
    figures = {Path(a.path).name for a in client.list_artifacts(second.info.run_id, "figures")}
    on_disk = {f.name for f in (proj.results / "figures").iterdir() if f.is_file()}
    assert figures == on_disk and any(f.endswith(".png") for f in figures)
    got = client.download_artifacts(second.info.run_id, "verdict.json", str(tmp_path))
    assert Path(got).read_bytes() == (proj.results / "verdict.json").read_bytes()
    assert not client.list_artifacts(first.info.run_id)


@pytest.mark.slow
def test_export_to_a_live_mlflow_server_is_idempotent(finished, mlflow_server, tmp_path):
    """The export as a user runs it (its own process) logs both runs to a live server; a second
    export (in this process) logs nothing and leaves the same runs."""
    res = tailgate(
        "export", "mlflow", finished.results, "--tracking-uri", mlflow_server,
        "--experiment", "tails", cwd=finished.root, own_process=True,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 run(s) logged" in res.stdout
    check_runs(finished, mlflow_server, "tails", tmp_path)
    ids = {r.info.run_id for r in runs_of(mlflow_server, "tails")}
    again = export(finished, "--tracking-uri", mlflow_server, "--experiment", "tails")
    assert "0 run(s) logged" in again.stdout and again.stdout.count("already there") == 2
    assert {r.info.run_id for r in runs_of(mlflow_server, "tails")} == ids


def test_export_needs_the_extra(tmp_path, monkeypatch):
    """Without MLflow installed, the export says which extra to install (exit 2)."""
    import builtins

    from tailgate.cli.export import export_mlflow
    from tailgate.errors import InputError

    real = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name.split(".")[0] == "mlflow":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    with pytest.raises(InputError, match=r"-e '\.\[mlflow\]'") as info:
        export_mlflow(tmp_path)
    assert info.value.exit_code == 2


def _copy(finished: Project, tmp_path: Path) -> Project:
    import shutil

    root = tmp_path / "proj"
    shutil.copytree(finished.root, root, symlinks=True, ignore=shutil.ignore_patterns("mlruns"))
    return Project(root, finished.name)


def _doctor(proj: Project) -> None:
    """The attack: ``verdict.json`` turned round (PASS for KILL or back) and its provenance
    record re-hashed to match."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path

    verdict_path = proj.results / "verdict.json"
    verdict = json.loads(verdict_path.read_bytes())
    verdict["h1"]["verdict"] = "KILL" if verdict["h1"]["verdict"] == "PASS" else "PASS"
    verdict_path.write_text(json.dumps(verdict, indent=2))
    rec_file = record_path(verdict_path, proj.results)
    rec = json.loads(rec_file.read_text())
    rec["sha256"], rec["bytes"] = sha256_file(verdict_path), verdict_path.stat().st_size
    rec_file.write_text(json.dumps(rec))


@pytest.mark.slow
def test_file_store_export_refuses_what_does_not_audit_and_supersedes_changed_results(
    finished, tmp_path, monkeypatch
):
    """On a copy of the finished study, exported to the default file store beside the results:
    a broken ledger is refused (exit 2) and a doctored verdict whose record was re-hashed is
    refused by the audit that comes first (exit 4), neither creating the store, so the tracker
    never holds the doctored PASS; with the honest files back the export logs both runs (checked
    against the ledger, the lock and the verdict) and says which results it describes; a second
    export logs nothing, its audit undisturbed by the store beside the results; after the
    verdict is made again the export logs run 3, marks the earlier results run superseded by it
    (not the ledger line's run), and a further export logs nothing and supersedes nothing."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow's opt-in to read a file store
    proj = _copy(finished, tmp_path)
    store = proj.root / "results" / "mlruns"
    ledger = proj.results / "runs.jsonl"
    honest_ledger = ledger.read_bytes()
    ledger.write_text(honest_ledger.decode().splitlines()[1] + "\n")  # the first run removed
    res = proj.cli("export", "mlflow", str(proj.results))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "chain is broken" in res.stderr and "Traceback" not in res.stderr
    assert not store.exists()
    ledger.write_bytes(honest_ledger)

    from tailgate.runtime.provenance import record_path

    verdict_path = proj.results / "verdict.json"
    rec_file = record_path(verdict_path, proj.results)
    honest = {p: p.read_bytes() for p in (verdict_path, rec_file)}
    _doctor(proj)
    res = proj.cli("export", "mlflow", str(proj.results))
    assert res.returncode == 4, res.stdout + res.stderr
    assert "refused: the audit of" in res.stderr and "[FAILED] verdicts" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert not store.exists(), "nothing logged"
    for path, data in honest.items():
        path.write_bytes(data)

    res = export(proj)  # the honest files back: the export goes through
    assert store.is_dir() and store.as_uri() in res.stdout
    assert "2 run(s) logged" in res.stdout
    assert f"results digest {results_digest(proj.results)[:12]}" in res.stdout
    check_runs(proj, store.as_uri(), proj.name, tmp_path)
    # again, with the store beside the results: the plain audit that every export runs first
    # (refused with exit 4 above when it fails) still passes, as the store is not in
    # results/<study>; and nothing new is logged
    again = export(proj)
    assert "0 run(s) logged" in again.stdout
    before = {int(r.data.tags["tailgate.run"]): r for r in runs_of(store.as_uri(), proj.name)}
    assert len(before) == 2

    old_digest = results_digest(proj.results)
    rerun = proj.snakemake("--forcerun", "verdict")
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert results_digest(proj.results) != old_digest
    res = export(proj)
    assert "run 3: logged" in res.stdout and res.stdout.count("already there") == 2
    after = {r.info.run_id: r for r in runs_of(store.as_uri(), proj.name)}
    earlier = after[before[2].info.run_id].data.tags
    latest = next(r for r in after.values() if r.data.tags["tailgate.run"] == "3")
    assert earlier["tailgate.superseded"] == "true"
    assert earlier["tailgate.superseded_by"] == latest.info.run_id
    assert f"superseded: {before[2].info.run_id}" in res.stdout
    assert "tailgate.superseded" not in latest.data.tags
    assert latest.data.tags["tailgate.results"] == results_digest(proj.results)
    assert "tailgate.superseded" not in after[before[1].info.run_id].data.tags  # a ledger line
    again = export(proj)
    assert "0 run(s) logged" in again.stdout and "superseded:" not in again.stdout


def test_pinned_import_files_are_logged_as_dataset_inputs(tmp_path, monkeypatch):
    """The registration's ``data.*`` pins become MLflow dataset inputs with their SHA-256."""
    from mlflow.tracking import MlflowClient
    from tailgate.cli.export import _datasets

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    sha = "ab" * 32
    entry = {
        "pins": {
            "data.import.path": {"path": "data/scores.csv", "sha256": sha, "bytes": 10, "rows": 3},
            "scorers.0.model": {"path": "models/judge", "sha256": "cd" * 32, "bytes": 5},
        }
    }
    client = MlflowClient(tracking_uri=(tmp_path / "store").as_uri())
    exp = client.create_experiment("datasets")
    run = client.create_run(exp)
    client.log_inputs(run.info.run_id, datasets=_datasets(entry))
    inputs = client.get_run(run.info.run_id).inputs.dataset_inputs
    assert len(inputs) == 1
    dataset, tags = inputs[0].dataset, {t.key: t.value for t in inputs[0].tags}
    assert dataset.name == "scores.csv" and dataset.source == "data/scores.csv"
    assert sha.startswith(dataset.digest) and tags["tailgate.sha256"] == sha
    assert json.loads(dataset.profile) == {"bytes": 10, "rows": 3}
