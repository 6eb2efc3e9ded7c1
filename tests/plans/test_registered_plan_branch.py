"""The registered plan beside an amendment, through Snakemake.

An amendment that changes what the statistics are (the bootstrap size, an analysis's resamples)
after data exists makes the workflow compute entry 0's own fits, bulk bootstraps, gates and
analysis statistics into ``results/<study>/registered/``, sharing the data jobs with the amended
plan. ``verdict.json``, the report and the run's answer show the registered plan's outcome beside
the amended one, equal to what the entry-0 registration's own run made before the amendment (the
study's first run, in another project: the branch's files are computed afresh, by its own rules);
the audit passes and catches a forged branch fit. An amendment of a decision rule alone adds no
job of the branch. An amendment of one condition's data (the perturbation example's, slow: about
30 s) makes the branch generate, score and embed that condition itself, in the one embed job.

The study is the smallest complete one (two conditions, one scale, one threshold). On two
shared cores its first run and the amended run take about 65 s together (the fixtures), the
audit of the amendment test a few seconds, the forged-fit audit 3 s, the
decision-rule test (a dry run) 5 s, and the slow ``audit --reproduce`` test about 50 s.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import pytest
from wf_project import REPO_ROOT, Project, job_counts, make_project

PLAN_STUDY = """\
schema_version: 1
study: small
seed: 777
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
transform: {scales: [logit], epsilon: 1.0e-12}
protocol:
  tolerances: {mean: 0.10, tvar: 0.30}
  thresholds: {headline: 0.95, band: [0.95]}
  min_exceedances: 100
  stability: {scan: {start: 0.90, stop: 0.96, step: 0.03}, resamples: 10, min_exceedances: 50}
  bootstrap: {resamples: 100}
  pairs: [[base, heavy]]
  sensitivity: {tolerance_multipliers: [1.0]}
  power_simulation: {delta_xi: [0.0], n_exc: [100], trials: 2, resamples: 10}
  operating_characteristics: {trials: 10, resamples: 10}
analyses:
  ranking:
    kind: dominance
    conditions: [base, heavy]
    scorers: [tox]
    scale: logit
    resamples: 50
    eps0: [0.25]
    criteria:
      - {name: base-safer, statistic: "r_fsd(base, heavy)", comparison: "<=", threshold: 0.0}
