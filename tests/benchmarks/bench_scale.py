"""Cost as the data grow: an import study of two conditions and one bounded score, run through
Snakemake at several row counts, with the wall time, the job-seconds per rule and the peak
resident memory of every job.

Run by path: ``python tests/benchmarks/bench_scale.py [ROWS ...] [--cores N] [--keep DIR]``
(default rows 100000 1000000 2500000; not collected by pytest). The study is what
``tailgate init --from-import`` writes for the file, with its defaults (B = 10,000, band
0.95–0.99), frozen and committed in a throw-away git repository; the scores are
``sigmoid(logistic(-4, 1))`` per condition, one row per prompt.

Each row count runs twice, each in a fresh copy of the project and with the same user cache:

1. as a user runs it (the defaults: the fork server starts the jobs): the wall time and the
   CPU-seconds of every process of the run (``getrusage`` of the children);
2. every job in its own process (``TAILGATE_FORKSERVER=off``: a forked job's work happens outside
   its own process tree), for the table per rule. Memory and CPU time are sampled every 0.2 s
   over the process tree of each job (``psutil``), so a job shorter than that may be missed;
   job-seconds are each job process's lifetime, CPU-seconds its user and system time at the
   last sample (a busy machine stretches the first, hardly the second).

Run it with an empty ``XDG_CACHE_HOME`` to make the first run a user's first (the kernels
compiled in its first jobs).

``--slurm``: the study runs once, through ``workflow/profiles/slurm`` on the cluster that
``sinfo`` answers for (``tests/slurm/cluster.sh`` starts a single-node one), at most ``--cores``
jobs at a time, every job in its own process; every process on the machine that runs a rule
script of the project is sampled, and each rule's jobs are shown beside what SLURM was asked
for them (``squeue``: memory and time limit).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

REPO = Path(__file__).resolve().parents[2]
# an empty SLURM configuration: with SLURM's tools and no controller the SLURM executor plugin
# would wait about 9 s at every Snakemake start (bench_workflow.py)
#: the SLURM configuration of the environment, which ``--slurm`` runs use
CLUSTER_CONF = os.environ.get("SLURM_CONF")
os.environ.setdefault("SLURM_CONF", os.devnull)
TESTS = REPO / "tests"
sys.path.insert(0, str(TESTS / "support"))

from git_repo import git_commit  # noqa: E402


def write_scores(path: Path, rows: int, seed: int = 11) -> None:
    """Two conditions of ``rows`` rows each: a prompt key, the model and a probability score."""
    rng = np.random.default_rng(seed)
    parts = []
    for cond, loc in (("model-a", -4.0), ("model-b", -3.9)):
        parts.append(
            pd.DataFrame(
                {
                    "prompt_key": np.arange(rows, dtype=np.int64),
                    "model": cond,
                    "tox_prob": 1.0 / (1.0 + np.exp(-rng.logistic(loc, 1.0, rows))),
                }
            )
        )
    pd.concat(parts, ignore_index=True).to_parquet(path, index=False)


def _cli(root: Path, *args: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tailgate.cli", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"tailgate {' '.join(args)} failed ({out.returncode}):\n{out.stderr}")


def make_project(root: Path, rows: int) -> None:
    (root / "config").mkdir(parents=True)
    (root / "preregistrations").mkdir()
    (root / "data").mkdir()
    (root / "config" / "config.yaml").write_text("study: scale\nthreads: 1\n")
    write_scores(root / "data" / "scores.parquet", rows)
    _cli(root, "init", "scale", "--from-import", "data/scores.parquet")
    prereg = root / "preregistrations" / "scale.yaml"  # the review: larger scores are worse
    prereg.write_text(prereg.read_text().replace("worse: null}", "worse: higher}"))
    _cli(root, "freeze", "preregistrations/scale.yaml")
    git_commit(root, "Pre-register the study", "preregistrations", "data", "config")


class Sampler(threading.Thread):
    """Peak RSS and lifetime of every rule-script process of ``processes()`` (the processes
    below a Snakemake, or every process of the machine under SLURM), keyed by process id."""

    def __init__(self, processes: Callable[[], list[psutil.Process]], root: Path) -> None:
        super().__init__(daemon=True)
        self.processes = processes
        self.root = str(root)
        self.jobs: dict[int, dict] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.monotonic()
            try:
                children = self.processes()
            except psutil.NoSuchProcess:
                return
            for p in children:
                try:
                    cmd = " ".join(p.cmdline())
                    rss = p.memory_info().rss
                    cpu = sum(p.cpu_times()[:2])
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                if "scripts/" not in cmd and ".snakemake/scripts" not in cmd:
                    continue
                if p.pid not in self.jobs and not _in_project(p, self.root):
                    continue
                job = self.jobs.setdefault(p.pid, {"rule": "?", "start": now, "rss": 0, "cpu": 0.0})
                if job["rule"] == "?":
                    job["rule"] = _rule_of(p)
                job["end"] = now
                job["rss"] = max(job["rss"], rss)
                job["cpu"] = max(job["cpu"], cpu)
            time.sleep(0.2)


def _in_project(process: psutil.Process, root: str) -> bool:
    try:
        return process.cwd() == root
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _rule_of(process: psutil.Process) -> str:
    """The job's rule, from the log it holds open (results/<study>/logs/<rule>/…): every rule
    runs the same script, so the command line does not say."""
    try:
        files = process.open_files()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return "?"
    for f in files:
        parts = Path(f.path).parts
        if "logs" in parts[:-2]:
            return parts[parts.index("logs") + 1]
    return "?"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _snakemake(root: Path, cores: int, env: dict[str, str]) -> subprocess.Popen[str]:
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(root),
        "--cores", str(cores), "--quiet", "rules",
    ]  # fmt: skip
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **env}
    )


def _project(tmp: Path, name: str, rows: int) -> Path:
    root = tmp / name
    root.mkdir()
    make_project(root, rows)
    return root


def _sampled(
    proc: subprocess.Popen[str], root: Path, processes: Callable[[], list[psutil.Process]]
) -> tuple[float, dict[str, list[float]]]:
    """Wait for the Snakemake ``proc``, sampling the jobs: its wall time and, per rule, [jobs,
    job-seconds, peak GB, CPU-seconds, largest job's CPU-seconds]."""
    t0 = time.monotonic()
    sampler = Sampler(processes, root)
    sampler.start()
    log, _ = proc.communicate()
    wall = time.monotonic() - t0
    sampler.stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"snakemake failed in {root}:\n{log[-3000:]}")
    per_rule: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    for job in sampler.jobs.values():
        acc = per_rule[job["rule"]]
        acc[0] += 1
        acc[1] += job["end"] - job["start"]
        acc[2] = max(acc[2], job["rss"] / 2**30)
        acc[3] += job["cpu"]
        acc[4] = max(acc[4], job["cpu"])
    return wall, dict(per_rule)


