"""The ``tailgate`` command: small verbs with exit codes that scripts can trust.

Exit codes: 0 ok, 1 internal error, 2 invalid input or usage, 3 the pre-registration differs
from its lock (refusal), 4 audit failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from tailgate import __version__
from tailgate.errors import (
    EXIT_AUDIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    PreregError,
    TailgateError,
)

EXIT_CODES = """exit codes:
  0  ok
  1  internal error (a bug: please report it with the command line)
  2  invalid input or usage (the message names the file, line, field and fix)
  3  refused: the pre-registration differs from its lock (or has none)
  4  audit failed"""

#: the version of every ``--json`` shape (``format``: ``tailgate.<verb>/<version>``)
JSON_VERSION = 1


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, one paragraph, no traceback
        self.print_usage(sys.stderr)
        print(
            f"{self.prog}: error: {message}. Run '{self.prog} --help' for usage.", file=sys.stderr
        )
        raise SystemExit(EXIT_INVALID)


def _cmd_design(args: argparse.Namespace) -> int:
    import time

    from tailgate.authoring.importcheck import import_findings
    from tailgate.prereg.study import load
    from tailgate.protocol.design import (
        check_false_pass,
        derived_design,
        describe,
        operating_characteristics,
        simulated_power,
    )

    study = load(args.prereg)
    findings = import_findings(study)
    design = oc = refusal = None
    sim_line, sim_rates, seconds, refusals = "", None, 0.0, []
    if study.has_protocol:  # the Eq. 2 bound, power and operating characteristics are its
        design, sim_line, sim_rates = simulated_power(study, derived_design(study))
        start = time.perf_counter()
        oc = operating_characteristics(study, design)
        seconds = time.perf_counter() - start
        refusal = check_false_pass(study, oc)
    refusals = _freeze_refusals(study, refusal)
    if args.json:
        _print_json(
            "design",
            {
                "study": study.name,
                "valid": True,
                "schema_version": study.data["schema_version"],
                "canonical_hash": study.canonical_hash,
                "answer": _answer_line(study),
                "import": findings,
                "design": design.to_json() if design else None,
                "simulated_power": sim_line.splitlines(),
                "simulated_power_rates": sim_rates,
                "operating_characteristics": oc.to_dict() if oc else None,
                "operating_characteristics_seconds": round(seconds, 1),
                "max_false_pass_refusal": refusal,
                "freeze_refusals": refusals,
            },
        )
        return EXIT_INVALID if refusals else EXIT_OK
    for line in findings:
        print(line)
    if refusals:
        print(
            f"study {study.name}: loads (schema version {study.data['schema_version']}), but "
            f"freeze would refuse it ({len(refusals)} problem{'s' if len(refusals) > 1 else ''}, "
            "below)"
        )
    else:
        print(f"study {study.name}: valid (schema version {study.data['schema_version']})")
    print(f"canonical hash {study.canonical_hash}")
    print(_answer_line(study))
    if design is None or oc is None:
        print(
            "protocol: not registered (protocol.enabled: false): no Eq. 2 bound, simulated "
            "power or operating characteristics; no GPD fits or gates run"
        )
        for problem in refusals:
            print(f"freeze would refuse: {problem}", file=sys.stderr)
        return EXIT_INVALID if refusals else EXIT_OK
    for line in describe(design):
        print(line)
    print(sim_line)
    for line in oc.describe():
        print(line)
    print(f"  ({seconds:.1f} s)")
    if refusal:
        print(f"max_false_pass check: FAILS — {refusal} (freeze will refuse)")
    if refusals:
        for problem in refusals:
            print(f"freeze would refuse: {problem}", file=sys.stderr)
        return EXIT_INVALID
    return EXIT_OK


def _answer_line(study: Any) -> str:
    """What the study's answer is (tailgate.prereg.answer)."""
    from tailgate.prereg.answer import registered_answer

    items, registered = registered_answer(study.data)
    how = "registered" if registered else "derived from what is registered"
    return f"answer: {', '.join(items)} ({how})"


def _freeze_refusals(study: Any, false_pass_problem: str | None) -> list[str]:
    """What ``tailgate freeze`` would refuse in this registration, by the checks freeze itself
    runs (the Eq. 2 cap check and, when registered, the false-PASS bound): ``design`` exits 2
    whenever freeze would."""
    from tailgate.authoring.freeze import check_design
    from tailgate.authoring.runnable import runnable_problems

    problems = [str(p) for p in runnable_problems(study)]
    try:
        check_design(study, runnable=False)
    except PreregError as exc:
        problems.append(str(exc))
    if false_pass_problem:  # None unless max_false_pass is registered
        problems.append(
            f"{study.path}: field 'protocol.operating_characteristics.max_false_pass': "
            f"{false_pass_problem}"
        )
    return problems


