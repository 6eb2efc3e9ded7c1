"""The review bundle: ``tailgate bundle`` writes one deterministic archive, ``tailgate audit FILE``
audits it in a scratch folder of its own, and every hostile shape of one fails (exit 4), naming
what is wrong, with nothing written outside the scratch folder."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from attack_project import Project, head_commit
from cli_call import tailgate
from git_repo import git
from rocrate.rocrate import ROCrate
from tailgate.audit.bundle_open import MIN_LIMIT

STUDY = "attack"


def _audit(bundle: Path, cwd: Path, *args: str) -> tuple[int, str]:
    """``tailgate audit BUNDLE`` from ``cwd``, a folder with nothing of the researcher's."""
    res = tailgate("audit", bundle, *args, cwd=cwd)
    return res.returncode, res.stdout + res.stderr


def _unpack(bundle: Path, dest: Path) -> Path:
    """The honest bundle unpacked with tarfile (the test trusts its own archive)."""
    with tarfile.open(bundle) as tf:
        tf.extractall(dest, filter="data")
    return dest / STUDY


def _repack(root: Path, out: Path) -> Path:
    """``root`` packed again as a bundle, its RO-Crate metadata brought in line with the files
    (so that what is tested is the audit behind the metadata check)."""
    crate = root / "ro-crate-metadata.json"
    doc = json.loads(crate.read_text())
    for ent in doc["@graph"]:
        path = root / ent["@id"]
        if "sha256" in ent and path.is_file():
            ent["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
            ent["contentSize"] = str(path.stat().st_size)
    crate.write_text(json.dumps(doc))
    with tarfile.open(out, "w:gz") as tf:
        tf.add(root, arcname=root.name)
    return out


def _hostile_tar(out: Path, member: tarfile.TarInfo, data: bytes = b"") -> Path:
    """A .tar.gz with one honest-looking file, then ``member``."""
    with tarfile.open(out, "w:gz") as tf:
        ok = tarfile.TarInfo(f"{STUDY}/bundle.json")
        ok.size = 2
        tf.addfile(ok, io.BytesIO(b"{}"))
        member.size = len(data) if member.isreg() else 0
        tf.addfile(member, io.BytesIO(data))
    return out


def test_a_study_gives_the_same_bytes(bundled_run, honest_bundle, tmp_path):
    again = tmp_path / "again.tar.gz"
    code, out = bundled_run.cli("bundle", STUDY, "-o", again)
    assert code == 0, out
    assert again.read_bytes() == honest_bundle.read_bytes()
    assert f"bundle sha256:{hashlib.sha256(again.read_bytes()).hexdigest()}" in out
    with tarfile.open(again) as tf:
        members = tf.getmembers()
    assert [m.name for m in members] == sorted(m.name for m in members)
    assert {(m.mtime, m.uid, m.gid, m.mode) for m in members} == {(0, 0, 0, 0o644)}
    assert again.read_bytes()[4:8] == bytes(4)  # gzip's header: no modification time


def test_the_honest_bundle_audits_clean_in_an_empty_folder(bundled_run, honest_bundle, tmp_path):
    reviewer = tmp_path / "reviewer"
    reviewer.mkdir()
    copy = reviewer / honest_bundle.name
    shutil.copy(honest_bundle, copy)
    code, out = _audit(copy, reviewer)
    assert code == 0, out
    assert f"audited bundle sha256:{hashlib.sha256(copy.read_bytes()).hexdigest()}" in out
    assert "[ok] bundle:" in out and "[ok] published runs" in out and "[ok] git" in out
    assert str(bundled_run.root) not in out
    assert sorted(p.name for p in reviewer.iterdir()) == [copy.name]  # nothing else written


def test_the_crate_follows_the_workflow_run_profile(bundled_run, honest_bundle, tmp_path):
    root = _unpack(honest_bundle, tmp_path)
    crate = ROCrate(root)
    main = crate.mainEntity
    assert main.id == "Snakefile"
    assert {"File", "SoftwareSourceCode", "ComputationalWorkflow"} <= set(main.type)
    assert main["programmingLanguage"].id.endswith("#snakemake")
    profiles = {p.id for p in crate.root_dataset["conformsTo"]}
    assert "https://w3id.org/ro/wfrun/workflow/0.5" in profiles
    assert "https://w3id.org/ro/wfrun/process/0.5" in profiles
    actions = crate.get_by_type("CreateAction")
    runs = [json.loads(x) for x in (bundled_run.results / "runs.jsonl").read_text().splitlines()]
    assert len(actions) == len(runs)
    lock = json.loads(bundled_run.lock.read_text())
    for action in actions:
        assert action["instrument"] is main
        registration = action["object"][0]
        assert registration.type == "CreativeWork"
        assert registration["identifier"] == f"sha256:{lock['chain'][0]['canonical_hash']}"
        made = {f.id for f in action["result"]}
        assert f"results/{STUDY}/verdict.json" in made
    for entity in crate.get_by_type("File"):
        path = root / entity.id
        assert entity["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest(), entity.id


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("dotdot", "a path with '..'"),
        ("absolute", "an absolute path"),
        ("symlink", "a link"),
        ("hardlink", "a link"),
        ("device", "a device"),
        ("fifo", "a named pipe (FIFO)"),
    ],
)
def test_a_hostile_member_fails_before_it_is_written(kind, why, tmp_path):
    reviewer = tmp_path / "reviewer"
    reviewer.mkdir()
    name = {
        "dotdot": f"{STUDY}/../../escaped",
        "absolute": str(tmp_path / "escaped"),
    }.get(kind, f"{STUDY}/results/{STUDY}/verdict.json")
    member = tarfile.TarInfo(name)
    if kind == "symlink":
        member.type, member.linkname = tarfile.SYMTYPE, str(tmp_path / "escaped")
    elif kind == "hardlink":
        member.type, member.linkname = tarfile.LNKTYPE, "/etc/passwd"
    elif kind == "device":
        member.type, member.devmajor, member.devminor = tarfile.CHRTYPE, 1, 3
    elif kind == "fifo":
        member.type = tarfile.FIFOTYPE
    bundle = _hostile_tar(tmp_path / "hostile.tar.gz", member, b"owned")
    code, out = _audit(bundle, reviewer)
    assert code == 4, out
    assert f"is {why}" in out and "[FAILED] bundle" in out
    assert not (tmp_path / "escaped").exists()
    assert sorted(p.name for p in reviewer.iterdir()) == []
    assert "audited bundle sha256:" + hashlib.sha256(bundle.read_bytes()).hexdigest() in out


