"""A whole study through a live SLURM cluster: ``snakemake --profile workflow/profiles/slurm``.

Needs a running cluster with the profile's partitions (``cpu``, ``gpu`` with a GPU gres):
``sudo bash tests/slurm/cluster.sh`` starts a single-node one, and ``.ci/run`` does so before
running these tests (marked ``slurm``). They run only when asked — a ``-m`` expression that
names ``slurm`` (``pytest -m slurm tests/slurm/test_cluster.py``) or ``TAILGATE_SLURM_TESTS=1``
— and skip otherwise, saying so, whether or not a controller answers: a plain ``pytest`` on a
cluster's login node never submits jobs. Asked and without a cluster they skip, saying how to
start one — except under ``CI=true``, where a missing cluster fails them.

The study's jobs are told apart from everyone else's by a job-name prefix unique to the test
run (``--slurm-jobname-prefix``: the plugin names every job ``<prefix>_<run id>``); whatever
else the queue holds is ignored. Other jobs sit in the queue throughout (submitted by the test
under another Snakemake run's name and with a ``rule_fit`` comment: one running, one held
pending, and short ones that complete while the study runs), and are cancelled at the end.

One small simulate study (two conditions, one shard, the logit scale, every stage from
generation to the report) runs three times: once locally (``--cores 2``) and twice through
snakemake-executor-plugin-slurm. The first SLURM run has one ``fit`` job cancelled by
``scancel`` while it is queued or running, so it must stop and report that job as cancelled by
SLURM; the second run must resume (run only what is missing) and complete. Checked then:

- ``tailgate audit`` of the SLURM results exits 0;
- every result file (provenance records, rule logs and the run ledger aside: they record times
  and hosts) has the same SHA-256 as the local run's;
- every job as SLURM saw it (``scontrol show job``: partition, CPUs, memory, time limit, GPU
  gres) is what the profile requests for its rule;
- the jobs wrote nothing in the project outside ``results/`` and Snakemake's own ``.snakemake/``
  (where the plugin keeps the SLURM logs), and nothing in the home folder but the caches
  matplotlib, Snakemake and tailgate keep there (a font list, a source cache, the compiled
  kernels).

Printed (run with ``-s`` to see it, as ``.ci/run`` does): every SLURM job with its rule,
partition, resources and state, the byte-identity table's size and the audit's exit code.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_call import SNAKEMAKE
from wf_project import REPO_ROOT, SMALL_STUDY, Project, job_counts, make_project

# one worker builds the cluster study under pytest-xdist (--dist loadgroup), not each
pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.xdist_group("slurm")]

PROFILE = REPO_ROOT / "workflow" / "profiles" / "slurm"

# The workflow's small study cut to the fewest jobs that still run every stage: 18 jobs on a
# critical path of 8 (generate, score, transform, fit, gates, sensitivity, verdict, report).
STUDY = (
    SMALL_STUDY.replace(
        "  - name: twin\n    simulate: {tail: {xi: 0.0, sigma: 1.0, share: 0.10}}\n", ""
    )
    .replace("pairs: [[base, twin], [base, heavy]]", "pairs: [[base, heavy]]")
    .replace("scales: [probability, logit]", "scales: [logit]")
    .replace("generation: {shards: 2}", "generation: {shards: 1}")
)

# Cluster settings the profile leaves to the site: this cluster has no accounts and no
# accounting database (so job states come from squeue, which keeps finished jobs for MinJobAge);
# a short first status check, and the SLURM logs of successful jobs kept for inspection.
SITE = (
    "--slurm-no-account",
    "--slurm-status-command", "squeue",
    "--slurm-init-seconds-before-status-checks", "1",
    "--slurm-keep-successful-logs",
    "--latency-wait", "5",
)  # fmt: skip

#: The rule one of whose jobs is cancelled (two run side by side, with the bulk bootstraps).
KILLED_RULE = "fit"
STATES_ALIVE = {"PENDING", "CONFIGURING", "RUNNING"}

#: Set to 1 to run the cluster tests without naming the marker (``-m slurm`` does the same).
ASK = "TAILGATE_SLURM_TESTS"


def _cluster_down() -> str | None:
    """Why no cluster can take the profile's jobs (None when one can)."""
    for tool in ("sbatch", "squeue", "scontrol", "scancel", "sinfo"):
        if shutil.which(tool) is None:
            return f"no SLURM client tools ({tool} is not on PATH)"
    res = subprocess.run(
        ["sinfo", "-h", "-o", "%P %T"], capture_output=True, text=True, check=False
    )
    if res.returncode != 0:
        return f"no SLURM controller answers (sinfo: {res.stderr.strip()})"
    states = dict(line.split() for line in res.stdout.splitlines() if line.strip())
    partitions = {p.rstrip("*"): s for p, s in states.items()}
    for part in ("cpu", "gpu"):
        if partitions.get(part, "").rstrip("*~#") not in {"idle", "mixed", "allocated"}:
            return f"no usable partition {part!r} (sinfo: {res.stdout.strip()!r})"
    return None