def _print_json(verb: str, doc: dict[str, Any]) -> None:
    """A ``--json`` document: ``format`` names the verb and the shape's version (README)."""
    print(
        json.dumps(
            {"format": f"tailgate.{verb}/{JSON_VERSION}", **doc},
            indent=1,
            ensure_ascii=False,
            default=str,
        )
    )


def _cmd_init(args: argparse.Namespace) -> int:
    from tailgate.authoring.scaffold import scaffold

    written = scaffold(
        args.study, from_import=args.from_import, directory=args.directory, task=args.task
    )
    path = written.path
    for line in written.notes:
        print(line)
    print(f"wrote {path}")
    print(f"next: edit it, then 'tailgate design {path}' and 'tailgate freeze {path} --tag'")
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    from tailgate.export_mlflow import export_mlflow

    res = export_mlflow(
        args.results,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        no_git=args.no_git,
    )
    print(f"audit of {args.results}: passed (results digest {res.results_digest[:12]}…)")
    for number, run_id in sorted({**res.created, **res.existing}.items()):
        print(f"run {number}: {'logged' if number in res.created else 'already there'} {run_id}")
    for run_id in res.superseded:
        print(f"superseded: {run_id} (it described results that changed since)")
    print(
        f"{len(res.created)} run(s) logged to experiment {res.experiment!r} at {res.tracking_uri}"
    )
    return EXIT_OK


def _cmd_freeze(args: argparse.Namespace) -> int:
    from tailgate.authoring.freeze import freeze

    res = freeze(args.prereg, tag=args.tag, timestamp=args.timestamp, data_limit=_data_limit(args))
    head = res.lock.head
    if res.action == "unchanged":
        print(
            f"{res.study.path}: already frozen, matches {res.lock.path.name} (entry {head['seq']})"
        )
    else:
        verb = "re-frozen (never committed, no data)" if res.action == "refrozen" else "frozen"
        print(f"{res.study.path}: {verb} → {res.lock.path}")
    print(f"canonical hash {res.study.canonical_hash}")
    _print_receipt(res.lock, res.tagged)
    if res.design is None:
        print("protocol: not registered; no Eq. 2 bound to check")
        return EXIT_OK
    print(
        f"n_exc* = {res.design.n_exc_required}, prompts required {res.design.prompts_required}, "
        f"planned {res.design.min_prompts}"
        + ("" if res.design.cap_meets_bound else f" (accepted power {res.design.accepted_power:g})")
    )
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace) -> int:
    from tailgate.errors import RefusalError
    from tailgate.prereg.guard import require_frozen

    try:
        study = require_frozen(args.prereg)
    except RefusalError as exc:
        if not args.json:
            raise
        _print_json(
            "verify",
            {
                "prereg": str(args.prereg),
                "matches": False,
                "message": str(exc),
                "changes": [c.to_json() for c in exc.changes],
            },
        )
        return exc.exit_code
    if args.json:
        _print_json(
            "verify",
            {
                "prereg": str(study.path),
                "matches": True,
                "study": study.name,
                "canonical_hash": study.canonical_hash,
                "changes": [],
            },
        )
        return EXIT_OK
    print(f"{study.path}: matches the chain head of {study.lock_path.name}")
    print(f"canonical hash {study.canonical_hash}")
    return EXIT_OK


def _cmd_status(args: argparse.Namespace) -> int:
    from tailgate.status import format_status, prereg_of, study_status

    doc = study_status(prereg_of(args.study), run_audit=args.audit)
    if args.json:
        _print_json("status", {k: v for k, v in doc.items() if k != "format"})
    else:
        print(format_status(doc))
    return EXIT_OK


def _cmd_amend(args: argparse.Namespace) -> int:
    from tailgate.authoring.freeze import amend
    from tailgate.prereg.diff import format_changes

    res = amend(
        args.prereg,
        args.reason,
        tag=args.tag,
        timestamp=args.timestamp,
        data_limit=_data_limit(args),
    )
    print(
        f"{res.study.path}: amendment {res.entry['seq']} appended to {res.lock.path.name}"
        + (" (data already existed)" if res.data_existed else " (no data existed yet)")
    )
    print(format_changes(res.changes))
    print(f"new chain head: canonical hash {res.study.canonical_hash}")
    _print_receipt(res.lock, res.tagged, after_data=res.data_existed)
    return EXIT_OK


