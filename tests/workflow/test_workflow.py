"""The protocol workflow through Snakemake itself, on a small study built in a temp directory:
verdicts against the statistics engine called directly, byte-identical results for --cores 1
and 2, refusal after an edit, the amendment path (with ``tailgate status`` after it), and the
audit passing on fresh results and failing after a recorded verdict is altered."""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from git_repo import git_commit
from tailgate.plans.registration import load
from tailgate.protocol.gates import ConditionSummary, GateSettings, evaluate_pair
from tailgate.protocol.verdict import h1_verdict
from tailgate.seeds import seed_sequence
from tailgate.stats import gof, gpd
from tailgate.stats.equivalence import BulkEquivalence, ci_inside_band
from tailgate.stats.risk import bulk_bootstrap, exceedances
from wf_project import Project, job_counts


def _engine_verdict(proj: Project, scale: str):
    """Every gate of every registered pair, computed directly with the statistics engine from
    the severities the workflow wrote (the engine's own bulk bootstrap, not the stage's)."""
    study = load(proj.prereg)
    p = study.protocol
    scorer = study.scorers()[0]["name"]
    pairs = study.pairs()
    settings = GateSettings(
        delta_mu=p["tolerances"]["mean"],
        delta_tvar=p["tolerances"]["tvar"],
        n_star=p["min_exceedances"],
        gof_alpha=p["gof"]["alpha"],
        stability_delta=p["stability"]["delta"],
        stability_tolerance=p["stability"]["tolerance"],
        delta_floor=p["delta_floor"],
        alpha=p["alpha"],
        multiplicity=p["multiplicity"],
        n_pairs=len(pairs),
        tvar_level=p["tvar_level"],
    )
    level = 1 - p["alpha"] / len(pairs)
    B = p["bootstrap"]["resamples"]
    sev = {}
    for c in study.conditions():
        t = pq.read_table(proj.results / "severities" / scorer / scale / f"{c['name']}.parquet")
        sev[c["name"]] = t.column("severity").to_numpy()

    def side(x, q):
        if not 0 < q < 1:
            return None
        ex = exceedances(x, q)
        if ex.n_exc < p["stability"]["min_exceedances"]:
            return math.nan  # inside the data range but not testable: G5 fails
        f = gpd.fit(ex.y)
        return f.xi if f.converged else math.nan

    out = []
    for q in p["thresholds"]["band"]:
        summ = {}
        for name, x in sev.items():
            ex = exceedances(x, q)
            f = gpd.fit(ex.y)
            keys = (scorer, scale, name, format(q, "g"))
            lo, hi = gpd.bootstrap(ex.y, B, seed_sequence(study.seed, "fit", *keys), full_fit=f).ci(
                level
            )
            ad = gof.anderson_darling(ex.y, f, seed=seed_sequence(study.seed, "gof", *keys))
            d = p["stability"]["delta"]
            summ[name] = ConditionSummary(
                name, q, ex.u, ex.n_exc, f.xi, f.sigma, f.status, lo, hi, level, ad.pvalue,
                side(x, round(q - d, 10)), side(x, round(q + d, 10)),
            )  # fmt: skip
        for a, b in pairs:
            ba = bulk_bootstrap(sev[a], B, seed_sequence(study.seed, "bulk", scorer, a))
            bb = bulk_bootstrap(sev[b], B, seed_sequence(study.seed, "bulk", scorer, b))
            bulk = BulkEquivalence(
                ci_inside_band(ba.mean - bb.mean, 0.0, settings.delta_mu, level),
                ci_inside_band(ba.tvar - bb.tvar, 0.0, settings.delta_tvar, level),
                p["tvar_level"],
            )
            out.append(evaluate_pair(summ[a], summ[b], bulk, settings))
    return h1_verdict(
        out, headline_q=p["thresholds"]["headline"], band=p["thresholds"]["band"],
        settings=settings, band_rule=p["band_rule"],
    )  # fmt: skip


@pytest.mark.parametrize("scale", ["probability", "logit"])
def test_recorded_gates_equal_the_engine_called_directly(small_run, scale):
    verdict = json.loads((small_run.results / "verdict.json").read_text())
    gates = next(g for g in verdict["gates"] if g["scale"] == scale)
    engine = _engine_verdict(small_run, scale)
    checked = 0
    for pair in gates["pairs"]:
        for at in pair["thresholds"]:
            e = engine.at(pair["a"], pair["b"], at["q"])
            for g in e.gates:
                assert at["gates"][g.gate]["passed"] == g.passed, (pair["a"], pair["b"], g.gate)
                checked += 1
            assert at["first_failing"] == e.first_failing
    assert checked == 2 * 2 * 7
    assert gates["h1"]["verdict"] == engine.h1
    if scale == "logit":
        assert verdict["h1"]["verdict"] == engine.h1