"""

#: what the registered plan computes itself: every file it reads from its own branch
BRANCH_FILES = (
    "fits/tox/logit/base.json",
    "fits/tox/logit/heavy.json",
    "bulk/tox/base.parquet",
    "bulk/tox/heavy.parquet",
    "gates/tox/logit.json",
    "analyses/ranking/measures.json",
    "analyses/ranking/statistics.json",
)


@pytest.fixture(scope="module")
def plan_run(tmp_path_factory) -> Project:
    """The small study, frozen, committed and run once (its data exists); read-only."""
    proj = make_project(tmp_path_factory.mktemp("plan"), PLAN_STUDY)
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


def _copy(run: Project, dest) -> Project:
    shutil.copytree(run.root, dest, symlinks=True)
    return Project(dest)


def _amend(proj: Project, reason: str) -> None:
    res = proj.cli("amend", proj.prereg, "--reason", reason)
    assert res.returncode == 0, res.stdout + res.stderr


def _forge(proj: Project, rel: str, doc: dict) -> None:
    """Write ``doc`` as ``rel`` and rewrite its provenance hash to match (a forger's edit)."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path

    path = proj.results / rel
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    rec = record_path(path, proj.results)
    content = json.loads(rec.read_text())
    content["sha256"], content["bytes"] = sha256_file(path), path.stat().st_size
    rec.write_text(json.dumps(content))


@pytest.fixture(scope="module")
def amended(plan_run, tmp_path_factory) -> Project:
    """A copy of the run, its bootstrap sizes amended after data and run again; read-only.
    ``first_run``: the second run."""
    proj = _copy(plan_run, tmp_path_factory.mktemp("amended") / "project")
    proj.replace("bootstrap: {resamples: 100}", "bootstrap: {resamples: 60}")
    proj.replace("    resamples: 50\n", "    resamples: 40\n")
    _amend(proj, "smaller bootstraps")
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    proj.first_run = res
    return proj


def test_a_statistics_amendment_computes_the_registered_plan_beside_it(plan_run, amended):
    proj, res = amended, amended.first_run
    # entry 0's statistics jobs run in its branch; its data jobs are the amended plan's
    rd = proj.results
    jobs = job_counts(res.stderr)  # every rule serves both plans: a branch job logs under
    logs = rd / "logs" / "registered"  # logs/registered/<rule>/
    branch = {d.name: len(list(d.glob("*.log"))) for d in logs.iterdir()}
    assert branch == {"fit": 2, "bulk": 2, "gates": 1, "analysis": 1, "grade": 1}
    assert all(jobs[rule] > n for rule, n in branch.items())  # beside the head's own
    made = sorted(p.relative_to(rd / "registered").as_posix()
                  for p in (rd / "registered").rglob("*") if p.is_file())  # fmt: skip
    assert made == sorted(BRANCH_FILES)
    records = rd / "provenance" / "registered"  # the branch's records, kept apart
    record = json.loads((records / "gates__tox__logit.json.json").read_text())
    lock = json.loads(proj.lock.read_text())
    assert record["plan"]["name"] == "registered" and record["plan"]["seq"] == 0
    assert record["plan"]["canonical_hash"] == lock["chain"][0]["canonical_hash"]
    assert record["prereg"]["lock_head"]["seq"] == 1  # guarded against the chain head
    severities = "severities/tox/logit/base.parquet"  # shared: the branch fit read the main file
    fit_record = json.loads((records / "fits__tox__logit__base.json.json").read_text())
    assert severities in [i["artifact"] for i in fit_record["inputs"]]

    # the registered plan's outcome beside the amended one, for H1 and every criterion
    verdict = json.loads((rd / "verdict.json").read_text())
    plan = verdict["registered_plan"]
    assert (plan["entry"], plan["amended_entry"]) == (0, 1)
    changed = plan["statistics_changed"]  # the analysis falls back on the protocol's bootstrap
    assert changed["protocol"] == ["protocol.bootstrap"]
    assert "analyses.ranking" in changed["ranking"]
    (h1,) = plan["h1"]
    assert h1["headline"] and h1["h1"] in ("PASS", "KILL")
    assert h1["reason"].startswith("computed under entry 0 from its own statistics")
    (criterion,) = plan["criteria"]
    assert criterion["registered"] in ("PASS", "FAIL", "BORDERLINE", "NOT_TESTED")
    assert criterion["reason"].startswith("computed under entry 0 from its own statistics")
    assert plan["answer"]["summary"] == f"H1 {h1['h1']}"
    md, html = (rd / "report.md").read_text(), (rd / "report.html").read_text()
    for text in (md, html, json.dumps(verdict)):
        assert "not re-derived" not in text and "not computed" not in text
    assert f"| tox | logit | {h1['h1']} |" in md and "H1 under the registered plan" in md
    first = plan["answer"]["outcome"]
    assert f"Under the registered plan (entry 0 of the lock; H1): **{first}**" in md
    assert "under the registered plan (entry 0, beside amendment 1)" in res.stdout
    assert f"H1 tox / logit (headline): {h1['h1']} (as amended:" in res.stdout

    # the reference: what the entry-0 registration's own run made, in the project the amended
    # copy was taken from (its files as they were before the amendment)
    ref = plan_run
    for rel in BRANCH_FILES:
        assert (rd / "registered" / rel).read_bytes() == (ref.results / rel).read_bytes(), rel
    gates = json.loads((ref.results / "gates/tox/logit.json").read_text())
    assert h1["h1"] == gates["report"]["h1"]["verdict"] and h1["gates"] == gates["report"]
    stats = json.loads((ref.results / BRANCH_FILES[-1]).read_text())
    assert criterion["registered"] == stats["criteria"][0]["outcome"]

    # the audit verifies the branch like every artifact and re-derives its verdicts
    res = proj.cli("audit", rd)
    assert res.returncode == 0, res.stdout[-4000:]
    assert "verdicts: registered plan: the outcome under entry 0 re-derived" in res.stdout


def test_a_forged_branch_fit_fails_the_audit(amended, tmp_path):
    proj = _copy(amended, tmp_path / "forged")
    rd = proj.results
    # a branch fit forged with its record rewritten to match: the audit names it
    rel = "registered/fits/tox/logit/heavy.json"
    doc = json.loads((rd / rel).read_text())
    doc["thresholds"][0]["xi_ci_gate"] = [0.9, 1.0]
    _forge(proj, rel, doc)
    res = proj.cli("audit", rd)
    assert res.returncode == 4
    assert f"{rd / 'registered/gates/tox/logit.json'}: its input {rd / rel} changed" in res.stdout


def test_a_branch_record_moved_among_the_main_records_fails_the_audit(amended, tmp_path):
    proj = _copy(amended, tmp_path / "moved")
    records = proj.results / "provenance"
    name = "fits__tox__logit__heavy.json.json"  # the main fit's record, replaced by the branch's
    (records / "registered" / name).replace(records / name)
    res = proj.cli("audit", proj.results)
    assert res.returncode == 4
    assert (
        f"{records / name}: record describes 'registered/fits/tox/logit/heavy.json', which "
        f"belongs in registered/{name} (record moved or swapped)"
    ) in res.stdout


@pytest.mark.slow
def test_a_data_amendment_runs_entry_0s_data_jobs_and_one_embed_job(tmp_path):
    """The perturbation example amended after its freeze (one null query's data changed): the
    registered plan generates, scores and embeds that query itself, its embedding in the same
    embed job as the amended plan's, and its files are the example's own as first registered
    (the pinned digests); the audit passes."""
    name = "perturbation-energy-example"
    proj = Project(tmp_path / "project", name)
    (proj.root / "config").mkdir(parents=True)
    (proj.root / "config" / "config.yaml").write_text(f"study: {name}\nthreads: 1\n")
    shutil.copytree(REPO_ROOT / "preregistrations", proj.root / "preregistrations")
    proj.replace("{name: null00, simulate: {bernoulli: {p: 0.3438}}}",
                 "{name: null00, simulate: {bernoulli: {p: 0.3500}}}")  # fmt: skip
    _amend(proj, "null00's data")
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    jobs, rd = job_counts(res.stderr), proj.results
    assert jobs["embed"] == 1 and jobs["generate"] == 30  # 29 conditions, and null00 again
    own = {
        "generations/null00/shard-0.parquet",
        "scores/says-yes/null00/shard-0.parquet",
        "embeddings/tiny-encoder/null00/shard-0.parquet",
        "analyses/composite-null/measures.json",
        "analyses/composite-null/statistics.json",
    }
    branch = rd / "registered"
    assert own <= {p.relative_to(branch).as_posix() for p in branch.rglob("*") if p.is_file()}
    record = (
        rd / "provenance" / "registered" / "embeddings__tiny-encoder__null00__shard-0.parquet.json"
    )
    assert json.loads(record.read_text())["plan"]["seq"] == 0
    digests = {f: hashlib.sha256((branch / f).read_bytes()).hexdigest() for f in own}
    pinned = json.loads((REPO_ROOT / "tests/analyses/shipped_results" / f"{name}.json").read_text())
    assert any(digests.items() <= dict(found).items() for found in pinned.values())
    assert proj.cli("audit", rd).returncode == 0


def test_a_registered_plan_changed_in_memory_cannot_record(amended):
    from tailgate.errors import RefusalError
    from tailgate.stages.common import open_stage

    ctx = open_stage(amended.prereg, amended.results, "registered")
    assert ctx.study.data["protocol"]["bootstrap"]["resamples"] == 100  # entry 0's
    assert ctx.head is not None and ctx.head.data["protocol"]["bootstrap"]["resamples"] == 60
    ctx.study.data["protocol"]["bootstrap"]["resamples"] = 10
    with pytest.raises(RefusalError, match="changed after it was loaded"):
        ctx.record(amended.results / "registered" / "fits" / "tox" / "logit" / "base.json")


@pytest.mark.slow
def test_audit_reproduce_re_runs_the_registered_plan(amended):
    """``audit --reproduce`` re-runs the whole DAG, the branch included, in a scratch project
    and compares every file (about 40 s)."""
    res = amended.cli("audit", "--reproduce", amended.results)
    assert res.returncode == 0, res.stdout[-4000:]
    assert "reproduce:" in res.stdout


def test_a_decision_rule_amendment_adds_no_branch_job(plan_run, tmp_path):
    proj = _copy(plan_run, tmp_path / "tolerance")
    proj.replace("tvar: 0.30", "tvar: 0.05")
    _amend(proj, "tighter TVaR tolerance")
    res = proj.snakemake("-n")
    assert res.returncode == 0, res.stderr[-3000:]
    # exactly the stages that read a tolerance, as without a registered plan to evaluate: the
    # stored statistics serve entry 0, whose verdict the verdict stage re-derives from them
    assert job_counts(res.stdout + res.stderr) == {
        "gates": 1, "sensitivity": 1, "operating": 1, "verdict": 1, "report": 1, "all": 1,
    }  # fmt: skip


# --- which of entry 0's jobs the branch runs (no Snakemake) ----------------------------------


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """The study above, loaded (the amended plan of every case below)."""
    from tailgate.prereg.study import load

    path = tmp_path_factory.mktemp("head") / "preregistrations" / "small.yaml"
    path.parent.mkdir()
    path.write_text(PLAN_STUDY)
    return load(path)


def _branch(head, **changes):
    """The branch of a chain whose entry 0 is ``head`` with ``changes`` (dotted path → value)."""
    import copy

    from tailgate.plans.branch import registered_branch
    from tailgate.prereg.canonical import canonical_hash

    data = copy.deepcopy(head.data)
    for path, value in changes.items():
        *keys, last = path.split(".")
        node = data
        for k in keys:
            node = next(c for c in node if c["name"] == k) if isinstance(node, list) else node[k]
        node[last] = value
    chain = [
        {"seq": 0, "prereg": data, "canonical_hash": canonical_hash(data), "entry_hash": "0"},
        {"seq": 1, "prereg": head.data, "canonical_hash": head.canonical_hash, "entry_hash": "1"},
    ]
    return registered_branch(head, "results/small", chain)


def test_the_branch_runs_only_the_jobs_whose_registered_inputs_differ(head):
    branch = _branch(head, **{"protocol.bootstrap.resamples": 100 + 1})
    assert branch.protocol_reasons() == ["protocol.bootstrap"]
    assert branch.gates_targets() == ["results/small/registered/gates/tox/logit.json"]
    fit = {"scorer": "tox", "scale": "logit", "condition": "base"}
    assert branch.path("fits", **fit) == "results/small/registered/fits/tox/logit/base.json"
    assert branch.path("severities", **fit) == "results/small/severities/tox/logit/base.parquet"
    assert not branch.own("generate", condition="base", shard="0")
    # a condition's data changed: its generation and scores, and what reads them, are entry 0's
    branch = _branch(head, **{"conditions.heavy.simulate.tail.xi": 0.3})
    assert branch.own("generate", condition="heavy", shard="0")
    assert not branch.own("generate", condition="base", shard="0")
    assert branch.own("score", scorer="tox", condition="heavy", shard="0")
    assert not branch.own("score", scorer="tox", condition="base", shard="0")
    # the transform runs a condition at a time: base's severities are the main tree's
    assert branch.own("transform", scorer="tox", scale="logit", condition="heavy")
    assert not branch.own("transform", scorer="tox", scale="logit", condition="base")
    assert branch.path("severities", **fit) == "results/small/severities/tox/logit/base.parquet"
    assert branch.own("transform_summary", scorer="tox", scale="logit")  # every condition's
    assert branch.own("fit", **fit) and branch.analysis_targets()


def test_one_rule_definition_serves_both_plans(head):
    """Each stage's rule is defined once (``rules/*.smk``): a job's ``{plan}`` wildcard picks
    its plan, the folder of its own files and which file it reads (the branch's input
    functions); a rule's output is a pattern of the results layout, checked against it."""
    from tailgate.plans.branch import LAYOUT, Plan, PlanWildcard

    main = Plan(head, "results/small")
    branch = _branch(head, **{"protocol.bootstrap.resamples": 100 + 1})
    rules = PlanWildcard([main, branch])
    assert [bool(re.fullmatch(rules.constraint, v)) for v in ("", "registered/", "other/")] == [
        True, True, False,
    ]  # fmt: skip
    alone = PlanWildcard([main]).constraint  # without an amendment, the head's alone
    assert re.fullmatch(alone, "") and not re.fullmatch(alone, "registered/")
    for kind, rel in LAYOUT.items():
        assert main.pattern(kind) == f"results/small/{rel}"
        assert branch.pattern(kind) == f"results/small/registered/{rel}"
        assert rules.own(rel) == f"results/small/{{plan}}{rel}"
    with pytest.raises(ValueError, match="not a pattern of the results layout"):
        rules.own("severities/{scorer}/{condition}.parquet")

    class Wildcards(dict):
        __getattr__ = dict.__getitem__

    job = {"scorer": "tox", "scale": "logit", "condition": "heavy"}
    head_job, branch_job = Wildcards(job, plan=""), Wildcards(job, plan="registered/")
    assert (rules.name(head_job), rules.name(branch_job)) == ("head", "registered")
    shared = "results/small/severities/tox/logit/heavy.parquet"  # the main tree's
    assert rules.input("severities")(head_job) == shared  # the head reads its own
    assert rules.input("severities")(branch_job) == shared
    assert rules.each("fits", condition=Plan.protocol_conditions)(branch_job) == [
        "results/small/registered/fits/tox/logit/base.json",
        "results/small/registered/fits/tox/logit/heavy.json",
    ]
    files = sorted((REPO_ROOT / "workflow" / "rules").glob("*.smk"))
    names = [n for p in files for n in re.findall(r"^\s*rule (\w+):", p.read_text(), re.M)]
    assert len(names) == len(set(names)) and "fit" in names  # one definition a stage
    assert not any(re.search(r"for plan in|^\s*name:", p.read_text(), re.M) for p in files)


def test_one_embed_job_a_model_writes_both_plans_embeddings():
    """The embed rule has no plan wildcard: its job for a model writes every embedding file
    either plan writes itself, the registered plan's own beside the head's."""
    from tailgate.plans.branch import Plan, PlanWildcard
    from tailgate.prereg.study import load

    head = load(REPO_ROOT / "preregistrations" / "perturbation-energy-example.yaml")
    branch = _branch(head, **{"conditions.null00.simulate.bernoulli.p": 0.5})
    jobs = [
        (p.name, c, k) for p, c, k in PlanWildcard([Plan(head, "results/small"), branch]).embedded()
    ]
    assert [j for j in jobs if j[0] == "registered"] == [("registered", "null00", "0")]
    assert ("head", "null00", "0") in jobs and len(jobs) == len(set(jobs)) > 2
    assert branch.path("embeddings", embedder="tiny-encoder", condition="null00", shard=0) == (
        "results/small/registered/embeddings/tiny-encoder/null00/shard-0.parquet"
    )


def test_decision_rules_and_display_settings_add_no_branch(head):
    for change in (
        {"protocol.tolerances.tvar": 0.05},
        {"protocol.band_rule": "all"},
        {"protocol.stability.resamples": 20},  # the scan's display CIs only
        {"analyses.ranking.criteria": [
            {"name": "base-safer", "statistic": "r_fsd(base, heavy)", "comparison": "<=",
             "threshold": 1.0}]},
    ):  # fmt: skip
        branch = _branch(head, **change)
        assert branch.protocol_reasons() == [] and branch.gates_targets() == [], change
        assert branch.analysis_targets() == [], change
    # a registered threshold the amended plan never fitted needs the branch
    branch = _branch(head, **{"protocol.thresholds.band": [0.95, 0.96]})
    assert branch.protocol_reasons() == ["threshold q = 0.96 (not fitted as amended)"]


def test_a_stage_runs_under_the_registered_plan_only_beside_an_amendment(plan_run, tmp_path):
    from tailgate.errors import InputError
    from tailgate.stages.common import open_stage

    proj = _copy(plan_run, tmp_path / "stage")
    with pytest.raises(InputError, match="no amendment"):
        open_stage(proj.prereg, proj.results, "registered")
    with pytest.raises(InputError, match="one of head, registered"):
        open_stage(proj.prereg, proj.results, "entry0")
    ctx = open_stage(proj.prereg, proj.results)
    stray = proj.results / "registered" / "note.json"
    stray.parent.mkdir()
    stray.write_text("{}")
    with pytest.raises(InputError, match="writes nothing inside"):
        ctx.record(stray)