def _data_limit(args: argparse.Namespace) -> int:
    from tailgate.errors import InputError

    if not args.data_limit_mb >= 0:
        raise InputError(
            f"--data-limit-mb {args.data_limit_mb:g}: must be 0 or more (megabytes; 0 commits "
            "no data file and lists every pinned file in the data manifest)"
        )
    return int(args.data_limit_mb * 1000 * 1000)


def _print_receipt(lock: Any, tagged: Any, *, after_data: bool = False) -> None:
    """The receipt line to publish, what the tag holds, and what to do with it."""
    print(lock.receipt())
    for t in lock.timestamps.get(lock.head["entry_hash"], []):
        print(f"time-stamped by {t['tsa']} at {t['time']} (token stored in {lock.path.name})")
    name = f"prereg/{lock.study}/{lock.head['seq']}"
    audit_hint = (
        f"a reviewer checks it with 'tailgate audit results/{lock.study} --expected-hash "
        f"{lock.head['entry_hash']}'"
    )
    if tagged is not None:
        for path in tagged.included:
            print(f"the tag holds the pinned input file {path}")
        if tagged.manifest is not None:
            print(
                f"not in the tag (see {tagged.manifest}): {', '.join(tagged.left_out)}; "
                "publish them beside the tag (a data archive) so a reviewer can obtain them"
            )
        print(f"committed and tagged {tagged.name}; publish it: git push origin {tagged.name}")
    elif after_data:
        print(
            "publish this receipt with the results: data already existed, so it dates the "
            f"amendment, not a plan made before the data (commit and 'git tag -a {name}' + "
            f"push, or a preprint note); {audit_hint}"
        )
    else:
        print(
            "publish this receipt before collecting data (preprint, OSF, or commit and "
            f"'git tag -a {name}' + push); {audit_hint}"
        )
    if tagged is None:
        print(
            f"next: commit the registration — 'git add preregistrations/{lock.study}.yaml "
            f"preregistrations/{lock.path.name}' and 'git commit' — the "
            "workflow runs only a committed registration (or --config exploratory=true)"
        )


def _cmd_audit(args: argparse.Namespace) -> int:
    from tailgate.audit import audit

    if args.generate and not args.reproduce:
        print(
            "tailgate audit: --generate re-generates data for --reproduce only; add "
            "--reproduce (or leave --generate out).",
            file=sys.stderr,
        )
        return EXIT_INVALID
    options = {
        "prereg": args.prereg,
        "expected_hash": args.expected_hash,
        "expected_runs": args.expected_run or (),
        "no_git": args.no_git,
        "tsa_cert": args.tsa_cert,
    }
    if args.reproduce:
        from tailgate.audit.reproduce import reproduce, with_reproduction
        from tailgate.forked import Forked

        # the plain audit reads the stored files only: it runs beside the re-run, which
        # writes nothing but its scratch project
        with Forked(lambda: audit(args.results_dir, **options)) as plain:
            check, unproven = reproduce(
                args.results_dir, cores=args.cores, keep=args.keep, generate=args.generate
            )
            report = with_reproduction(plain.result(), check, unproven)
    else:
        report = audit(args.results_dir, **options)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        for line in report.lines():
            print(line)
    return EXIT_OK if report.ok else EXIT_AUDIT_FAILED