def _asked(config: pytest.Config) -> bool:
    """Whether the cluster tests were asked for: ``-m`` names ``slurm``, or ``ASK`` is 1."""
    named = re.search(r"\bslurm\b", config.getoption("markexpr") or "")
    return bool(named) or os.environ.get(ASK) == "1"


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest) -> None:
    if not _asked(request.config):
        pytest.skip(
            "the SLURM cluster tests submit jobs and run only when asked: "
            f"`pytest -m slurm tests/slurm/test_cluster.py` or {ASK}=1, with a cluster up "
            "(`sudo bash tests/slurm/cluster.sh` starts a single-node one)"
        )
    reason = _cluster_down()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(
            f"CI=true but {reason}: .ci/run starts a single-node cluster first "
            "(tests/slurm/cluster.sh); these tests never skip in CI"
        )
    pytest.skip(f"{reason}: start one with `sudo bash tests/slurm/cluster.sh` (CI does)")


def _squeue(prefix: str) -> list[dict[str, str]]:
    """The jobs named ``<prefix>_...`` that the controller still knows (finished ones for
    MinJobAge); every other job in the queue is left out."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "all", "-o", "%j|%i|%T|%k"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [
        dict(zip(("id", "state", "comment"), line.split("|", 3)[1:], strict=True))
        for line in out.splitlines()
        if line.startswith(f"{prefix}_")
    ]


def _sbatch(*args: str) -> str:
    """Submit a job that is not the study's, as another Snakemake run would name it: its id."""
    return subprocess.run(
        ["sbatch", "--parsable", "--job-name", str(uuid.uuid4()),
         "--comment", f"rule_{KILLED_RULE}_wildcards_tox_logit_base",
         "-c", "1", "--mem", "100M", "-t", "60", "-o", "/dev/null", *args],
        capture_output=True, text=True, check=True,
    ).stdout.strip().split(";")[0]  # fmt: skip


def _states(job_ids: list[str]) -> dict[str, str]:
    """The state of each of ``job_ids`` (``squeue -j``)."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "all", "-j", ",".join(job_ids), "-o", "%i|%T"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return dict(line.split("|") for line in out.splitlines() if line.strip())


def _job(job_id: str) -> dict[str, str]:
    """``scontrol show job -o``: the job's fields as SLURM recorded them."""
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, check=True
    ).stdout
    return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)


def _mem_mb(value: str) -> float:
    """``MinMemoryNode`` (``4000M``, ``62.50G``) in MB."""
    m = re.fullmatch(r"([0-9.]+)([KMGT])", value)
    assert m, value
    return float(m.group(1)) * {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2}[m.group(2)]


def _minutes(limit: str) -> int:
    """``TimeLimit`` (``[D-]HH:MM:SS``) in minutes."""
    days, _, hms = limit.rpartition("-")
    h, m, s = (int(x) for x in hms.split(":"))
    return int(days or 0) * 1440 + h * 60 + m + (s > 0)


def expected_resources(rule: str, attempt: int = 1) -> dict[str, object]:
    """What ``workflow/profiles/slurm`` requests for a job of ``rule``, read from the profile
    file itself (its default resources, overridden by the rule's set-resources), with the
    attempt-scaled expressions evaluated as Snakemake evaluates them."""
    profile = yaml.safe_load((PROFILE / "config.v8+.yaml").read_text())
    res = {**profile["default-resources"], **profile.get("set-resources", {}).get(rule, {})}
    out: dict[str, object] = {}
    for key, value in res.items():
        if isinstance(value, str) and "attempt" in value:
            value = eval(value, {"attempt": attempt})  # the profile's own expression
        out[key] = value
    return out


def _digests(results: Path) -> dict[str, str]:
    """SHA-256 of every result file; provenance records, rule logs and the run ledger aside."""
    return {
        p.relative_to(results).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(results.rglob("*"))
        if p.is_file()
        and p.relative_to(results).parts[0] not in ("provenance", "logs")
        and p.name != "runs.jsonl"
    }


