"""Verbs about alternative analyses and designs, from stored statistics or before any data:
``multiverse`` (the H1 verdict under every registered alternative, App. B of Zhou (2026)) and
``composite`` (the composite-null design of Acharyya et al. (2025), Algorithm C).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from tailgate.cli.base import Verbs, print_json, verb
from tailgate.errors import EXIT_OK, InputError


def add_composite(sub: Verbs) -> None:
    """``tailgate composite --a A --b B --budget N``."""
    p = verb(
        sub,
        "composite",
        "design the composite-null test of Acharyya et al. (2025) from a hypothetical null "
        "interval",
        "Print the budget-optimal design (m null queries, n responses each, threshold τ) of the "
        "composite-null test of Acharyya et al. (2025) for a hypothetical range [A, B] of the "
        "perturbed "
        "queries' 'yes' rates, before any data (Algorithm C, methods note A7), with its exact "
        "size and "
        "average power under the uniform model (A5). A registered perturbation analysis derives "
        "the same design from its pilot. Writes nothing.\n\nexample: tailgate composite --a 0.3 "
        "--b 0.5 --budget 10000",
        _cmd_composite,
    )
    p.add_argument("--a", type=float, required=True, help="lower end of the null interval")
    p.add_argument("--b", type=float, required=True, help="upper end of the null interval")
    p.add_argument("--budget", type=int, required=True, help="responses B = (m + 1)·n")
    p.add_argument("--alpha", type=float, default=0.05, help="level (default 0.05)")
    p.add_argument(
        "--null",
        choices=("uniform", "heterogeneous"),
        default="uniform",
        help="what the null queries' rates may be: uniform on [A, B] (default) or any rates in "
        "[A, B] (size: the worst case over them; methods note A9)",
    )
    p.add_argument(
        "--min-m", type=int, default=2, help="fewest null queries the design may use (default 2)"
    )
    p.add_argument("--json", action="store_true", help="print the design as JSON")


def add_multiverse(sub: Verbs) -> None:
    """``tailgate multiverse PREREG RESULTS``."""
    p = verb(
        sub,
        "multiverse",
        "the verdict under every registered alternative analysis",
        "Re-evaluate, from the stored statistics in RESULTS (gates/<scorer>/<scale>.json, no "
        "refitting), the H1 verdict under every combination of threshold rule (band rules any and "
        "all, each band threshold as headline), tolerance multiplier (App. B of Zhou (2026)), G5 "
        "rule and P1 method, per scorer and scale; the registered cell is in brackets. Writes "
        "nothing.\n\nexample: tailgate multiverse preregistrations/protocol-demo.yaml "
        "results/protocol-demo",
        _cmd_multiverse,
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument("results", metavar="RESULTS", help="results/<study>")
    p.add_argument("--json", action="store_true", help="print the cells as JSON")


def _cmd_multiverse(args: argparse.Namespace) -> int:
    from tailgate.plans.registration import load
    from tailgate.protocol.multiverse import grid
    from tailgate.runs.summary import headline_first
    from tailgate.stages.common import read_json
    from tailgate.stages.sensitivity import multiverse_document
    from tailgate.stages.verdict import headline_of

    study = load(args.prereg)
    if not study.has_protocol:
        raise InputError(
            f"{args.prereg}: study '{study.name}' registers no protocol (protocol.enabled: "
            "false), so there is no H1 verdict to re-evaluate. Fix: read its answer in "
            f"results/{study.name}/verdict.json; the multiverse is the protocol's."
        )
    paths = sorted(Path(args.results).glob("gates/*/*.json"))
    if not paths:
        raise InputError(
            f"{args.results}: no stored gate statistics (gates/<scorer>/<scale>.json). Fix: pass "
            f"the study's results folder (results/{study.name}) after running the workflow."
        )
    head = headline_of(study)
    docs = headline_first([multiverse_document(study, read_json(p, "gates")) for p in paths], head)
    if args.json:
        print_json("multiverse", {"study": study.name, "analyses": docs})
        return EXIT_OK
    for d in docs:
        header, rows = grid(d)
        reg = d["registered"]
        tag = " (headline)" if (d["scorer"], d["scale"]) == (head["scorer"], head["scale"]) else ""
        print(
            f"{d['scorer']}, {d['scale']} scale{tag}: H1 PASS in {100 * d['pass_share']:.0f}% of "
            f"{len(d['cells'])} analyses; registered [{reg['h1']}]"
        )
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for r in [header, *rows]:
            print("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)))
    return EXIT_OK


def _cmd_composite(args: argparse.Namespace) -> int:
    from tailgate.analyses.perturbation import design

    if not (0.0 <= args.a < args.b <= 1.0) or args.b - args.a >= 1.0:
        raise InputError(
            f"--a {args.a:g} --b {args.b:g}: the null interval needs 0 <= a < b <= 1 and must not "
            "be all of [0, 1]. Fix: give the hypothetical range of the 'yes' rates of the "
            "perturbed queries, e.g. --a 0.3 --b 0.5."
        )
    if args.budget < 2 or not 0.0 < args.alpha < 1.0:
        raise InputError(
            f"--budget {args.budget} --alpha {args.alpha:g}: the budget counts responses "
            "(m + 1)·n and must be >= 2, alpha must lie in (0, 1). Fix: e.g. --budget 10000 "
            "--alpha 0.05."
        )
    if args.min_m < 1 or (args.min_m > 1 and args.min_m * (args.min_m + 1) > args.budget):
        raise InputError(
            f"--min-m {args.min_m} --budget {args.budget}: the design needs at least one null "
            "query and room for min-m queries of min-m responses each. Fix: e.g. --min-m 2."
        )
    d = design(args.a, args.b, args.budget, args.alpha, null_model=args.null, min_m=args.min_m)
    rows = {
        "m (null queries)": d.m,
        "n (responses per query)": d.n,
        "tau = (J + 1/2)/n": round(d.tau, 6),
        "exact size (sup; at a / at b)": f"{d.size:.4f} ({d.size_at_a:.4f} / {d.size_at_b:.4f})",
        "exact average power": round(d.average_power, 4),
        "ideal size (A1)": round(d.ideal_size, 4),
        "Hoeffding size bound (A3)": round(d.hoeffding_size_bound, 4),
        "null rates": f"{d.null_model} in [a, b]; at least {d.min_m} null queries",
    }
    if d.size_attained is not None:
        rows["size attained (ends opposed)"] = round(d.size_attained, 4)
    if args.json:
        print(json.dumps(dataclasses.asdict(d), indent=1))
        return EXIT_OK
    print(
        f"composite-null design (Algorithm C of Acharyya et al. (2025), methods note A7) for [a, "
        f"b] = "
        f"[{args.a:g}, {args.b:g}], budget {args.budget}, alpha {args.alpha:g}:"
    )
    for k, v in rows.items():
        print(f"  {k:<31} {v}")
    return EXIT_OK
