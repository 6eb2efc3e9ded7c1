"""The speed goals side by side: every measured row of the speed goals in one run, on one machine.

Run by path: ``python tests/benchmarks/bench_goals.py [--cores N] [--suite]`` (not collected by
pytest; about 10 minutes on 2 cores, 36 with ``--suite``). Each row runs in a fresh project and a
fresh user cache (``XDG_CACHE_HOME``: the kernels compiled and the figures drawn in the row's own
first jobs), one after the other:

1. the import study of ``bench_scale.py`` at 10⁶ rows per condition with the defaults: wall,
   CPU-seconds of every process, and the peak resident memory of the largest one;
2. the demo study (``protocol-demo``) as a user's first run, beside Snakemake's floor for the
   same number of jobs (``bench_workflow.py``: no-op ``script:`` jobs);
3. the plain audit of that run, a reviewer's first on the machine and a later one (the figures
   the first drew kept, ``bench_audit.py``);
4. the perturbation example (``perturbation-energy-example``) as a user's first run;
5. the fast tier, ``pytest -m fast -n N``;
6. with ``--suite``, the whole suite as CI runs it (``HYPOTHESIS_PROFILE=ci pytest -n N -m "not
   slurm"``).

Prints one table, each row with its goal; nothing is asserted (timings depend on the machine).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bench_audit
import bench_scale
import bench_workflow

REPO = Path(__file__).resolve().parents[2]


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2


def _timed(run: Callable[[], None]) -> tuple[float, float]:
    """Wall and CPU seconds (of the child processes) of ``run``."""
    cpu, start = bench_scale._cpu(), time.perf_counter()
    run()
    return time.perf_counter() - start, bench_scale._cpu() - cpu


def scale(tmp: Path, cores: int) -> str:
    root = bench_scale._project(tmp, "scale", 1_000_000)
    proc = bench_scale._snakemake(root, cores, {"XDG_CACHE_HOME": str(tmp / "cache-scale")})

    def run() -> None:
        log, _ = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"the 10⁶-row study failed:\n{log[-3000:]}")

    wall, cpu = _timed(run)
    return f"{wall:.1f} s, {cpu:.0f} CPU-s, largest process {_peak_gb():.2f} GB"


def demo_and_audit(tmp: Path, cores: int) -> tuple[str, str]:
    cache = tmp / "cache-demo"
    cache.mkdir()
    wall, _, cpu, log = bench_workflow.run_study(
        "protocol-demo", cores, tmp / "demo", {"XDG_CACHE_HOME": str(cache)}
    )
    jobs = sum(bench_workflow.job_seconds(log)[1].values())
    noop = bench_workflow.floor(jobs, cores, "")
    demo = f"{wall:.1f} s, {cpu:.0f} CPU-s; {jobs} jobs, floor {noop:.1f} s: **{wall / noop:.1f}×**"
    results = tmp / "demo" / "results" / "protocol-demo"
    reviewer = tmp / "cache-reviewer"
    reviewer.mkdir()
    audits = [
        bench_audit.audit_once(REPO / "workflow", results, ["--no-git"], reviewer) for _ in range(2)
    ]
    (first_wall, first_cpu), (later_wall, later_cpu) = audits
    audit = (
        f"first {first_wall:.2f} s, {first_cpu:.1f} CPU-s; later {later_wall:.2f} s, "
        f"{later_cpu:.1f} CPU-s"
    )
    return demo, audit


def perturbation(tmp: Path, cores: int) -> str:
    cache = tmp / "cache-perturbation"
    cache.mkdir()
    wall, _, cpu, _ = bench_workflow.run_study(
        "perturbation-energy-example", cores, tmp / "perturbation", {"XDG_CACHE_HOME": str(cache)}
    )
    return f"{wall:.1f} s, {cpu:.0f} CPU-s"


def tests(tmp: Path, cores: int, *selection: str, env: dict[str, str] | None = None) -> str:
    cmd = [sys.executable, "-m", "pytest", "-n", str(cores), "-q", "-p", "no:cacheprovider",
           *selection]  # fmt: skip
    environ = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache-tests"), **(env or {})}
    done: list[subprocess.CompletedProcess[str]] = []
    wall, cpu = _timed(
        lambda: done.append(
            subprocess.run(cmd, cwd=REPO, env=environ, capture_output=True, text=True, check=False)
        )
    )
    last = (done[0].stdout.strip().splitlines() or ["no output"])[-1]
    return f"{wall:.0f} s, {cpu:.0f} CPU-s ({last.strip('= ')})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--suite", action="store_true", help="the whole suite too (26 minutes)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tailgate-goals-") as name:
        tmp = Path(name)
        print("10⁶ rows per condition…", flush=True)
        rows.append(
            (
                "import study, 2 × 10⁶ rows, defaults",
                "≤ 180 s, ≤ 2 GB a job",
                scale(tmp, args.cores),
            )
        )
        print("the demo and its audit…", flush=True)
        demo, audit = demo_and_audit(tmp, args.cores)
        rows.append(("demo, a user's first run, against its no-op floor", "≤ 6×", demo))
        rows.append(("plain `tailgate audit` of the demo", "≤ 3 s", audit))
        print("the perturbation example…", flush=True)
        rows.append(("perturbation example", "≤ 60 s", perturbation(tmp, args.cores)))
        print("the fast tier…", flush=True)
        rows.append(("`pytest -m fast`", "≤ 180 s", tests(tmp, args.cores, "-m", "fast")))
        if args.suite:
            print("the whole suite…", flush=True)
            ci = {"HYPOTHESIS_PROFILE": "ci"}
            rows.append(("the whole suite as CI runs it", "≤ 25 min with CI's installs",
                         tests(tmp, args.cores, "-m", "not slurm", env=ci)))  # fmt: skip
    print(f"\n{args.cores} cores, {os.uname().nodename}, load average {os.getloadavg()[0]:.1f}")
    print("| what | goal | measured |\n| --- | --- | --- |")
    for what, goal, measured in rows:
        print(f"| {what} | {goal} | {measured} |")


if __name__ == "__main__":
    main()