# the cluster's settings the profile leaves to the site (tests/slurm/test_cluster.py)
SITE = (
    "--slurm-no-account", "--slurm-status-command", "squeue",
    "--slurm-init-seconds-before-status-checks", "1", "--latency-wait", "5",
)  # fmt: skip


def _requests(prefix: str, env: dict[str, str]) -> dict[str, tuple[int, str, str]]:
    """Per rule, what SLURM was asked for the jobs named ``<prefix>_…``: the jobs, and the memory
    request and time limit of the last one listed (a rule's jobs of one size ask alike; a retry
    asks more); ``squeue`` keeps finished jobs for MinJobAge."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "all", "-o", "%j|%k|%m|%l"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout  # fmt: skip
    rules: dict[str, tuple[int, str, str]] = {}
    for line in out.splitlines():
        name, comment, mem, limit = line.split("|", 3)
        if name.startswith(f"{prefix}_"):
            rule = comment.removeprefix("rule_").split("_wildcards")[0]
            n, _, _ = rules.get(rule, (0, "", ""))
            rules[rule] = (n + 1, mem, limit)
    return rules


def _cluster_env() -> dict[str, str]:
    """The environment with the cluster's SLURM configuration; exit with a message where no
    controller answers."""
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
    env.update({"SLURM_CONF": CLUSTER_CONF} if CLUSTER_CONF else {})
    try:
        res = subprocess.run(["sinfo", "-h"], capture_output=True, text=True, env=env, check=False)
    except FileNotFoundError:
        raise SystemExit("--slurm: no SLURM client tools (sinfo is not on PATH)") from None
    if res.returncode != 0:
        raise SystemExit(
            f"--slurm: no SLURM controller answers ({res.stderr.strip()}); start a single-node "
            "cluster with `sudo bash tests/slurm/cluster.sh`"
        )
    return env


def run_slurm(rows: int, jobs: int, keep: Path | None) -> dict:
    """The study through the SLURM profile, at most ``jobs`` jobs at a time (module docstring)."""
    env = _cluster_env()
    tmp = Path(tempfile.mkdtemp(prefix="tailgate-scale-"))
    prefix = f"tailgate-scale-{os.getpid()}"
    try:
        root = _project(tmp, "slurm", rows)
        print(f"{rows:,} rows per condition: through SLURM (jobs {prefix}_*)…", flush=True)
        cmd = [
            sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(root),
            "--profile", str(REPO / "workflow" / "profiles" / "slurm"), *SITE,
            "--slurm-jobname-prefix", prefix, "--jobs", str(jobs), "--quiet", "rules",
        ]  # fmt: skip
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**env, "TAILGATE_FORKSERVER": "off"},
        )  # fmt: skip
        wall, per_rule = _sampled(proc, root, lambda: list(psutil.process_iter()))
        return {"rows": rows, "wall": wall, "rules": per_rule, "requests": _requests(prefix, env)}
    finally:
        if keep is not None:
            shutil.copytree(tmp, keep / f"rows-{rows}", dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)


def run_once(rows: int, cores: int, keep: Path | None) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="tailgate-scale-"))
    try:
        # 1. as a user runs it: the defaults (the fork server)
        root = _project(tmp, "defaults", rows)
        print(f"{rows:,} rows per condition: as a user runs it…", flush=True)
        cpu, t0 = _cpu(), time.monotonic()
        log, _ = (proc := _snakemake(root, cores, {})).communicate()
        wall_defaults, cpu_defaults = time.monotonic() - t0, _cpu() - cpu
        if proc.returncode != 0:
            raise SystemExit(f"snakemake failed at {rows} rows:\n{log[-3000:]}")
        # 2. every job in its own process, whose memory and CPU time are its own
        root = _project(tmp, "own-process", rows)
        print(f"{rows:,} rows per condition: every job in its own process…", flush=True)
        t0 = time.monotonic()
        proc = _snakemake(root, cores, {"TAILGATE_FORKSERVER": "off"})
        wall, per_rule = _sampled(proc, root, lambda: psutil.Process(proc.pid).children(True))
        return {
            "rows": rows, "wall": wall, "rules": per_rule,
            "wall_defaults": wall_defaults, "cpu_defaults": cpu_defaults,
        }  # fmt: skip
    finally:
        if keep is not None:
            shutil.copytree(tmp, keep / f"rows-{rows}", dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)


def slurm_table(res: dict) -> None:
    print(f"\n{res['rows']:>9,} rows per condition through SLURM: {res['wall']:.1f} s wall")
    head = f"  {'rule':<14}{'jobs':>5}{'CPU-s':>9}{'max CPU-s':>10}{'peak GB':>9}"
    print(f"{head}{'asked: memory':>15}{'time limit':>12}")
    for rule, (n, _, gb, cpu, top) in sorted(res["rules"].items(), key=lambda kv: -kv[1][3]):
        _, mem, limit = res["requests"].get(rule, (0, "?", "?"))
        print(f"  {rule:<14}{n:>5}{cpu:>9.1f}{top:>10.1f}{gb:>9.2f}{mem:>15}{limit:>12}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=int, default=[100_000, 1_000_000, 2_500_000])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="copy each finished project here")
    parser.add_argument("--slurm", action="store_true", help="through the SLURM profile")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if args.slurm:
        for rows in args.rows:
            slurm_table(run_slurm(rows, args.cores, args.keep))
        return
    curve = []
    for rows in args.rows:
        res = run_once(rows, args.cores, args.keep)
        curve.append(res)
        print(f"\n{rows:>9,} rows per condition")
        wall, cpu = res["wall_defaults"], res["cpu_defaults"]
        print(f"  as a user runs it: {wall:.1f} s wall, {cpu:.1f} CPU-s")
        cpu = sum(v[3] for v in res["rules"].values())
        print(f"  every job in its own process: {res['wall']:.1f} s wall, {cpu:.1f} CPU-s of jobs")
        print(f"  {'rule':<14}{'jobs':>5}{'job-s':>9}{'CPU-s':>9}{'max CPU-s':>10}{'peak GB':>9}")
        for rule, (n, secs, gb, cpu, top) in sorted(res["rules"].items(), key=lambda kv: -kv[1][3]):
            print(f"  {rule:<14}{n:>5}{secs:>9.1f}{cpu:>9.1f}{top:>10.1f}{gb:>9.2f}")
    print("\nrows per condition -> wall s as a user runs it, peak GB of any job")
    for res in curve:
        peak = max((v[2] for v in res["rules"].values()), default=0.0)
        print(f"  {res['rows']:>9,} -> {res['wall_defaults']:7.1f} s, {peak:.2f} GB")


if __name__ == "__main__":
    main()
