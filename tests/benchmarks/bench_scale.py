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
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

REPO = Path(__file__).resolve().parents[2]
# an empty SLURM configuration: with SLURM's tools and no controller the SLURM executor plugin
# would wait about 9 s at every Snakemake start (bench_workflow.py)
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
    """Peak RSS and lifetime of every process below ``root_pid``, keyed by the rule script."""

    def __init__(self, root_pid: int) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(root_pid)
        self.jobs: dict[int, dict] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.monotonic()
            try:
                children = self.root.children(recursive=True)
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
                job = self.jobs.setdefault(p.pid, {"rule": "?", "start": now, "rss": 0, "cpu": 0.0})
                if job["rule"] == "?":
                    job["rule"] = _rule_of(p)
                job["end"] = now
                job["rss"] = max(job["rss"], rss)
                job["cpu"] = max(job["cpu"], cpu)
            time.sleep(0.2)


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


def _snakemake(root: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(root),
        "--cores", str(env.pop("CORES")), "--quiet", "rules",
    ]  # fmt: skip
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **env}
    )


def _project(tmp: Path, name: str, rows: int) -> Path:
    root = tmp / name
    root.mkdir()
    make_project(root, rows)
    return root


def run_once(rows: int, cores: int, keep: Path | None) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="tailgate-scale-"))
    try:
        # 1. as a user runs it: the defaults (the fork server)
        root = _project(tmp, "defaults", rows)
        cpu, t0 = _cpu(), time.monotonic()
        log, _ = (proc := _snakemake(root, {"CORES": str(cores)})).communicate()
        wall_defaults, cpu_defaults = time.monotonic() - t0, _cpu() - cpu
        if proc.returncode != 0:
            raise SystemExit(f"snakemake failed at {rows} rows:\n{log[-3000:]}")
        # 2. every job in its own process, whose memory and CPU time are its own
        root = _project(tmp, "own-process", rows)
        t0 = time.monotonic()
        proc = _snakemake(root, {"CORES": str(cores), "TAILGATE_FORKSERVER": "off"})
        sampler = Sampler(proc.pid)
        sampler.start()
        log, _ = proc.communicate()
        wall = time.monotonic() - t0
        sampler.stop.set()
        sampler.join()
        if proc.returncode != 0:
            raise SystemExit(f"snakemake failed at {rows} rows:\n{log[-3000:]}")
        per_rule: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
        for job in sampler.jobs.values():
            acc = per_rule[job["rule"]]
            acc[0] += 1
            acc[1] += job["end"] - job["start"]
            acc[2] = max(acc[2], job["rss"] / 2**30)
            acc[3] += job["cpu"]
            acc[4] = max(acc[4], job["cpu"])
        return {
            "rows": rows, "wall": wall, "rules": dict(per_rule),
            "wall_defaults": wall_defaults, "cpu_defaults": cpu_defaults,
        }  # fmt: skip
    finally:
        if keep is not None:
            shutil.copytree(tmp, keep / f"rows-{rows}", dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=int, default=[100_000, 1_000_000, 2_500_000])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="copy each finished project here")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
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
