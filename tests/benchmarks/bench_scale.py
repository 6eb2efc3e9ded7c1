"""Cost as the data grow: an import study of two conditions and one bounded score, run through
Snakemake at several row counts, with the wall time, the job-seconds per rule and the peak
resident memory of every job.

Run by path: ``python tests/benchmarks/bench_scale.py [ROWS ...] [--cores N] [--keep DIR]``
(default rows 100000 1000000 2500000; not collected by pytest). The study is what
``tailgate init --from-import`` writes for the file, with its defaults (B = 10,000, band
0.95–0.99), frozen and committed in a throw-away git repository; the scores are
``sigmoid(logistic(-4, 1))`` per condition, one row per prompt.

Memory and CPU time are sampled every 0.2 s over the process tree of each job (``psutil``), so a
job shorter than that may be missed; job-seconds are each job process's lifetime, CPU-seconds
its user and system time at the last sample (a busy machine stretches the first, hardly the
second). The run starts no fork
server (``TAILGATE_FORKSERVER=off``): a forked job's work happens outside its own process tree.
"""

from __future__ import annotations

import argparse
import os
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


def run_once(rows: int, cores: int, keep: Path | None) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="tailgate-scale-"))
    root = tmp / "project"
    root.mkdir()
    try:
        make_project(root, rows)
        cmd = [
            sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(root),
            "--cores", str(cores), "--quiet", "rules",
        ]  # fmt: skip
        t0 = time.monotonic()
        # every job in its own process (no fork server): a forked job's memory is not in the
        # job's process tree, and at these sizes the jobs' imports are a small part of the run
        env = {**os.environ, "TAILGATE_FORKSERVER": "off"}
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
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
        return {"rows": rows, "wall": wall, "rules": dict(per_rule)}
    finally:
        if keep is not None:
            shutil.copytree(root, keep / f"rows-{rows}", dirs_exist_ok=True)
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
        print(f"\n{rows:>9,} rows per condition: {res['wall']:.1f} s wall")
        cpu = sum(v[3] for v in res["rules"].values())
        print(f"  CPU-seconds of all jobs: {cpu:.1f}")
        print(f"  {'rule':<14}{'jobs':>5}{'job-s':>9}{'CPU-s':>9}{'max CPU-s':>10}{'peak GB':>9}")
        for rule, (n, secs, gb, cpu, top) in sorted(res["rules"].items(), key=lambda kv: -kv[1][3]):
            print(f"  {rule:<14}{n:>5}{secs:>9.1f}{cpu:>9.1f}{top:>10.1f}{gb:>9.2f}")
    print("\nrows per condition -> wall s, peak GB of any job")
    for res in curve:
        peak = max((v[2] for v in res["rules"].values()), default=0.0)
        print(f"  {res['rows']:>9,} -> {res['wall']:7.1f} s, {peak:.2f} GB")


if __name__ == "__main__":
    main()
