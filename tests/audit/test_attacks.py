"""The contract against a motivated researcher: each attack class of the contract issue, tried
on a study registered with ``band_rule: all`` whose honest verdict is KILL. Every attack is
refused (exit 2 or 3), or produces a flagged deviation, or makes ``tailgate audit`` (or
``audit --reproduce``) exit 4 naming the file or commit."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from attack_project import REPO_ROOT, forge_fresh_lock, head_commit, write_import_csv
from git_repo import git

REFUSED, INVALID, AUDIT_FAILED = 3, 2, 4


def rel(proj, path: Path) -> str:
    """``path`` as the audit names it (the audit runs on ``results/<study>`` from the project)."""
    return path.relative_to(proj.root).as_posix()


LOOSER = ("band_rule: all", "band_rule: any")


def test_honest_run_is_kill_and_audits_clean(honest_run, honest_audit, honest_reproduction):
    assert honest_run.verdict()["h1"]["verdict"] == "KILL"
    code, out = honest_audit
    assert code == 0, out
    assert "[ok] git" in out and "entry 0 first committed" in out
    _, code, out = honest_reproduction  # and a re-run from the registration gives every file
    assert code == 0, out
    assert "compared with a re-run from the data, byte for byte" in out


def test_honest_run_audits_clean_in_a_fresh_clone_and_from_another_folder(honest_run, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(honest_run.root), str(clone))
    (clone / "config").mkdir()
    (clone / "config" / "config.yaml").write_text("study: attack\nthreads: 1\n")
    from attack_project import Project

    proj = Project(clone, "attack")
    res = proj.snakemake()
    assert res.returncode == 0, res.stderr[-2000:]
    assert proj.verdict() == honest_run.verdict()  # byte-identical results, same verdict
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out = proj.cli("audit", proj.results)  # an absolute path
    assert code == 0, out
    from cli_call import tailgate

    res = tailgate("audit", proj.results, cwd=elsewhere)
    assert res.returncode == 0, res.stdout + res.stderr


# 1. re-freeze with a flag; moving provenance aside; relabelling records


def test_1_refreeze_after_data_is_refused_and_no_flag_hides_the_data(proj, tmp_path):
    proj.replace(*LOOSER)
    lock = proj.lock.read_bytes()
    code, out = proj.cli("freeze", proj.prereg, "--results", tmp_path / "empty")
    assert code == INVALID and "--results" in out  # the flag no longer exists
    code, out = proj.cli("freeze", proj.prereg)
    assert code == REFUSED and "protocol.band_rule" in out and "committed" in out
    code, out = proj.cli("amend", proj.prereg, "--reason", "r", "--results", tmp_path / "empty")
    assert code == INVALID
    assert proj.lock.read_bytes() == lock


def test_1_moving_provenance_aside_or_relabelling_records_still_shows_data(proj, tmp_path):
    shutil.move(proj.results / "provenance", tmp_path / "aside")
    git(proj.root, "rm", "-q", "--cached", f"preregistrations/{proj.lock.name}")
    git(proj.root, "commit", "-q", "-m", "forget the lock")  # even a deleted lock...
    proj.replace(*LOOSER)
    code, out = proj.cli("freeze", proj.prereg)
    assert code == REFUSED and "committed" in out
    from tailgate.prereg.evidence import data_evidence

    ev = data_evidence(proj.prereg)
    assert ev.exists and "holds" in ev.describe()  # files, whatever their records say


def test_1_amend_after_data_records_that_data_existed(proj):
    (proj.results / "provenance").rename(proj.results.parent / "aside")
    proj.replace(*LOOSER)
    code, out = proj.cli("amend", proj.prereg, "--reason", "band rule too strict")
    assert code == 0 and "data already existed" in out
    entry = json.loads(proj.lock.read_text())["chain"][-1]
    assert entry["data_existed"] is True


# 2. delete the results and register again


def test_2_delete_and_reregister_is_refused(proj):
    shutil.rmtree(proj.results)
    proj.lock.unlink()
    proj.replace(*LOOSER)
    code, out = proj.cli("freeze", proj.prereg)
    assert code == REFUSED
    assert "committed" in out and "tailgate amend" in out


def test_2_a_forged_new_registration_fails_the_audit_naming_the_commit(proj):
    """Past the refusal with the library itself: a new entry 0, committed, a rerun to PASS."""
    original = head_commit(proj.root)
    shutil.rmtree(proj.results)
    proj.replace(*LOOSER)
    forge_fresh_lock(proj)
    forged = proj.commit("Register the study")
    res = proj.snakemake()
    assert res.returncode == 0, res.stderr[-2000:]
    assert proj.verdict()["h1"]["verdict"] == "PASS"  # the unearned PASS
    code, out = proj.audit()
    assert code == AUDIT_FAILED
    assert f"commit {forged[:12]} rewrites the chain committed in {original[:12]}" in out
    assert "entry 0 replaced" in out


# 3. a decision rule amended after data


@pytest.fixture(scope="module")
def loosened(honest_run, tmp_path_factory):
    """A copy of the honest run whose band rule is amended after data (to ``any``), committed
    and run again, and what ``amend`` printed; read-only."""
    proj = honest_run.copy(tmp_path_factory.mktemp("loosened") / "attack")
    proj.replace(*LOOSER)
    code, out = proj.cli("amend", proj.prereg, "--reason", "any is the paper's rule")
    assert code == 0, out
    proj.commit("Amend the band rule")
    res = proj.snakemake()
    assert res.returncode == 0, res.stderr[-2000:]
    return proj, out


def test_3_band_rule_amendment_after_data_is_a_loosening_deviation(proj, loosened):
    proj.replace(*LOOSER)
    code, out = proj.cli("verify", proj.prereg)
    assert code == REFUSED and "protocol.band_rule" in out and "[loosening, decision rule]" in out
    proj = loosened[0]  # amended, committed and run again
    verdict = proj.verdict()
    assert verdict["h1"]["verdict"] == "PASS"
    what = " ".join(d["what"] for d in verdict["deviations"])
    assert "protocol.band_rule" in what and "loosening" in what
    html = (proj.results / "report.html").read_text()
    assert "protocol.band_rule" in html and "deviation" in html.lower()
    code, out = proj.audit()
    assert code == 0, out  # honest amendment: audits clean, shown as a deviation
    assert "amendment 1" in out and "after data existed" in out


def test_3_snakemake_refuses_with_exit_3_and_no_traceback(proj):
    proj.replace(*LOOSER)
    for args in (("-n",), (), ("--report", "x.html")):
        res = proj.snakemake(*args)
        assert res.returncode == REFUSED, res.stdout + res.stderr
        assert "protocol.band_rule" in res.stderr and "Traceback" not in res.stderr
        assert "WorkflowError" not in res.stderr


@pytest.mark.parametrize(
    "field",
    ["protocol.band_rule", "protocol.thresholds.band", "seed", "transform.epsilon", "data.backend"],
)
def test_3_every_field_but_descriptive_text_is_a_decision_rule(field):
    from tailgate.prereg.diff import is_decision

    assert is_decision(field)
    assert not is_decision("title") and not is_decision("hypotheses.H1")


@pytest.mark.parametrize(
    ("field", "old", "new", "cls"),
    [
        ("protocol.band_rule", "all", "any", "loosening"),
        ("protocol.band_rule", "any", "headline", "tightening"),
        ("protocol.multiplicity", "bonferroni", "none", "loosening"),
        ("analyses.ranking.alpha", 0.05, 0.10, "loosening"),
        ("protocol.stability.edge", "one_sided", "fail", "tightening"),
        ("models.m.id", "a", "b", "unclassified"),
    ],
)
def test_3_direction_of_a_change(field, old, new, cls):
    from tailgate.prereg.diff import diff

    def doc(value):
        out: dict = {}
        node = out
        *parents, last = field.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
        return out

    (change,) = diff(doc(old), doc(new))
    assert (change.field, change.direction, change.decision) == (field, cls, True)


# 4. links


def test_4_a_linked_folder_inside_results_is_refused_and_fails_the_audit(proj, tmp_path):
    fits = proj.results / "fits"
    shutil.move(fits, tmp_path / "fits-elsewhere")
    fits.symlink_to(tmp_path / "fits-elsewhere")
    res = proj.snakemake("-n")
    assert res.returncode != 0 and "link" in res.stdout + res.stderr
    code, out = proj.audit()
    assert code == AUDIT_FAILED and f"{rel(proj, fits)} is a link" in out


def test_4_a_linked_results_folder_fails_the_audit(proj, honest_run, tmp_path):
    shutil.rmtree(proj.results)
    proj.results.symlink_to(honest_run.results)
    code, out = proj.audit()
    assert code == AUDIT_FAILED and "is a link" in out
    res = proj.snakemake("-n")
    assert res.returncode != 0 and "link" in res.stdout + res.stderr


# 5. imported data is pinned


def test_5_an_edited_import_file_is_refused_and_fails_the_audit(imported):
    lock = json.loads(imported.lock.read_text())
    pin = lock["chain"][0]["pins"]["data.import.path"]
    assert pin["rows"] == {"a": 3000, "b": 300}
    csv = imported.root / "data" / "scores.csv"
    write_import_csv(csv, seed=6)  # new numbers, same shape
    code, out = imported.cli("verify", imported.prereg)
    assert code == REFUSED and "data.import.path" in out
    res = imported.snakemake("-n")
    assert res.returncode != 0 and "data.import.path" in res.stdout + res.stderr
    code, out = imported.audit()
    assert code == AUDIT_FAILED and "data.import.path" in out
    code, out = imported.cli("freeze", imported.prereg)
    assert code == REFUSED


def test_5_generation_records_list_the_pinned_file(import_run):
    rec = json.loads(
        (import_run.results / "provenance" / "generations__a__shard-0.parquet.json").read_text()
    )
    pinned = json.loads(import_run.lock.read_text())["chain"][0]["pins"]["data.import.path"]
    assert any(i["sha256"] == pinned["sha256"] for i in rec["inputs"])


def test_5_a_new_import_file_enters_only_by_amendment_as_a_deviation(imported):
    write_import_csv(imported.root / "data" / "scores.csv", seed=6)
    code, out = imported.cli("amend", imported.prereg, "--reason", "cleaned rows")
    assert code == 0 and "pins.data.import.path" in out
    from tailgate.prereg.deviations import amendment_log
    from tailgate.prereg.lock import read_lock

    _, deviations = amendment_log(read_lock(imported.lock))
    assert any("pins.data.import.path" in d["what"] for d in deviations)


# 6. stored statistics and reports


def _rehash(proj, rel: str) -> None:
    """Make the record of ``rel`` match the file again (what an attacker would do)."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path

    f = proj.results / rel
    rec_file = record_path(f, proj.results)
    rec = json.loads(rec_file.read_text())
    rec["sha256"], rec["bytes"] = sha256_file(f), f.stat().st_size
    rec_file.write_text(json.dumps(rec))