def _tree(root: Path, skip: tuple[str, ...]) -> dict[str, str]:
    """Every file under ``root`` (but the top-level folders ``skip``) with its SHA-256."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in skip
    }


class ClusterRuns:
    """The local run, the interrupted SLURM run, its resumption, and what SLURM recorded."""

    def __init__(self, root: Path) -> None:
        self.project = make_project(root / "cluster", STUDY)
        from git_repo import commit_registration

        commit_registration(self.project.root)
        self.local = Project(root / "local")
        self.local.root.mkdir()
        for part in ("config", "preregistrations", ".git"):
            shutil.copytree(self.project.root / part, self.local.root / part)
        self.home = root / "home"
        self.home.mkdir()
        self.before = _tree(self.project.root, ("results", ".snakemake"))
        # every job of this test's runs is named <prefix>_<run id>
        self.prefix = f"tailgate-test-{uuid.uuid4().hex[:12]}"
        self.others: list[str] = []  # jobs that are not the study's, cancelled at the end
        self.victim: str | None = None

    def command(self, *extra: str) -> list[str]:
        return [
            SNAKEMAKE, "-s", str(REPO_ROOT / "Snakefile"),
            "-d", str(self.project.root), "--profile", str(PROFILE), *SITE,
            "--slurm-jobname-prefix", self.prefix, *extra,
        ]  # fmt: skip

    def run(self) -> None:
        env = {**os.environ, "HOME": str(self.home)}
        # other jobs in the queue before the study starts: one running, one held pending
        self.others += [
            _sbatch("--wrap", "sleep 3600"),
            _sbatch("--begin", "now+1hour", "--wrap", "true"),
        ]
        local = subprocess.Popen(
            [SNAKEMAKE, "-s", str(REPO_ROOT / "Snakefile"),
             "-d", str(self.local.root), "--cores", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        # First SLURM run: no retries, one fit job cancelled as soon as SLURM has it.
        first = subprocess.Popen(
            self.command("--retries", "0"),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )  # fmt: skip
        # and others submitted while it runs, that complete beside its jobs
        self.others += [_sbatch("--wrap", "sleep 1") for _ in range(2)]
        while first.poll() is None:
            if self.victim is None:
                for job in _squeue(self.prefix):
                    if (
                        job["comment"].startswith(f"rule_{KILLED_RULE}_")
                        and job["state"] in STATES_ALIVE
                    ):
                        subprocess.run(["scancel", job["id"]], check=True)
                        self.victim = job["id"]
                        break
            time.sleep(0.25)
        self.first = first.returncode, first.stdout.read()
        # The re-run: the profile as it is (retries included) resumes the study.
        second = subprocess.run(
            self.command(), capture_output=True, text=True, check=False, env=env
        )
        self.second = second.returncode, second.stdout + second.stderr
        out, _ = local.communicate()
        self.local_run = local.returncode, out
        self.jobs = [{**_job(j["id"]), "state": j["state"]} for j in _squeue(self.prefix)]
        self.other_states = _states(self.others)
        audit = self.project.cli("audit", str(self.project.results))
        self.audit = audit.returncode, audit.stdout + audit.stderr


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory) -> Iterator[ClusterRuns]:
    runs = ClusterRuns(tmp_path_factory.mktemp("slurm-study"))
    try:
        runs.run()
        yield runs
    finally:
        if runs.others:
            subprocess.run(["scancel", *runs.others], capture_output=True, check=False)


def _rule(comment: str) -> tuple[str, str]:
    """``rule_fit_wildcards__tox_logit_base`` -> (``fit``, ``tox_logit_base``): the first
    wildcard of a rule that serves both plans is its ``{plan}``, empty for the chain head's."""
    m = re.fullmatch(r"rule_([a-z_]+?)(?:_wildcards_(.*))?", comment)
    assert m, comment
    return m.group(1), (m.group(2) or "").lstrip("_")


def test_a_cancelled_job_is_reported_and_the_rerun_resumes(runs):
    rc, out = runs.first
    assert runs.victim is not None, "no fit job was seen in the queue to cancel:\n" + out[-3000:]
    assert rc != 0, out[-3000:]
    assert re.search(rf"SLURM-job '{runs.victim}' failed, SLURM status is: 'CANCELLED'", out), out[
        -3000:
    ]
    rc, out = runs.second
    assert rc == 0, out[-4000:]
    rerun = job_counts(out)
    # only what the cancelled job left missing ran again: nothing before the fits
    assert rerun.get("fit") == 1, rerun
    assert not {"generate", "score", "transform", "transform_summary", "power", "operating"} & set(
        rerun
    ), rerun
    print(f"\nSLURM job {runs.victim} (fit) cancelled: the run stopped, reporting it CANCELLED")
    print(f"re-run: {sum(v for k, v in rerun.items() if k != 'all')} jobs {dict(rerun)}")


