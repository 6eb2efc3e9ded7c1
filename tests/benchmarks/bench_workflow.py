"""Whole-workflow cost of a shipped study against Snakemake's own floor, measured in one run.

Run by path: ``python tests/benchmarks/bench_workflow.py [STUDY ...] [--cores N]`` (not collected
by pytest; default: every shipped study, 2 cores). For each study, in a fresh copy of the
project:

1. the study's DAG with ``snakemake --cores N`` as a user's first run makes it (an empty kernel
   cache: ``XDG_CACHE_HOME`` in a new folder, ``tailgate/user_cache.py``), then again in
   another fresh copy as every later run makes it (the kernels compiled by the first): wall
   time, job-seconds per rule (from Snakemake's own log: each job's start and finish), and the
   peak resident memory of the largest process (Snakemake or one job;
   ``getrusage(RUSAGE_CHILDREN)``);
2. the same DAG again with every job in its own process (``TAILGATE_FORKSERVER=off``: no fork
   server, see ``tailgate/runtime/forkserver.py``), the peer of the warm start, with the ratio;
3. the floor: a Snakefile with the same number of ``script:`` jobs, each an empty Python script,
   with the same cores, and the same jobs importing numpy, scipy.stats, pandas and pyarrow;
4. the ratio of the study's wall time to each floor.

Prints one table a study; nothing is asserted (timings depend on the machine). Every Snakemake
it starts reads an empty SLURM configuration (``SLURM_CONF``, as the test suite's do): with
SLURM's tools installed and no controller, the SLURM executor plugin would otherwise wait about
9 s at every start, the study's and the floor's alike.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "support"))

from git_repo import commit_registration  # noqa: E402

SHIPPED = sorted(p.stem for p in (REPO / "preregistrations").glob("*.yaml") if p.stem != "template")

STAMP = re.compile(r"^\[(\w{3} \w{3}\s+\d+ \d\d:\d\d:\d\d \d{4})\]$")
START = re.compile(r"^\s*jobid: (\d+)$")
RULE = re.compile(r"^(?:local)?rule (\w+):$")
FINISH = re.compile(r"^Finished jobid: (\d+)")


os.environ.setdefault("SLURM_CONF", os.devnull)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (GB) of the largest descendant so far, combined output."""
    start = time.perf_counter()
    environ = None if env is None else {**os.environ, **env}
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, env=environ)
    wall = time.perf_counter() - start
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{res.stdout[-3000:]}{res.stderr[-3000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2
    return wall, peak, res.stdout + res.stderr


def job_seconds(log: str) -> tuple[dict[str, float], dict[str, int]]:
    """Seconds and job counts per rule from Snakemake's log (one-second stamps)."""
    now: datetime | None = None
    rule = None
    started: dict[str, tuple[str, datetime]] = {}
    seconds: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for line in log.splitlines():
        if m := STAMP.match(line.strip()):
            now = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif m := RULE.match(line.strip()):
            rule = m.group(1)
        elif (m := START.match(line)) and rule and now:
            started[m.group(1)] = (rule, now)
            rule = None
        elif (m := FINISH.match(line.strip())) and now and m.group(1) in started:
            name, t0 = started.pop(m.group(1))
            seconds[name] += (now - t0).total_seconds()
            count[name] += 1
    return dict(seconds), dict(count)


def copy_project(dest: Path) -> None:
    ignore = shutil.ignore_patterns(".git", ".venv", "results", ".snakemake", "__pycache__")
    shutil.copytree(REPO, dest, ignore=ignore)
    commit_registration(dest)  # a confirmatory run needs its registration committed


FLOOR_SNAKEFILE = """\
N = {jobs}
rule all:
    input: expand("out/{{i}}.txt", i=range(N))
rule job:
    output: "out/{{i}}.txt"
    script: "job.py"
"""


def floor(jobs: int, cores: int, imports: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "Snakefile").write_text(FLOOR_SNAKEFILE.format(jobs=jobs))
        (root / "job.py").write_text(f"{imports}\nopen(snakemake.output[0], 'w').close()\n")
        wall, _, _ = _run([sys.executable, "-m", "snakemake", "--cores", str(cores), "-q"], root)
    return wall


def run_study(study: str, cores: int, root: Path, env: dict[str, str] | None = None) -> tuple:
    """Run ``study`` in a fresh copy at ``root``: wall, peak RSS, CPU seconds, its log."""
    if root.exists():
        shutil.rmtree(root)
    copy_project(root)
    (root / "config" / "config.yaml").write_text(f"study: {study}\nthreads: 1\n")
    cpu = _cpu()
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--printshellcmds"]
    wall, peak, log = _run(cmd, root, env)
    return wall, peak, _cpu() - cpu, log


def bench(study: str, cores: int, keep: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "cache").mkdir()
        cache = {"XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        first = run_study(study, cores, Path(tmp) / f"{study}-first", cache)
        wall, peak, cpu, log = run_study(study, cores, (keep or Path(tmp)) / study, cache)
        own = run_study(
            study, cores, Path(tmp) / f"{study}-own", {**cache, "TAILGATE_FORKSERVER": "off"}
        )
    seconds, count = job_seconds(log)
    jobs = sum(count.values())
    noop = floor(jobs, cores, "")
    heavy = floor(jobs, cores, "import numpy, scipy.stats, pandas, pyarrow.parquet")
    print(f"\n{study}: {jobs} jobs, --cores {cores}")
    print(f"  wall {wall:.1f} s, CPU {cpu:.0f} s, peak RSS of one process {peak:.2f} GB")
    print(f"  the first run (an empty kernel cache): wall {first[0]:.1f} s, CPU {first[2]:.0f} s")
    print(f"  every job in its own process (no fork server): wall {own[0]:.1f} s, CPU "
          f"{own[2]:.0f} s (ratio {own[0] / wall:.2f}x wall, {own[2] / cpu:.2f}x CPU)")  # fmt: skip
    print(f"  floor: {jobs} no-op script jobs {noop:.1f} s (ratio {wall / noop:.1f}x); ")
    print(f"         the same importing numpy+scipy.stats+pandas+pyarrow {heavy:.1f} s "
          f"(ratio {wall / heavy:.1f}x)")  # fmt: skip
    print("  job-seconds by rule:")
    for name, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"    {name:<14} {s:7.0f} s  ({count[name]} jobs, {s / count[name]:.1f} s a job)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("studies", nargs="*", default=SHIPPED)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--keep", type=Path, help="run in DIR/<study> and keep it (to look at the report)"
    )
    args = parser.parse_args()
    for study in args.studies:
        bench(study, args.cores, args.keep)


if __name__ == "__main__":
    main()
