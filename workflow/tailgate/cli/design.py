"""``tailgate design``: validate a pre-registration and print the design it implies (Eq. 2 of
Zhou (2026), the simulated power and the operating characteristics), and what freeze would refuse.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from tailgate.cli.base import Verbs, print_json, verb
from tailgate.errors import EXIT_INVALID, EXIT_OK, InputError, PreregError
from tailgate.prereg.answer import registered_answer


def add_design(sub: Verbs) -> None:
    """``tailgate design PREREG``."""
    p = verb(
        sub,
        "design",
        "validate a pre-registration and print its derived design",
        "Validate PREREG and print the design it implies: n_exc* from Eq. 2 of Zhou (2026) for the "
        "registered Δfloor, α, power and ξ̄; the prompts needed at the headline threshold; "
        "whether the registered sample cap meets it; and the simulated P1∧P2 power when the "
        "statistics engine provides it. A registered import file is checked first (columns, "
        "ids, conditions, rows, score range). Writes nothing. Exit 0, or 2 on invalid input."
        "\n\nexample: tailgate design preregistrations/mystudy.yaml --json",
        _cmd_design,
    )
    p.add_argument("prereg", metavar="PREREG", help="preregistrations/<study>.yaml")
    p.add_argument("--json", action="store_true", help="print the design as JSON (README)")


def _cmd_design(args: argparse.Namespace) -> int:
    from tailgate.authoring.importcheck import import_findings
    from tailgate.authoring.runnable import runnable_problems
    from tailgate.plans.registration import load
    from tailgate.protocol.design import (
        check_false_pass,
        derived_design,
        describe,
        operating_characteristics,
        simulated_power,
        with_procedure_power,
    )

    study = load(args.prereg)
    findings = import_findings(study)
    design = oc = refusal = None
    sim_line, sim_rates, seconds, refusals = "", None, 0.0, []
    unrunnable = runnable_problems(study)  # found first: no simulation of a run that cannot start
    if study.has_protocol and not unrunnable:  # the Eq. 2 bound, power and OC are its
        design, sim_line, sim_rates = simulated_power(study, derived_design(study))
        start = time.perf_counter()
        oc = operating_characteristics(study, design)
        seconds = time.perf_counter() - start
        design = with_procedure_power(design, oc)
        refusal = check_false_pass(study, oc)
    refusals = _freeze_refusals(study, unrunnable, refusal, oc)
    if args.json:
        print_json(
            "design",
            {
                "study": study.name,
                "valid": True,
                "schema_version": study.schema_version,
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
            f"study {study.name}: loads (schema version {study.schema_version}), but "
            f"freeze would refuse it ({len(refusals)} problem{'s' if len(refusals) > 1 else ''}, "
            "below)"
        )
    else:
        print(f"study {study.name}: valid (schema version {study.schema_version})")
    print(f"canonical hash {study.canonical_hash}")
    print(_answer_line(study))
    if design is None or oc is None:
        print(
            "protocol: not simulated until what freeze would refuse (below) is fixed"
            if study.has_protocol
            else "protocol: not registered (protocol.enabled: false): no Eq. 2 bound, simulated "
            "power or operating characteristics; no GPD fits or gates run"
        )
    else:
        for line in describe(design):
            print(line)
        print(sim_line)
        for line in oc.describe():
            print(line)
        print(f"  ({seconds:.1f} s)")
        if refusal:
            print(f"max_false_pass check: FAILS — {refusal} (freeze will refuse)")
    for problem in refusals:
        print(f"freeze would refuse: {problem}", file=sys.stderr)
    return EXIT_INVALID if refusals else EXIT_OK


def _answer_line(study: Any) -> str:
    """What the study's answer is (tailgate.prereg.answer)."""
    items, registered = registered_answer(study.data)
    how = "registered" if registered else "derived from what is registered"
    return f"answer: {', '.join(items)} ({how})"


def _freeze_refusals(
    study: Any, unrunnable: list[PreregError], false_pass_problem: str | None, oc: Any
) -> list[str]:
    """What ``tailgate freeze`` would refuse in this registration, by the checks freeze itself
    runs (``unrunnable``: what would fail after the freeze; the Eq. 2 cap check, the
    ``accepted_power`` check against ``oc``, the simulation just run, and, when registered, the
    false-PASS bound): ``design`` exits 2 whenever freeze would."""
    from tailgate.authoring.freeze import check_design

    problems = [str(p) for p in unrunnable]
    try:
        check_design(study, runnable=False, oc=oc, simulate=not unrunnable)
    except InputError as exc:  # one PreregError, or several named together
        problems.append(str(exc))
    if false_pass_problem:  # None unless max_false_pass is registered
        problems.append(
            f"{study.path}: field 'protocol.operating_characteristics.max_false_pass': "
            f"{false_pass_problem}"
        )
    return problems
