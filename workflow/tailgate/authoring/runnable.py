"""What would fail after the freeze, found before it: ``tailgate design`` and ``tailgate freeze``
refuse it (exit code 2, each problem with its file, field and fix).

* a protocol without a pair of conditions to compare (one condition registered: the run would
  reach the report with nothing to compare);
* a scorer whose bad tail is not known (``worse: null``, which ``tailgate init`` writes where the
  scores carry no direction): the protocol and every analysis study the tail ``worse`` names
  (:func:`tailgate.prereg.study.worse_of`);
* a scorer, the generation backend or an analysis's embedding model whose package cannot be
  found in this environment (:func:`tailgate.runtime.loadable.missing_packages`, which
  Snakemake's parse-time guard also runs): the scoring, generation or embed job would stop with
  ``ModuleNotFoundError`` after the freeze; the message names the install line that works;
* an imported score column that is constant in a condition the protocol fits (no tail to compare:
  every exceedance count is 0, every fit fails).

The checks look only at the registration, the installed packages (by
:func:`importlib.util.find_spec`, which imports nothing) and the registered import file.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tailgate.errors import InputError, PreregError
from tailgate.prereg.pins import project_root
from tailgate.runtime.loadable import missing_packages

__all__ = ["runnable_problems"]


def runnable_problems(study: Any) -> list[PreregError]:
    """Every problem of the module docstring in ``study`` (none: the run can start)."""
    file = str(study.path)
    problems: list[PreregError] = []
    for i, sc in enumerate(study.scorers()):
        name = sc["name"]
        if "worse" in sc and sc["worse"] is None:
            problems.append(
                PreregError(
                    f"scorer '{name}' does not say which of its scores are the worse outcomes "
                    "(worse: null); the protocol and every analysis study that tail",
                    file=file,
                    field=f"scorers[{i}].worse",
                    fix="write 'worse: higher' (larger scores are worse: a toxicity, a loss) or "
                    "'worse: lower' (a log-likelihood, an accuracy)",
                )
            )
    problems += missing_packages(study)
    if study.has_protocol and not study.pairs():
        names = [c["name"] for c in study.conditions()]
        problems.append(
            PreregError(
                f"the protocol compares the tails of pairs of conditions, but "
                f"{len(names)} condition is registered ({', '.join(names)}): no pair can be "
                "compared, so the run could reach no H1 verdict",
                file=file,
                field="protocol.pairs",
                fix="register a second condition (for imported scores: import a second model's "
                "or run's output too), or set 'protocol: {enabled: false}' and register "
                "analyses that describe one condition (percentiles, severity)",
            )
        )
    if study.backend == "import" and study.has_protocol:
        problems += _constant_columns(study)
    return problems


def _constant_columns(study: Any) -> list[PreregError]:
    """Imported score columns constant within a condition the protocol fits."""
    from tailgate.generate.importer import inspect_import

    try:
        summary, rows = inspect_import(study, base_dir=project_root(study.path))
    except InputError:
        return []  # design names the problem of the file itself (import_findings)
    out = []
    fitted = study.protocol_conditions()
    for s in summary.spec.scores:
        flat = []
        for cond in fitted:
            x = rows.scores[s.column][rows.of(cond)]
            if x.size and np.ptp(x) <= 1e-12 * max(1.0, float(np.max(np.abs(x)))):
                flat.append(f"{cond} (every value {float(x[0]):g})")
        if flat:
            index = [sc["name"] for sc in study.scorers()].index(s.scorer)
            out.append(
                PreregError(
                    f"scorer '{s.scorer}' (file column {s.source!r}) is constant in "
                    f"{', '.join(flat)}: a constant score has no tail, so no exceedance, fit or "
                    "gate could be computed",
                    file=str(study.path),
                    field=f"scorers[{index}]",
                    fix="remove the scorer (and its entry in data.import.columns.score), or "
                    "import a column that varies",
                )
            )
    return out