def test_outputs_layout_logs_and_provenance(small_run):
    rd = small_run.results
    for rel in [
        "generations/base/shard-0.parquet", "generations/heavy/shard-1.parquet",
        "scores/tox/base/shard-1.parquet", "scores/tox/twin/shard-0.parquet", "operating.json",
        "runs.jsonl",
        "severities/tox/logit/heavy.parquet", "severities/tox/logit/transform.json",
        "fits/tox/probability/base.json", "bulk/tox/base.parquet", "gates/tox/logit.json",
        "sensitivity/tox/logit.json", "power.json", "verdict.json", "report.html", "report.md",
        "figures/power.png", "figures/stability.png", "logs/fit/tox-logit-heavy.log",
    ]:  # fmt: skip
        assert (rd / rel).is_file(), rel
    assert not (rd / "scores/tox/twin.parquet").exists()  # the shards are the only copy
    records = list((rd / "provenance").glob("*.json"))
    artifacts = [
        f for f in rd.rglob("*") if f.is_file() and f.relative_to(rd).parts[0] != "provenance"
    ]
    assert len(records) == len([f for f in artifacts if f.relative_to(rd).parts[0] != "logs"])
    verdict = json.loads((rd / "verdict.json").read_text())
    assert verdict["prereg_hash"] == load(small_run.prereg).canonical_hash
    assert verdict["amendments"] == [] and verdict["deviations"] == []
    sens = json.loads((rd / "sensitivity/tox/logit.json").read_text())
    assert [h["multiplier"] for h in sens["h1"]] == [0.5, 1.0, 2.0]
    fit = json.loads((rd / "fits/tox/logit/base.json").read_text())
    assert "fit tox/logit/base" in (rd / "logs/fit/tox-logit-base.log").read_text()  # tqdm bar
    assert fit["transform"]["n_clipped_high"] == 0
    assert [t["q"] for t in fit["thresholds"]] == [0.95, 0.97]
    power = json.loads((rd / "power.json").read_text())
    assert len(power["pass_rate"]) == 2 and len(power["pass_rate"][0]) == 2


def _result_files(results: Path) -> list[str]:
    """The result files under ``results``, without the logs, the provenance records and the
    run ledger."""
    return sorted(
        p.relative_to(results).as_posix()
        for p in results.rglob("*")
        if p.is_file() and p.relative_to(results).parts[0] not in ("logs", "provenance")
        and p.name != "runs.jsonl"
    )  # fmt: skip


def _same_records(mine: Path, theirs: Path, names: list[str] | None = None) -> None:
    """Provenance records equal but for the time they were written (all of ``theirs``, or the
    records of ``names``)."""
    from tailgate.runtime.provenance import record_path

    records = (
        [record_path(theirs / n, theirs) for n in names]
        if names is not None
        else [r for r in (theirs / "provenance").rglob("*.json") if r.name != "runs.jsonl.json"]
    )
    assert records
    for rec in records:
        other = mine / rec.relative_to(theirs)
        mine_doc, theirs_doc = json.loads(other.read_text()), json.loads(rec.read_text())
        assert {k: v for k, v in mine_doc.items() if k != "created"} == {
            k: v for k, v in theirs_doc.items() if k != "created"
        }, rec.name