def test_other_jobs_in_the_queue_are_left_out(runs):
    """The study ran to the end beside jobs that are not its own, and counted none of them."""
    long, held, *short = runs.others
    assert runs.other_states == {
        long: "RUNNING", held: "PENDING", **dict.fromkeys(short, "COMPLETED")
    }, runs.other_states  # fmt: skip
    assert not set(runs.others) & {j["JobId"] for j in runs.jobs}
    rc, out = runs.second
    assert rc == 0, out[-4000:]
    print(f"\nother jobs in the queue, left out: {runs.other_states}")


def test_every_job_ran_with_the_profiles_resources(runs):
    rows = []
    seen: dict[str, int] = {}
    for job in sorted(runs.jobs, key=lambda j: int(j["JobId"])):
        rule, wildcards = _rule(job["Comment"])
        want = expected_resources(rule)
        got = {
            "slurm_partition": job["Partition"],
            "cpus_per_task": int(job["NumCPUs"]),
            "mem_mb": _mem_mb(job["MinMemoryNode"]),
            "runtime": _minutes(job["TimeLimit"]),
        }
        assert got == {k: want[k] for k in got}, (job["JobId"], rule, got, want)
        gres = job.get("TresPerJob", job.get("TresPerNode", ""))
        gpus = int(want.get("gpu", 0))
        if gpus:
            model = want.get("gpu_model")
            assert gres == f"gres:gpu:{model}:{gpus}" if model else f"gres:gpu:{gpus}", (rule, gres)
        else:
            assert "gpu" not in gres, (rule, gres)
        seen[rule] = seen.get(rule, 0) + 1
        rows.append(
            f"{job['JobId']:>6} {rule + ('/' + wildcards if wildcards else ''):28} "
            f"{job['Partition']:4} {job['NumCPUs']:>3} cpu {job['MinMemoryNode']:>7} "
            f"{job['TimeLimit']:>9} {gres or '-':18} {job['state']}"
        )
    # 17 jobs of the study (`all` is local), the cancelled fit job and its re-run
    assert seen == {
        "generate": 2, "score": 2, "transform": 2, "transform_summary": 1, "fit": 3, "bulk": 2,
        "gates": 1, "sensitivity": 1, "power": 1, "operating": 1, "verdict": 1, "report": 1,
    }, seen  # fmt: skip
    states = [j["state"] for j in runs.jobs]
    assert states.count("CANCELLED") == 1 and states.count("COMPLETED") == len(states) - 1
    print("\n  jobid rule/wildcards                part cpus    mem  timelimit gres  state")
    print("\n".join(rows))


def test_results_are_byte_identical_to_the_local_run(runs):
    rc, out = runs.local_run
    assert rc == 0, out[-3000:]
    mine, theirs = _digests(runs.project.results), _digests(runs.local.results)
    assert {"verdict.json", "report.html", "fits/tox/logit/heavy.json"} <= set(mine)
    assert mine.keys() == theirs.keys()
    differ = [rel for rel in mine if mine[rel] != theirs[rel]]
    assert differ == [], differ
    print(f"\nbyte-identical to the local run: {len(mine)} result files (SHA-256)")


def test_the_audit_of_the_slurm_results_passes(runs):
    rc, out = runs.audit
    assert rc == 0, out[-4000:]
    assert "audit passed" in out
    print(f"\ntailgate audit {runs.project.results.name}: exit {rc}")


def test_jobs_write_only_results_and_logs(runs):
    after = _tree(runs.project.root, ("results", ".snakemake"))
    assert after == runs.before  # nothing else in the project was added or changed
    assert sorted(p.name for p in runs.project.root.iterdir()) == sorted(
        [".git", ".snakemake", "config", "preregistrations", "results"]
    )
    written = {p.relative_to(runs.home).as_posix() for p in runs.home.rglob("*") if p.is_file()}
    caches = (
        ".cache/matplotlib/", ".config/matplotlib/", ".cache/snakemake/",
        ".cache/tailgate/kernels/",  # numba's compiled kernels (tailgate/user_cache.py)
    )  # fmt: skip
    assert {w for w in written if not w.startswith(caches)} == set(), written
    # the plugin's SLURM logs, under .snakemake/: one per job that ran (a job cancelled while
    # queued never wrote one)
    logs = {p.stem for p in (runs.project.root / ".snakemake" / "slurm_logs").rglob("*.log")}
    ran = {j["JobId"] for j in runs.jobs if j["state"] == "COMPLETED"}
    assert ran <= logs, sorted(ran - logs)