def _cmd_env(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tailgate.atomic import write_text
    from tailgate.environment import environment_notes, recorded, requirements
    from tailgate.errors import InputError
    from tailgate.provenance import iter_records

    rd = Path(args.results_dir)
    try:
        env = recorded(iter_records(rd))
    except ValueError as exc:
        raise InputError(f"{exc}. Fix: restore the record from the run that wrote it.") from None
    if not env:
        raise InputError(
            f"{rd}: no provenance records name an environment. Fix: pass a results/<study> "
            "folder made by a run of the workflow."
        )
    text = requirements(env)
    if args.output:
        write_text(args.output, text)
        print(f"wrote {args.output}: pip install -r {args.output}", file=sys.stderr)
    else:
        print(text, end="")
    for note in environment_notes(env):
        print(f"# {note}", file=sys.stderr)
    return EXIT_OK


def _cmd_multiverse(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tailgate.errors import InputError
    from tailgate.prereg.study import load
    from tailgate.protocol.multiverse import grid
    from tailgate.stages.common import read_json
    from tailgate.stages.sensitivity import multiverse_document
    from tailgate.stages.verdict import headline_of
    from tailgate.summary import headline_first

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
        _print_json("multiverse", {"study": study.name, "analyses": docs})
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
    import dataclasses

    from tailgate.analyses.perturbation import design
    from tailgate.errors import InputError

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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tailgate",
        description="Pre-registered, auditable tail-shape claims for LLM evaluation.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tailgate {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback for internal errors")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    sub.required = True

    def verb(name: str, help_: str, description: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help_,
            description=description,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(func=globals()[f"_cmd_{name}"])
        return p

    def tag_opt(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--tag",
            action="store_true",
            help="commit the pre-registration, its lock and its pinned input files and create "
            "the annotated git tag prereg/<study>/<seq> holding the receipt (push it to publish "
            "it); a pinned file above --data-limit-mb is named in <stem>.data.json instead",
        )
        p.add_argument(
            "--data-limit-mb",
            type=float,
            default=50.0,
            metavar="MB",
            help="with --tag: the largest pinned input file the tagged commit holds, in "
            "megabytes (default 50; 0: none)",
        )
        p.add_argument(
            "--timestamp",
            metavar="URL",
            default=None,
            help="ask the RFC 3161 time-stamping authority at URL (e.g. https://freetsa.org/tsr) "
            "to sign the entry's hash, and store its token in the lock; 'audit --tsa-cert' then "
            "proves when the entry existed. With an unchanged frozen file, freeze adds a token "
            "to every entry that has none",
        )

    p = verb(
        "design",
        "validate a pre-registration and print its derived design",
        "Validate PREREG and print the design it implies: n_exc* from Eq. 2 of Zhou (2026) for the "
        "registered Δfloor, α, power and ξ̄; the prompts needed at the headline threshold; "
        "whether the registered sample cap meets it; and the simulated P1∧P2 power when the "
        "statistics engine provides it. A registered import file is checked first (columns, "
        "ids, conditions, rows, score range). Writes nothing. Exit 0, or 2 on invalid input."
        "\n\nexample: tailgate design preregistrations/mystudy.yaml --json",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument("--json", action="store_true", help="print the design as JSON (README)")

    p = verb(
        "init",
        "write a new pre-registration from the template (optionally from an import file)",
        "Write preregistrations/STUDY.yaml from the template, every decision field commented. "
        "With --from-import FILE (JSONL, CSV or Parquet) the data block, the conditions and a "
        "column scorer per numeric score column are filled from the file's header and rows "
        "(row counts per condition, a sample cap, and the Eq. 2 check of Zhou (2026)). Refuses to "
        "overwrite an existing file. Writes nothing else.\n\nexample: tailgate init mystudy "
        "--from-import data/scores.csv",
    )
    p.add_argument("study", metavar="STUDY", help="the study name (lowercase, digits, - and _)")
    p.add_argument(
        "--from-import",
        metavar="FILE",
        default=None,
        help="a JSONL, CSV or Parquet file of completions and/or scores, or harness output "
        "(lm-evaluation-harness samples, Inspect logs), to register",
    )
    p.add_argument(
        "--task",
        metavar="NAME",
        default=None,
        help="with lm-evaluation-harness output of several tasks: the task to register (one "
        "condition per model; each metric of that task)",
    )
    p.add_argument(
        "--directory",
        metavar="DIR",
        default="preregistrations",
        help="where to write STUDY.yaml (default: preregistrations)",
    )

    p = verb(
        "export",
        "log every run of a study's ledger to an experiment tracker (MLflow)",
        "Audit RESULTS first (the plain audit; exit 4 and nothing logged when it fails), then "
        "log each run of RESULTS/runs.jsonl as an MLflow run: the lock entry, its hashes and the "
        "registered decision fields as params; verdicts, gate and criterion values as metrics "
        "and tags; amendments and deviations as tags; verdict.json and report.html as artifacts. "
        "Each run carries the audit's outcome and the digest of the results it describes; a run "
        "that described results changed since is tagged superseded. A run already exported "
        "(same ledger line hash and results) is not logged again. Needs the mlflow "
        "extra.\n\nexample: tailgate export mlflow results/mystudy --tracking-uri "
        "http://127.0.0.1:5000",
    )
    p.add_argument("tracker", choices=["mlflow"], help="the tracker (mlflow)")
    p.add_argument("results", metavar="RESULTS", help="results/<study>")
    p.add_argument(
        "--tracking-uri",
        metavar="URI",
        default=None,
        help="an MLflow tracking URI (default: a file store results/mlruns beside the study)",
    )
    p.add_argument(
        "--experiment", metavar="NAME", default=None, help="experiment name (default: study)"
    )
    p.add_argument(
        "--no-git",
        action="store_true",
        help="run the audit that comes first without git, as 'tailgate audit --no-git'",
    )

    p = verb(
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

    p = verb(
        "multiverse",
        "the verdict under every registered alternative analysis",
        "Re-evaluate, from the stored statistics in RESULTS (gates/<scorer>/<scale>.json, no "
        "refitting), the H1 verdict under every combination of threshold rule (band rules any and "
        "all, each band threshold as headline), tolerance multiplier (App. B of Zhou (2026)), G5 "
        "rule and P1 method, per scorer and scale; the registered cell is in brackets. Writes "
        "nothing.\n\nexample: tailgate multiverse preregistrations/protocol-demo.yaml "
        "results/protocol-demo",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument("results", metavar="RESULTS", help="results/<study>")
    p.add_argument("--json", action="store_true", help="print the cells as JSON")

    p = verb(
        "freeze",
        "validate and write <stem>.lock.json beside the pre-registration",
        "Validate PREREG, refuse a sample cap below the Eq. 2 bound unless accepted_power records "
        "the lower power explicitly, and write <stem>.lock.json beside it (canonical and raw "
        "hashes, derived design, pins of the files it names, versions, code digest, UTC time, git "
        "commit) and print a receipt to publish. A lock that was ever committed is never "
        "replaced, and no study is frozen (or re-frozen) once data exists for it — read from the "
        "results folder, the lock and git history, never from an option: use 'tailgate amend'.\n\n"
        "example: tailgate freeze preregistrations/mystudy.yaml --tag",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    tag_opt(p)

    p = verb(
        "verify",
        "check that a pre-registration matches its lock (exit 3 with a diff if not)",
        "Exit 0 if PREREG matches the chain head of its lock; otherwise exit 3 and print every "
        "changed field (registered → now), each classed as loosening, tightening or neutral, and "
        "the two ways forward (restore the file, or amend). Input files the registration names "
        "(import data, local prompts, models, checkpoints) are checked against their pins.\n\n"
        "example: tailgate verify preregistrations/mystudy.yaml --json",
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument(
        "--json", action="store_true", help="print the outcome and the changed fields as JSON"
    )

    p = verb(
        "status",
        "a study's timeline: registration, amendments, runs, and its state now",
        "Print the timeline of STUDY (a name, or the path of its pre-registration): the "
        "registration and every amendment from the lock (time, commit that holds it, fields, "
        "whether data existed, deviation), every workflow run from results/<study>/runs.jsonl "
        "(time, outcome, jobs, git commit, code digest, lock entry, verdict), and whether the "
        "pre-registration matches its lock now. --audit also runs the full audit. Writes "
        "nothing. Exit 0 (also when the pre-registration is refused: the status says so), 2 on "
        "invalid input.\n\nexample: tailgate status mystudy --json",
    )
    p.add_argument("study", metavar="STUDY", help="study name or preregistrations/<study>.yaml")
    p.add_argument("--json", action="store_true", help="print the status as JSON (README)")
    p.add_argument("--audit", action="store_true", help="also run 'tailgate audit' (seconds)")

    p = verb(
        "amend",
        "record a change to a frozen pre-registration as a hash-chained amendment",
        "Append an amendment to PREREG's lock: sequence number, previous entry hash, new canonical "
        "hash, the field diff with classes (every field but title and hypotheses is a decision "
        "rule), changed input-file pins, REASON, UTC time, and whether data already existed (read "
        "from the results folder, the lock and git history). The report lists every amendment and "
        "shows a decision change after data as a deviation.\n\n"
        'example: tailgate amend preregistrations/mystudy.yaml --reason "checkpoint moved"',
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument("--reason", required=True, metavar="TEXT", help="why the plan changes")
    tag_opt(p)

    p = verb(
        "audit",
        "re-verify a results directory (exit 4 if anything fails)",
        "Check RESULTS_DIR (no links; every file has a record and every record a file, with "
        "its hash), the lock's chain, that every committed version of the lock on any branch "
        "extends the one before and that entry 0 was committed before the first artifact (git; "
        "--tsa-cert: its trusted timestamp), the pins of the "
        "registration's input files, that one code made every artifact, the realised design and "
        "its deviations, every recorded verdict (re-derived from stored statistics) and the "
        "report (re-rendered). --reproduce also re-runs every derived stage from the data with "
        "your code, up to the verdict, and compares every file (the report's are the report "
        "check's). Exit 0 if all checks pass, 4 otherwise.\n\n"
        "example: tailgate audit results/mystudy --expected-hash <published entry hash>",
    )
    p.add_argument("results_dir", metavar="RESULTS_DIR", help="results/<study>")
    p.add_argument(
        "--expected-hash",
        metavar="H",
        default=None,
        help="a receipt's hash published elsewhere (entry_hash or canonical_hash of any chain "
        "entry): that entry and every one before it must be in the chain",
    )
    p.add_argument(
        "--expected-run",
        metavar="RECEIPT",
        action="append",
        default=None,
        help="a run receipt published with the results (printed when the run ended: the SHA-256 "
        "of its ledger line): the ledger must still hold that run; repeat for several runs",
    )
    p.add_argument(
        "--tsa-cert",
        metavar="FILE",
        default=None,
        help="the time-stamping authority's root certificate (PEM or DER; intermediates may "
        "follow in the same file): verify the lock's timestamp tokens offline and report the "
        "registration time as proven",
    )
    p.add_argument(
        "--no-git",
        action="store_true",
        help="audit without git (the study is not in a repository): timing is then reported as "
        "unverified",
    )
    p.add_argument(
        "--reproduce",
        action="store_true",
        help="re-run every derived stage from the study's data with this tailgate in a scratch "
        "folder and compare every file: simulated and imported data made again from the "
        "registration; for the transformers backend, scores, per-token losses, judge grades and "
        "embeddings recomputed from the recorded generations with the registered models (one "
        "whose model cannot be loaded here is taken as recorded and listed as unproven)",
    )
    p.add_argument(
        "--generate",
        action="store_true",
        help="with --reproduce, re-generate a transformers study's prompts and generations too "
        "(seeded per row: the same bytes on the same kind of device and versions) instead of "
        "starting from the recorded ones",
    )
    p.add_argument(
        "--cores", type=int, default=2, metavar="N", help="cores for --reproduce (default 2)"
    )
    p.add_argument(
        "--keep", metavar="DIR", default=None, help="keep the --reproduce project in DIR"
    )
    p.add_argument("--json", action="store_true", help="print the audit as JSON")
    p.add_argument(
        "--prereg",
        metavar="PREREG",
        default=None,
        help="the pre-registration (default: preregistrations/<study>.yaml beside results/)",
    )

    p = verb(
        "env",
        "print the environment a study's results were made in, as pinned requirements",
        "Read the Python and package versions recorded with every artifact of RESULTS_DIR and "
        "print them as a pinned requirements file (pip install -r FILE recreates the run's "
        "environment; then 'tailgate audit --reproduce' compares every file byte for byte). "
        "How this environment differs from the recorded one goes to standard error. Exit 0, "
        "or 2 when the folder has no records.\n\n"
        "example: tailgate env results/mystudy -o requirements-mystudy.txt",
    )
    p.add_argument("results_dir", metavar="RESULTS_DIR", help="results/<study>")
    p.add_argument("-o", "--output", metavar="FILE", default=None, help="write FILE instead")
    return parser


class _PipeSafeStdout:
    """Standard output that survives its reader going away (``tailgate amend … | head -1``):
    the command finishes its work and returns its own exit code, and the rest of its output is
    dropped. A closed pipe is the reader's choice, not an internal error."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._closed = False

    def write(self, text: str) -> int:
        if not self._closed:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        import os

        self._closed = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())  # the interpreter's last flush goes nowhere
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit code."""
    if argv is None and not isinstance(sys.stdout, _PipeSafeStdout):  # the command line
        sys.stdout = _PipeSafeStdout(sys.stdout)  # type: ignore[assignment]
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0)
    try:
        return int(args.func(args))
    except TailgateError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("tailgate: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(
            f"tailgate: internal error: {type(exc).__name__}: {exc}. This is a bug; rerun with "
            "--debug for a traceback and report it.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
