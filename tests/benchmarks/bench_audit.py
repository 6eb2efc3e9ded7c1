"""Time ``tailgate audit`` of a study's results, optionally against another revision's code.

Run by path, after the study has run (``snakemake --cores all`` makes
``results/protocol-demo``): ``python tests/benchmarks/bench_audit.py [RESULTS_DIR] [--repeat N]
[--reproduce] [--no-git] [--baseline REV]`` (not collected by pytest). Each repeat runs
``python -m tailgate.cli audit`` in a fresh process from the project root twice: as a
reviewer's first audit on the machine (an empty user cache, ``XDG_CACHE_HOME`` in a new folder)
and as a later one (the figures the first drew kept there, ``tailgate/report/kept_figures.py``).
It reports the wall seconds and CPU seconds (user + system, from ``getrusage(RUSAGE_CHILDREN)``)
of each; the median of each is printed. With ``--baseline REV`` the package and rule scripts of
git revision REV (``git archive``) are timed too, the two alternating run by run, so that both
see the same load on a shared machine. An audit that does not pass (exit other than 0) stops
the benchmark. Nothing is asserted (timings depend on the machine).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def audit_once(workflow: Path, results: Path, extra: list[str], cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``tailgate audit`` with the package under ``workflow`` and
    the user cache ``cache``."""
    env = {**os.environ, "PYTHONPATH": str(workflow), "XDG_CACHE_HOME": str(cache)}
    cmd = [sys.executable, "-m", "tailgate.cli", "audit", str(results), *extra]
    cpu, start = _cpu_children(), time.perf_counter()
    res = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} (code of {workflow}) exited {res.returncode}:\n"
                 f"{res.stdout[-3000:]}{res.stderr[-3000:]}")  # fmt: skip
    return wall, _cpu_children() - cpu


def checkout_workflow(rev: str, dest: Path) -> Path:
    """The ``workflow/`` folder (package and rule scripts) of git revision ``rev`` under
    ``dest``, with its ``Snakefile`` and ``envs/`` beside it (``--reproduce`` runs the DAG of
    the code it audits with)."""
    data = subprocess.run(
        ["git", "archive", "--format=tar", rev, "workflow", "Snakefile", "envs"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)  # this repository's own archive
    return dest / "workflow"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results/protocol-demo")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reproduce", action="store_true", help="time 'audit --reproduce'")
    ap.add_argument("--no-git", action="store_true", help="time 'audit --no-git'")
    ap.add_argument("--baseline", metavar="REV", help="also time the code of git revision REV")
    args = ap.parse_args(argv)
    results = (REPO / args.results).resolve()
    extra = ["--reproduce"] * args.reproduce + ["--no-git"] * args.no_git
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        variants = {"this tree": REPO / "workflow"}
        if args.baseline:
            variants[args.baseline] = checkout_workflow(args.baseline, Path(tmp))
        times: dict[str, list[tuple[float, float]]] = {
            f"{name}, {when}": [] for name in variants for when in ("first", "later")
        }
        for k in range(args.repeat):
            for name, workflow in variants.items():
                cache = Path(tmp) / f"cache-{k}-{len(times)}-{name.replace(' ', '-')}"
                for when in ("first", "later"):
                    times[f"{name}, {when}"].append(audit_once(workflow, results, extra, cache))
    verb = "audit --reproduce" if args.reproduce else "audit"
    print(f"tailgate {verb} {args.results}, median of {args.repeat}:")
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        each = ", ".join(f"{w:.1f}" for w, _ in runs)
        print(f"  {name}: {wall:.2f} s wall ({each}), {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
