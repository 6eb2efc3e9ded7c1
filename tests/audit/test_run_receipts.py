"""The contract, runs cannot be quietly erased: every run ends by printing its receipt (the
SHA-256 of its ledger line); a ledger rewritten to drop a run (the chain still linked, its record
re-hashed) passes the chain check, but ``tailgate audit --expected-run RECEIPT`` fails naming the
receipt, and ``tailgate status`` shows the committed run the ledger no longer holds."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from attack_project import Project
from tailgate.prereg.canonical import sha256_file
from tailgate.runtime.provenance import record_path

AUDIT_FAILED = 4


def _receipt(output: str) -> str:
    found = re.findall(r"run receipt: ([0-9a-f]{64}) \(run (\d+)\)", output)
    assert found, output[-3000:]
    return found[-1][0]


def _drop_last_run(proj: Project) -> None:
    """The ledger without its last run, and its record re-hashed (as a researcher would)."""
    ledger = proj.results / "runs.jsonl"
    lines = ledger.read_text().splitlines()
    ledger.write_text("\n".join(lines[:-1]) + "\n")
    rec_file = record_path(ledger, proj.results)
    rec = json.loads(rec_file.read_text())
    rec["sha256"], rec["bytes"] = sha256_file(ledger), ledger.stat().st_size
    rec_file.write_text(json.dumps(rec))


@pytest.fixture(scope="module")
def rerun(honest_run: Project, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A copy of the honest run run again (``--forcerun verdict``: a second, deterministic run)
    and what that run printed; read-only (:func:`_copy` it to change it)."""
    proj = honest_run.copy(tmp_path_factory.mktemp("rerun") / "attack")
    res = proj.snakemake("--forcerun", "verdict")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj.root, res


def _copy(rerun: tuple[Path, subprocess.CompletedProcess], dest: Path) -> Project:
    shutil.copytree(rerun[0], dest, symlinks=True)
    return Project(dest, "attack")


def test_a_run_prints_its_receipt_and_the_audit_holds_the_ledger_to_it(rerun, tmp_path) -> None:
    proj, res = _copy(rerun, tmp_path / "attack"), rerun[1]
    receipt = _receipt(res.stdout + res.stderr)
    last = (proj.results / "runs.jsonl").read_text().splitlines()[-1]
    assert receipt == hashlib.sha256(last.encode()).hexdigest()
    assert json.loads(last)["results"]["files"] == {}  # deterministic: no file changed
    code, out = proj.audit("--expected-run", receipt)
    assert code == 0, out[-3000:]
    assert "[ok] published runs" in out and "is run 2 of the ledger" in out, out[-3000:]

    # the unwelcome run erased: the chain still holds, only the receipt tells
    _drop_last_run(proj)
    code, out = proj.audit("--expected-run", receipt[:16])
    assert code == AUDIT_FAILED, out[-3000:]
    assert f"holds no run with the published receipt {receipt[:16]}" in out, out[-3000:]
    assert "[ok] run ledger" in out, out[-3000:]


def test_status_shows_where_the_ledger_parts_from_its_history_in_git(
    proj: Project, rerun, tmp_path
) -> None:
    code, out = proj.cli("status", proj.name)  # the honest run, as it was made
    assert code == 0 and "run(s) 1 not in any commit (the ledger was never committed)" in out, out
    proj = _copy(rerun, tmp_path / "rerun")  # and run again
    commit = proj.commit("Results of two runs", f"results/{proj.name}/runs.jsonl")
    code, out = proj.cli("status", proj.name)
    assert code == 0 and "not in any commit" not in out and "not as committed" not in out, out

    _drop_last_run(proj)
    code, out = proj.cli("status", proj.name, "--json")
    assert code == 0, out
    history = json.loads(out)["ledger_git"]
    assert history["committed"] and history["uncommitted"] == []
    assert len(history["lost"]) == 1 and f"committed in {commit[:12]}" in history["lost"][0]
    code, out = proj.cli("status", proj.name)
    assert "run ledger not as committed: run 2 (" in out and "(removed)" in out, out