def test_6_an_edited_report_fails_the_audit(proj):
    html = proj.results / "report.html"
    html.write_text(html.read_text().replace("KILL", "PASS"))
    _rehash(proj, "report.html")
    code, out = proj.audit()
    assert code == AUDIT_FAILED and f"{rel(proj, html)}: differs from the report re-rendered" in out


def _repainted(png: bytes) -> bytes:
    """``png`` with one pixel changed, written as a valid PNG again."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGBA")
    r, g, b, a = image.getpixel((5, 5))
    image.putpixel((5, 5), (255 - r, g, b, a))
    out = io.BytesIO()
    image.save(out, format="png")
    return out.getvalue()


def test_6_a_repainted_figure_fails_the_audit(proj):
    """A figure's pixels are compared with a re-rendering (the recorded versions are the
    auditor's), not only what its sidecar says it plots: one changed pixel in a standalone PNG
    or in an image embedded in the report, each with a matching record, fails the audit."""
    import base64
    import re

    png = proj.results / "figures" / "power.png"
    png.write_bytes(_repainted(png.read_bytes()))
    html = proj.results / "report.html"
    text = html.read_text()
    first = re.search(r"base64,([A-Za-z0-9+/=]+)'", text)
    assert first is not None
    new = base64.b64encode(_repainted(base64.b64decode(first.group(1)))).decode("ascii")
    html.write_text(text.replace(first.group(1), new, 1))
    for f in ("figures/power.png", "report.html"):
        _rehash(proj, f)
    code, out = proj.audit()
    assert code == AUDIT_FAILED
    assert f"{rel(proj, png)}: differs from the report re-rendered" in out
    assert f"{rel(proj, html)}: differs from the report re-rendered" in out
    assert "different embedded images under the same versions" in out


def test_6_edited_fits_with_consistent_downstream_fail_reproduce(proj, reproduce):
    for cond in ("base", "heavy"):  # q = 0.97 made to look like q = 0.95, which passes
        rel_ = f"fits/tox/logit/{cond}.json"
        doc = json.loads((proj.results / rel_).read_text())
        first, second = doc["thresholds"][0], doc["thresholds"][1]
        doc["thresholds"][1] = {**first, "q": second["q"]}
        (proj.results / rel_).write_text(json.dumps(doc))
        _rehash(proj, rel_)
    res = proj.snakemake("--forcerun", "gates")
    assert res.returncode == 0, res.stderr[-2000:]
    assert proj.verdict()["h1"]["verdict"] == "PASS"
    code, out = proj.audit()
    # the honest run's line still holds its digests: two runs of one procedure disagree
    assert code == AUDIT_FAILED and "runs 1 and 2 ran one deterministic procedure" in out, out
    # the re-run leaves the report to the report check, but a report file must be there
    from tailgate.runtime.provenance import record_path

    md = proj.results / "report.md"
    record_path(md, proj.results).unlink()
    md.unlink()
    code, out = reproduce(proj)
    assert code == AUDIT_FAILED
    assert f"{rel(proj, proj.results / rel_)}: differs from its reproduction" in out
    assert "verdict.json: differs from its reproduction" in out
    assert f"{rel(proj, md)}: missing from the results (the report rule makes it)" in out


# 7. the code


def _tampered_code(tmp_path: Path) -> Path:
    """A copy of the workflow whose band rule 'all' is evaluated as 'any'."""
    dest = tmp_path / "code"
    shutil.copytree(REPO_ROOT / "workflow", dest / "workflow")
    shutil.copytree(REPO_ROOT / "envs", dest / "envs")
    shutil.copy(REPO_ROOT / "Snakefile", dest / "Snakefile")
    target = dest / "workflow" / "tailgate" / "protocol" / "verdict.py"
    text = target.read_text()
    anchor = "    if band_rule not in BAND_RULES:\n"
    assert anchor in text
    target.write_text(text.replace(anchor, '    band_rule = "any"\n' + anchor, 1))
    return dest


def test_7_changed_code_is_named_by_the_audit(proj, tmp_path, reproduce):
    code_dir = _tampered_code(tmp_path)
    env = {"PYTHONPATH": str(code_dir / "workflow")}
    res = proj.snakemake("--forcerun", "gates", env=env, snakefile=code_dir / "Snakefile")
    assert res.returncode == 0, res.stderr[-2000:]
    assert proj.verdict()["h1"]["verdict"] == "PASS"
    code, out = proj.audit()
    assert code == AUDIT_FAILED and "made by different code" in out
    # the whole study re-run with the changed code: one digest, but not the auditor's
    res = proj.snakemake("--forceall", env=env, snakefile=code_dir / "Snakefile")
    assert res.returncode == 0, res.stderr[-2000:]
    code, out = proj.audit()
    assert "not the auditor's" in out
    code, out = reproduce(proj)
    assert code == AUDIT_FAILED and "verdict.json: differs from its reproduction" in out


# 8. stage functions and a study changed in memory


def test_8_a_study_changed_in_memory_cannot_record(proj):
    from tailgate.errors import RefusalError
    from tailgate.prereg.study import load
    from tailgate.stages.common import StageContext

    study = load(proj.prereg)
    study.data["protocol"]["bootstrap"]["resamples"] = 100
    ctx = StageContext(study, proj.results)
    with pytest.raises(RefusalError, match="changed after it was loaded"):
        ctx.record(proj.results / "verdict.json")


def test_8_statistics_computed_with_another_study_are_a_deviation_and_fail_reproduce(
    proj, reproduce
):
    import copy

    from tailgate.files.atomic import write_json
    from tailgate.prereg.study import Study, load
    from tailgate.stages.common import open_stage, read_severities
    from tailgate.stages.fit import fit_condition

    ctx = open_stage(proj.prereg, proj.results)
    altered = copy.deepcopy(ctx.study.data)
    altered["protocol"]["bootstrap"]["resamples"] = 100
    cheap = Study(ctx.study.path, altered, ctx.study.canonical_hash, ctx.study.raw_hash)
    sev = proj.results / "severities" / "tox" / "logit" / "heavy.parquet"
    _, x = read_severities(sev)
    doc = fit_condition(
        x, study=cheap, scorer="tox", scale="logit", condition="heavy", progress=False
    )
    out = proj.results / "fits" / "tox" / "logit" / "heavy.json"
    write_json(out, doc)
    ctx.record(out, inputs=[sev])  # recorded by an honest context
    res = proj.snakemake()
    assert res.returncode == 0, res.stderr[-2000:]
    assert any("bootstrap resamples used [100" in d["what"] for d in proj.verdict()["deviations"])
    code, out_text = reproduce(proj)
    assert code == AUDIT_FAILED and "heavy.json: differs from its reproduction" in out_text
    assert load(proj.prereg).data["protocol"]["bootstrap"]["resamples"] == 300


# 9. never committed, or rewritten


def test_9_a_lock_never_committed_fails_the_audit(honest_run, tmp_path):
    proj = honest_run.copy(tmp_path / "p")
    shutil.rmtree(proj.root / ".git")
    code, out = proj.audit()
    assert code == AUDIT_FAILED and "not in a git work tree" in out
    code, out = proj.audit("--no-git")
    assert code == 0 and "timing unverified" in out


def test_9_an_uncommitted_change_to_the_lock_fails_the_audit(proj):
    lock = json.loads(proj.lock.read_text())
    proj.lock.write_text(json.dumps(lock, indent=1))  # same chain, other bytes
    code, out = proj.audit()
    assert code == AUDIT_FAILED and "differs from the committed version" in out


def _rewrite_chain(proj, edit) -> None:
    """Rewrite the lock's chain with ``edit(chain)`` and recompute every hash, as a forger
    with the library would."""
    from tailgate.prereg.lock import Lock, entry_hash, write_lock

    obj = json.loads(proj.lock.read_text())
    chain = edit(obj["chain"])
    previous = None
    for i, e in enumerate(chain):
        e["seq"], e["previous_entry_hash"] = i, previous
        e["entry_hash"] = entry_hash(e)
        previous = e["entry_hash"]
    lock = Lock(proj.lock, obj["study"], chain, len(chain), {})
    write_lock(lock)


@pytest.mark.parametrize("how", ["flip_data_existed", "fold_into_entry_0"])
def test_9_a_rewritten_amendment_fails_the_audit_even_with_a_published_hash(proj, how):
    entry0 = json.loads(proj.lock.read_text())["chain"][0]["entry_hash"]
    proj.replace(*LOOSER)
    assert proj.cli("amend", proj.prereg, "--reason", "looser")[0] == 0
    honest = proj.commit("Amend")
    time.sleep(1.1)  # a later commit time

    def flip(chain):
        chain[1]["data_existed"] = False
        return chain

    def fold(chain):
        chain[0]["prereg"] = chain[1]["prereg"]
        from tailgate.prereg.canonical import canonical_hash

        chain[0]["canonical_hash"] = canonical_hash(chain[0]["prereg"])
        return chain[:1]

    _rewrite_chain(proj, flip if how == "flip_data_existed" else fold)
    forged = proj.commit("Tidy the lock")
    code, out = proj.audit("--expected-hash", entry0)
    assert code == AUDIT_FAILED
    assert f"commit {forged[:12]} rewrites the chain committed in {honest[:12]}" in out


# 10. sample shortfall


def test_10_a_shortfall_is_a_deviation_shown_first(import_run):
    deviations = import_run.verdict()["deviations"]
    assert any("condition b: 300 rows analysed, 2,000 registered" in d["what"] for d in deviations)
    md = (import_run.results / "report.md").read_text()
    assert md.index("condition b: 300 rows") < md.index("Pre-registered")
    assert import_run.audit()[0] == 0


def test_10_a_registered_minimum_refuses_the_shortfall(imported, tmp_path):
    imported.replace("    prompts: 2000\n", "    prompts: 2000\n    min_rows: 1500\n")
    assert imported.cli("amend", imported.prereg, "--reason", "add a minimum")[0] == 0
    res = imported.snakemake("--forcerun", "transform")
    text = res.stdout + res.stderr
    assert res.returncode != 0 and "min_rows" in text and "300 scored rows" in text


# 11. YAML


@pytest.mark.parametrize(
    ("text", "field"),
    [("min_exceedances: 0500", "protocol.min_exceedances"), ("min_exceedances: 8:20", "protocol")],
)
def test_11_yaml_1_1_numbers_are_refused(proj, text, field):
    proj.replace("min_exceedances: 500", text)
    code, out = proj.cli("verify", proj.prereg)
    assert code == INVALID and field in out and "readers disagree" in out


def test_11_an_alias_bomb_is_refused_at_once(proj):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 12)]
    text = proj.prereg.read_text() + "hypotheses:\n" + "".join(f"  {x}\n" for x in lines)
    proj.prereg.write_text(text)
    assert len(text) < 6000
    started = time.perf_counter()
    code, out = proj.cli("verify", proj.prereg)
    assert code == INVALID and "anchor" in out
    assert time.perf_counter() - started < 30  # refused before expansion (would take minutes)


# attacks of our own


def test_own_a_published_receipt_of_any_entry_anchors_the_chain(loosened):
    proj, out = loosened  # results under the amended head
    assert "tailgate receipt: study=attack entry=1" in out
    lock = json.loads(proj.lock.read_text())
    for e in lock["chain"]:
        code, out = proj.audit("--expected-hash", e["entry_hash"])
        assert code == 0, out
    code, out = proj.audit("--expected-hash", "f" * 64)
    assert code == AUDIT_FAILED and "no chain entry has the published hash" in out


def test_own_tag_commits_and_tags_the_registration(tmp_path):
    from attack_project import ATTACK_STUDY, make_project

    proj = make_project(tmp_path / "t", "attack", ATTACK_STUDY)
    git(proj.root, "init", "-q", "-b", "main")
    code, out = proj.cli("freeze", proj.prereg, "--tag")
    assert code == 0, out
    message = git(proj.root, "tag", "-l", "--format=%(contents)", "prereg/attack/0")
    assert "tailgate receipt: study=attack entry=0" in message
    assert git(proj.root, "status", "--porcelain", "--untracked-files=no").strip() == ""


def test_own_deleting_a_whole_output_and_its_record_fails_the_audit(proj):
    from tailgate.runtime.provenance import record_path

    f = proj.results / "fits" / "tox" / "logit" / "heavy.json"
    record_path(f, proj.results).unlink()
    f.unlink()
    code, out = proj.audit()
    assert code == AUDIT_FAILED and "heavy.json" in out


def test_own_records_relabelled_as_derived_do_not_move_the_first_artifact(proj):
    times = []  # every artifact's recorded time, whatever its kind
    for rec in (proj.results / "provenance").glob("*.json"):
        doc = json.loads(rec.read_text())
        times.append((doc["created"], doc["path"]))
        doc["kind"] = "derived"
        rec.write_text(json.dumps(doc))
    from tailgate.audit import audit

    report = audit(proj.results)
    first = next(c for c in report.checks if c.name == "first artifact")
    assert first.detail == f"first artifact {min(times)[1]}"