def test_a_decompression_bomb_stops_at_the_limit(tmp_path):
    bomb = tmp_path / "bomb.tar.gz"
    size = MIN_LIMIT + (1 << 20)
    with (
        gzip.GzipFile(bomb, "wb", compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w|") as tf,
    ):
        member = tarfile.TarInfo(f"{STUDY}/zeros")
        member.size = size

        class Zeros(io.RawIOBase):
            left = size

            def readable(self) -> bool:
                return True

            def readinto(self, b):  # type: ignore[override]
                n = min(len(b), self.left)
                b[:n] = bytes(n)
                self.left -= n
                return n

        tf.addfile(member, io.BufferedReader(Zeros()))
    assert bomb.stat().st_size < size // 500
    code, out = _audit(bomb, tmp_path)
    assert code == 4, out
    assert "unpacks to more than" in out or "members hold more than" in out


def test_a_git_bundle_with_replace_or_other_refs_is_refused(honest_bundle, tmp_path):
    root = _unpack(honest_bundle, tmp_path / "unpacked")
    repo = tmp_path / "repo"
    git(tmp_path, "clone", "-q", "-b", "main", str(root / "history.bundle"), str(repo))
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-q", "--allow-empty", "-m", "stand-in")
    stand_in = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "reset", "-q", "--hard", head)
    git(repo, "replace", head, stand_in)
    git(repo, "notes", "add", "-m", "note", head)
    (root / "history.bundle").unlink()
    git(repo, "bundle", "create", str(root / "history.bundle"), "main", "refs/replace/" + head,
        "refs/notes/commits")  # fmt: skip
    code, out = _audit(_repack(root, tmp_path / "refs.tar.gz"), tmp_path)
    assert code == 4, out
    assert f"replace refs (refs/replace/{head})" in out and "refs/notes/commits" in out