def test_byte_identical_for_cores_1_and_reruns(small_run, tmp_path):
    """Re-run on one core: the same bytes in every result, figure and report, and the
    provenance records differ only in time. Then a fit and a bulk bootstrap again, each job in
    its own process (no fork server): the same bytes. (The whole study with every job in
    its own process is the SLURM study's, ``tests/slurm``, compared with a local run.)"""
    other = Project(tmp_path / "again")
    shutil.copytree(
        small_run.root, other.root, ignore=shutil.ignore_patterns("results", ".snakemake")
    )
    res = other.snakemake(cores=1)
    assert res.returncode == 0, res.stderr[-3000:]
    names = _result_files(small_run.results)
    assert {"verdict.json", "bulk/tox/base.parquet", "figures/power.png"} <= set(names)
    assert _result_files(other.results) == names
    for rel in names:
        assert (other.results / rel).read_bytes() == (small_run.results / rel).read_bytes(), rel
    _same_records(other.results, small_run.results)
    # a fit and a bulk bootstrap (each stage's compiled kernels) in their own processes, with
    # everything upstream kept
    refit = ["fits/tox/logit/heavy.json", "bulk/tox/heavy.parquet"]
    targets = [f"results/small/{rel}" for rel in refit]
    res = other.snakemake(
        *targets, "--forcerun", *targets, cores=1, env={"TAILGATE_FORKSERVER": "off"}
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert job_counts(res.stdout + res.stderr) == {"fit": 1, "bulk": 1}
    for rel in refit:
        assert (other.results / rel).read_bytes() == (small_run.results / rel).read_bytes(), rel
    _same_records(other.results, small_run.results, refit)


def _forge(project: Project, rel: str, doc: dict) -> None:
    """Write ``doc`` as ``rel`` and rewrite its provenance hash to match (a forger's edit)."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path

    path = project.results / rel
    path.write_text(json.dumps(doc, indent=2, sort_keys=True))
    rec = record_path(path, project.results)
    content = json.loads(rec.read_text())
    content["sha256"] = sha256_file(path)
    content["bytes"] = path.stat().st_size
    rec.write_text(json.dumps(content))


def test_audit_passes_then_fails_when_a_recorded_verdict_is_altered(small_copy):
    res = small_copy.cli("audit", small_copy.results)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "verdicts: protocol: re-derived from stored statistics" in res.stdout
    # a forger flips one gate in verdict.json and rewrites its provenance hash to match
    doc = json.loads((small_copy.results / "verdict.json").read_text())
    at = doc["gates"][0]["pairs"][0]["thresholds"][0]
    at["gates"]["G3"]["passed"] = not at["gates"]["G3"]["passed"]
    _forge(small_copy, "verdict.json", doc)
    res = small_copy.cli("audit", small_copy.results)
    assert res.returncode == 4, res.stdout
    assert "verdict.json" in res.stdout and "gate G3 recorded" in res.stdout
    assert "re-derived" in res.stdout


def test_under_other_versions_the_audit_compares_pictures_within_a_tolerance(
    small_copy, monkeypatch
):
    """Under another matplotlib than the run's, the figures are drawn again and compared by
    their pixels within the picture tolerance (tailgate.audit.pictures), and what they plot by
    value: the honest study passes, a plotted number changed in a sidecar fails."""
    import tailgate.runtime.environment as environment
    from tailgate.audit import audit

    mine = environment.current
    monkeypatch.setattr(
        environment, "current", lambda *a, **k: {**mine(*a, **k), "matplotlib": "0.0"}
    )
    report = audit(small_copy.results)
    assert report.ok, "\n".join(report.lines())
    detail = next(c.detail for c in report.checks if c.name == "report")
    assert "tolerant mode" in detail and "pictures by their pixels" in detail, detail
    assert "largest picture difference" in detail, detail  # the pictures were drawn again
    assert report.checks[0].detail.startswith("tolerant"), report.checks[0].detail
    doc = json.loads((small_copy.results / "figures" / "power.json").read_text())
    doc["content"]["plots"]["power"]["power"] = 0.5
    _forge(small_copy, "figures/power.json", doc)
    report = audit(small_copy.results)
    assert not report.ok
    assert any("figures/power.json: differs from the report re-rendered" in f
               for f in report.failures), report.failures  # fmt: skip


def test_edit_is_refused_by_snakemake_and_by_every_stage(small_copy):
    from tailgate.errors import RefusalError
    from tailgate.stages.gates import gates_stage

    small_copy.replace("tvar: 0.30", "tvar: 0.40")
    res = small_copy.snakemake("-n")
    assert res.returncode != 0
    assert "Refusing to run study 'small'" in res.stdout + res.stderr
    assert "protocol.tolerances.tvar" in res.stdout + res.stderr
    with pytest.raises(RefusalError, match=r"tolerances\.tvar"):
        gates_stage(small_copy.prereg, small_copy.results, "tox", "logit", {}, {}, "x.json")


def test_amendment_reruns_only_the_decision_stages(small_copy):
    """Refused until amended; amended, only the stages that read the field run again; the
    verdict, report, audit and ``tailgate status`` show the deviation and the timeline."""
    rd = small_copy.results
    fits_before = (rd / "fits/tox/logit/base.json").read_bytes()
    gen_mtime = (rd / "generations/base/shard-0.parquet").stat().st_mtime_ns
    small_copy.replace("tvar: 0.30", "tvar: 0.05")
    # the changed frozen field refuses the run until it is amended (no job scheduled)
    res = small_copy.snakemake("-n", commit=False)
    text = res.stdout + res.stderr
    assert res.returncode == 3 and "protocol.tolerances.tvar" in text, text[-3000:]
    assert "tailgate amend" in text and "Job stats" not in text and "Traceback" not in text
    amended = small_copy.cli("amend", small_copy.prereg, "--reason", "tighter TVaR tolerance")
    assert amended.returncode == 0, amended.stderr
    git_commit(small_copy.root, "Amend: tighter TVaR tolerance", "preregistrations")
    res = small_copy.snakemake()
    assert res.returncode == 0, res.stderr[-3000:]
    # exactly the stages that read a tolerance re-run: no fit, bulk bootstrap or power grid
    assert job_counts(res.stderr) == {
        "gates": 2, "sensitivity": 2, "operating": 1, "verdict": 1, "report": 1, "all": 1,
    }  # fmt: skip
    assert (rd / "fits/tox/logit/base.json").read_bytes() == fits_before
    assert (rd / "generations/base/shard-0.parquet").stat().st_mtime_ns == gen_mtime
    verdict = json.loads((rd / "verdict.json").read_text())
    assert verdict["prereg_hash"] == load(small_copy.prereg).canonical_hash
    assert [a["seq"] for a in verdict["amendments"]] == [1]
    assert verdict["deviations"] and verdict["deviations"][0]["amendment"] == 1
    g2 = [
        at["gates"]["G2"]["passed"] for p in verdict["gates"][1]["pairs"] for at in p["thresholds"]
    ]
    assert not any(g2)  # 0.05 is tighter than every TVaR difference CI
    html = (rd / "report.html").read_text()
    assert "tighter TVaR tolerance" in html
    res = small_copy.cli("audit", rd)
    assert res.returncode == 0, res.stdout
    assert "amendment 1" in res.stdout and "after data existed" in res.stdout
    _status_shows_the_timeline(small_copy, amended.stdout)


def _status_shows_the_timeline(proj: Project, amend_out: str) -> None:
    """``tailgate status`` after the amended run: registered, run, amended (a deviation, after
    data), run; the amendment holds the ledger's head as it saw it, and its receipt names it."""
    res = proj.cli("status", "small", "--json", "--audit")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["format"] == "tailgate.status/1" and doc["study"] == "small"
    assert doc["matches_lock"] is True and doc["frozen"] is True and doc["problem"] is None
    assert [e["event"] for e in doc["events"]] == ["registered", "run", "amended", "run"]
    amended = doc["events"][2]
    assert amended["data_existed"] is True and amended["deviation"] is True
    assert amended["fields"] == ["protocol.tolerances.tvar"] and amended["committed"]["commit"]
    assert [e["lock_seq"] for e in doc["events"] if e["event"] == "run"] == [0, 1]
    assert doc["audit"] == {"passed": True, "failed_checks": []}
    assert doc["ledger_problems"] == []
    res = proj.cli("status", "small")
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert re.search(r"registered\s+entry 0", text) and re.search(r"amended\s+entry 1", text)
    assert "DEVIATION, after data: protocol.tolerances.tvar" in text
    assert "reason: tighter TVaR tolerance" in text and "run 2" in text
    lock = json.loads(proj.prereg.with_suffix(".lock.json").read_text())
    first_line = (proj.results / "runs.jsonl").read_text().splitlines()[0]
    head = lock["chain"][1]["ledger_head"]
    assert head == {"runs": 1, "line_sha256": hashlib.sha256(first_line.encode()).hexdigest()}
    assert f"runs=1:{head['line_sha256'][:16]}" in amend_out


def test_report_is_self_contained(small_run):
    html = (small_run.results / "report.html").read_text()
    # the answer first: the verdict and the pair × gate matrix come before any figure
    assert html.index("id='answer'") < html.index("Pairwise H1 matrix") < html.index("<img")
    assert html.count("data:image/png;base64,") >= 4
    assert "src='http" not in html and 'src="http' not in html
    assert np.isfinite(json.loads((small_run.results / "power.json").read_text())["level"])