def test_crate_metadata_that_disagrees_with_the_files_fails(honest_bundle, tmp_path):
    root = _unpack(honest_bundle, tmp_path / "unpacked")
    verdict = root / "results" / STUDY / "verdict.json"
    verdict.write_text(verdict.read_text().replace('"KILL"', '"PASS"'))
    out_tar = tmp_path / "crate.tar.gz"
    with tarfile.open(out_tar, "w:gz") as tf:  # the metadata left as it was
        tf.add(root, arcname=root.name)
    code, out = _audit(out_tar, tmp_path)
    assert code == 4, out
    assert f"results/{STUDY}/verdict.json is described with the SHA-256" in out


def test_a_doctored_results_file_fails(honest_bundle, tmp_path):
    root = _unpack(honest_bundle, tmp_path / "unpacked")
    verdict = root / "results" / STUDY / "verdict.json"
    text = verdict.read_text()
    assert '"KILL"' in text
    verdict.write_text(text.replace('"KILL"', '"PASS"'))
    code, out = _audit(_repack(root, tmp_path / "doctored.tar.gz"), tmp_path)
    assert code == 4, out
    assert "[ok] bundle" in out and f"results/{STUDY}/verdict.json" in out


def test_a_forged_ledger_line_fails(honest_bundle, tmp_path):
    root = _unpack(honest_bundle, tmp_path / "unpacked")
    ledger = root / "results" / STUDY / "runs.jsonl"
    lines = ledger.read_text().splitlines()
    run = json.loads(lines[-1])
    run["answer"] = {**(run.get("answer") or {}), "outcome": "forged"}
    lines[-1] = json.dumps(run, sort_keys=True, separators=(",", ":"))
    ledger.write_text("\n".join(lines) + "\n")
    code, out = _audit(_repack(root, tmp_path / "forged.tar.gz"), tmp_path)
    assert code == 4, out
    assert "published runs" in out and "holds no run with the published receipt" in out


def test_a_history_rewritten_after_the_run_fails(bundled_run, tmp_path):
    proj = bundled_run.copy(tmp_path / "rewritten")
    ran_at = head_commit(proj.root)
    git(proj.root, "commit", "-q", "--amend", "-m", "Pre-register the study (reworded)")
    assert head_commit(proj.root) != ran_at
    code, out = proj.cli("bundle", proj.prereg, "-o", tmp_path / "rewritten.tar.gz")
    assert code == 0, out
    code, out = _audit(tmp_path / "rewritten.tar.gz", tmp_path)
    assert code == 4, out
    assert f"does not hold the commit {ran_at[:12]}" in out


def test_files_over_the_size_limit_are_left_out_and_named(bundled_run, tmp_path):
    out = tmp_path / "small.tar.gz"
    code, text = bundled_run.cli("bundle", STUDY, "-o", out, "--max-file-mb", "0.002")
    assert code == 0, text
    root = _unpack(out, tmp_path / "unpacked")
    left_out = json.loads((root / "bundle.json").read_text())["left_out"]
    assert left_out and all(not (root / item["path"]).exists() for item in left_out)
    for item in left_out:
        kept = (bundled_run.root / item["path"]).read_bytes()
        assert (item["sha256"], item["size"]) == (hashlib.sha256(kept).hexdigest(), len(kept))
        assert not item["path"].endswith("runs.jsonl") and "/provenance/" not in item["path"]
        assert f"left out {item['path']}" in text


@pytest.mark.slow
def test_the_honest_bundle_reproduces(honest_bundle, tmp_path):
    code, out = _audit(honest_bundle, tmp_path, "--reproduce")
    assert code == 0, out
    assert "[ok] reproduce" in out and "audited bundle sha256:" in out


def test_a_project_not_run_cannot_be_bundled(tmp_path):
    proj = Project(tmp_path, STUDY)
    (tmp_path / "preregistrations").mkdir()
    proj.prereg.write_text("study: attack\n")
    code, out = proj.cli("bundle", proj.prereg)
    assert code == 2, out
