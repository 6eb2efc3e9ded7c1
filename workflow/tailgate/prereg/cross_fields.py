"""The rules of a registration that JSON Schema cannot express: names, references between fields,
orderings and settings that only one choice of another field uses.

Each rule is a small named function of the registration (:class:`Registration`) that yields its
problems as ``(where, message, fix)``; :func:`check` runs the table in order and raises the
first as a :class:`~tailgate.errors.PreregError` naming the file, line and field (exit 2). The
rules of one condition or one scorer run entry by entry, so that the first problem reported is
the one nearest the top of the file. A study without the protocol (``protocol.enabled:
false``) is held to :data:`NO_PROTOCOL_RULES` instead of :data:`PROTOCOL_RULES`.

A few of them could be JSON Schema conditions (``if`` the backend is ``import`` ``then`` a
path; ``lr_calibration`` only under ``p1_method: lr_test``), but the schema's messages are
generic (:func:`tailgate.prereg.schema.validate`): here each keeps the message and fix that
says what the run would do with the field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailgate.errors import PreregError
from tailgate.prereg.answer import answer_problems, protocol_registered
from tailgate.prereg.protocol_blocks import Rules
from tailgate.prereg.schema import did_you_mean
from tailgate.prereg.strict_yaml import Located, field_name

__all__ = [
    "CONDITION_RULES",
    "JUDGED_KINDS",
    "NAME_RE",
    "NO_PROTOCOL_RULES",
    "PROTOCOL_RULES",
    "RULES",
    "SCORER_RULES",
    "Registration",
    "check",
]

#: a valid name of a study, condition, scorer or model (the schema's pattern, without the
#: words YAML reads as another type)
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: scorer kinds that run a registered model (their ``judge``: a key of ``models``)
JUDGED_KINDS = ("token_nll", "judge")

#: (where, message, fix): the field's path, what is wrong, how to fix it
Problem = tuple[tuple[Any, ...], str, str]


@dataclass(frozen=True)
class Registration:
    """What the rules read: the canonical document (defaults applied), the document as written
    (its lines; what was written, e.g. under ``protocol.enabled: false``) and its path."""

    data: dict[str, Any]
    doc: Located
    path: Path

    @property
    def backend(self) -> str:
        return str(self.data["data"]["backend"])

    @property
    def protocol(self) -> dict[str, Any]:
        return self.data["protocol"]


Rule = Callable[[Registration], Iterable[Problem]]
EntryRule = Callable[[Registration, int, dict[str, Any]], Iterable[Problem]]


def check(reg: Registration) -> None:
    """Raise the first problem of the rules, in the table's order (module docstring)."""
    rules = RULES + (PROTOCOL_RULES if protocol_registered(reg.data) else NO_PROTOCOL_RULES)
    for rule in rules:
        for where, message, fix in rule(reg):
            raise PreregError(
                message,
                file=str(reg.path),
                line=reg.doc.line_of(where),
                field=field_name(where),
                fix=fix,
            )


# --- the study --------------------------------------------------------------------------------


def study_is_the_file_stem(reg: Registration) -> Iterator[Problem]:
    stem, study = reg.path.stem, reg.data["study"]
    if study != stem:
        yield (
            ("study",),
            f"study is '{study}' but the file is named '{reg.path.name}'",
            f"rename the file to {study}.yaml or set 'study: {stem}'"
            + ("" if NAME_RE.match(stem) else " after renaming the file to a valid study name"),
        )


def each_condition(reg: Registration) -> Iterator[Problem]:
    """:data:`CONDITION_RULES` for each condition in turn."""
    for i, cond in enumerate(reg.data["conditions"]):
        for rule in CONDITION_RULES:
            yield from rule(reg, i, cond)


def each_scorer(reg: Registration) -> Iterator[Problem]:
    """:data:`SCORER_RULES` for each scorer in turn."""
    for i, sc in enumerate(reg.data["scorers"]):
        for rule in SCORER_RULES:
            yield from rule(reg, i, sc)


def import_path_given(reg: Registration) -> Iterator[Problem]:
    if reg.backend == "import" and reg.data["data"]["import"]["path"] is None:
        yield (
            ("data", "import", "path"),
            "data.backend is import but data.import.path is null",
            "give the path of the JSONL/CSV/Parquet file to import",
        )


def answer_names_what_is_registered(reg: Registration) -> Iterator[Problem]:
    yield from answer_problems(reg.data)


# --- one condition ----------------------------------------------------------------------------


def condition_name_unique(reg: Registration, i: int, cond: dict[str, Any]) -> Iterator[Problem]:
    earlier = [c["name"] for c in reg.data["conditions"][:i]]
    if cond["name"] in earlier:
        yield (
            ("conditions", i, "name"),
            f"condition name '{cond['name']}' is used twice (also "
            f"conditions[{earlier.index(cond['name'])}])",
            "give every condition a unique name",
        )


def prompts_within_cap(reg: Registration, i: int, cond: dict[str, Any]) -> Iterator[Problem]:
    cap = reg.data["sample_cap"]
    if cond["prompts"] > cap:
        yield (
            ("conditions", i, "prompts"),
            f"prompts ({cond['prompts']}) exceeds sample_cap ({cap})",
            "lower the condition's prompts or raise sample_cap",
        )


def query_needs_generation(reg: Registration, i: int, cond: dict[str, Any]) -> Iterator[Problem]:
    if cond.get("query") is not None and reg.backend != "transformers":
        yield (
            ("conditions", i, "query"),
            f"condition '{cond['name']}' registers a query, but data.backend is {reg.backend}: "
            "only the transformers backend answers a registered query",
            "remove 'query' (simulate and import conditions carry their own rows) or use "
            "data.backend: transformers",
        )


def condition_model_registered(
    reg: Registration, i: int, cond: dict[str, Any]
) -> Iterator[Problem]:
    model, models = cond.get("model"), reg.data["models"]
    if reg.backend == "transformers" and model is None:
        yield (
            ("conditions", i),
            f"condition '{cond['name']}' names no model, but data.backend is transformers",
            "add 'model: <key of models>' to the condition",
        )
    elif reg.backend == "transformers" and model not in models:
        known = f" (known: {', '.join(sorted(models))})" if models else " (models is empty)"
        yield (
            ("conditions", i, "model"),
            f"model '{model}' is not a key of models" + known,
            "add the model under 'models:' or correct the key" + did_you_mean(model, models),
        )
    elif model is not None and model not in models:
        yield (
            ("conditions", i, "model"),
            f"model '{model}' is not a key of models",
            "add the model under 'models:', correct the key, or remove 'model'"
            + did_you_mean(model, models),
        )


def perturbation_needs_generation(
    reg: Registration, i: int, cond: dict[str, Any]
) -> Iterator[Problem]:
    if cond["perturbation"]["kind"] != "none" and reg.backend == "import":
        yield (
            ("conditions", i, "perturbation"),
            "perturbations need generation, but data.backend is import",
            "use 'perturbation: {kind: none}' for imported data",
        )


# --- one scorer -------------------------------------------------------------------------------


def scorer_name_unique(reg: Registration, i: int, sc: dict[str, Any]) -> Iterator[Problem]:
    earlier = [s["name"] for s in reg.data["scorers"][:i]]
    if sc["name"] in earlier:
        yield (
            ("scorers", i, "name"),
            f"scorer name '{sc['name']}' is used twice (also scorers[{earlier.index(sc['name'])}])",
            "give every scorer a unique name",
        )


def judge_registered(reg: Registration, i: int, sc: dict[str, Any]) -> Iterator[Problem]:
    if sc["kind"] in JUDGED_KINDS and sc["judge"] not in reg.data.get("models", {}):
        yield (
            ("scorers", i, "judge"),
            f"judge '{sc['judge']}' is not a key of models",
            "add the judge model under 'models:' or correct the key"
            + did_you_mean(sc["judge"], reg.data.get("models", {})),
        )


# --- the protocol -----------------------------------------------------------------------------


def headline_scale_registered(reg: Registration) -> Iterator[Problem]:
    scale, scales = reg.protocol["headline_scale"], reg.data["transform"]["scales"]
    if scale not in scales:
        yield (
            ("protocol", "headline_scale"),
            f"headline_scale '{scale}' is not among transform.scales {scales}",
            "add it to transform.scales or choose a listed scale",
        )


def headline_scale_computed(reg: Registration) -> Iterator[Problem]:
    """What is registered is what runs: probability and logit need scores in [0, 1], so an
    unbounded scorer is analysed on identity only (tailgate.plans.reads.scales_for)."""
    head, scale = reg.data["scorers"][0], reg.protocol["headline_scale"]
    if not head.get("bounded", True) and scale != "identity":
        yield (
            ("protocol", "headline_scale"),
            f"headline_scale '{scale}' cannot be computed for the headline scorer "
            f"'{head['name']}' (the first scorer): it is registered 'bounded: false', so the "
            "run analyses it on the identity scale only",
            "set 'headline_scale: identity' (with identity in transform.scales), or list a "
            "bounded scorer first",
        )


def every_scale_computed(reg: Registration) -> Iterator[Problem]:
    if not any(sc.get("bounded", True) for sc in reg.data["scorers"]):
        unused = [s for s in reg.data["transform"]["scales"] if s != "identity"]
        if unused:
            yield (
                ("transform", "scales"),
                f"scale(s) {', '.join(unused)} would never be computed: every scorer is "
                "registered 'bounded: false' and is analysed on the identity scale only",
                "register 'scales: [identity]'",
            )


def tolerance_scales_computed(reg: Registration) -> Iterator[Problem]:
    """Per-scale tolerances name a scale, or a scorer's scale, that the run computes (as
    tailgate.plans.reads.scales_for: a bounded scorer on every registered scale, an
    unbounded one on identity)."""
    scales = reg.data["transform"]["scales"]
    computed = {
        (sc["name"], scale)
        for sc in reg.data["scorers"]
        for scale in (scales if sc.get("bounded", True) else ["identity"])
    }
    for key in reg.protocol["tolerances"].get("scales") or {}:
        scorer_name, _, scale_name = key.rpartition("/")
        hit = [pair for pair in computed if pair[1] == scale_name]
        if scorer_name:
            hit = [pair for pair in hit if pair[0] == scorer_name]
        if not hit:
            runs = sorted({f"{a}/{b}" for a, b in computed} | {b for _, b in computed})
            yield (
                ("protocol", "tolerances", "scales", key),
                f"'{key}' names no scale the run analyses, so its tolerances would never be used",
                f"use one of {', '.join(runs)}",
            )


def band_increasing(reg: Registration) -> Iterator[Problem]:
    band = reg.protocol["thresholds"]["band"]
    if band != sorted(band):
        yield (
            ("protocol", "thresholds", "band"),
            f"the threshold band {band} is not in increasing order",
            f"write it sorted: {sorted(band)}",
        )


def headline_in_band(reg: Registration) -> Iterator[Problem]:
    thr = reg.protocol["thresholds"]
    if thr["headline"] not in thr["band"]:
        yield (
            ("protocol", "thresholds", "headline"),
            f"headline threshold {thr['headline']} is not in the band {thr['band']}",
            "add the headline threshold to the band or pick one of its values",
        )


def ceiling_only_for_lattice(reg: Registration) -> Iterator[Problem]:
    thr = reg.protocol["thresholds"]
    if "ceiling" in thr and thr.get("ties") != "lattice":
        yield (
            ("protocol", "thresholds", "ceiling"),
            f"protocol.thresholds.ceiling ({thr['ceiling']}) censors the top grade's lattice "
            "cell, but ties is not lattice: no fit would read it",
            "register protocol.thresholds.ties: lattice, or remove the ceiling",
        )


def scan_ordered(reg: Registration) -> Iterator[Problem]:
    scan = reg.protocol["stability"]["scan"]
    if not scan["start"] < scan["stop"]:
        yield (
            ("protocol", "stability", "scan"),
            f"scan start ({scan['start']}) is not below stop ({scan['stop']})",
            "swap start and stop so that start < stop",
        )
    elif scan["step"] > scan["stop"] - scan["start"]:
        yield (
            ("protocol", "stability", "scan", "step"),
            f"scan step ({scan['step']}) is larger than the scanned range",
            "use a step smaller than stop - start",
        )


def scan_resamples_only_for_bootstrap(reg: Registration) -> Iterator[Problem]:
    st = reg.protocol["stability"]
    if st.get("intervals") == "wald" and st["resamples"] != 0:
        yield (
            ("protocol", "stability", "resamples"),
            f"protocol.stability.resamples ({st['resamples']}) sizes the scan's bootstrap "
            "intervals, but intervals is wald: the scan would draw none",
            "set protocol.stability.resamples: 0, or register intervals: bootstrap",
        )


def pairs_name_two_conditions(reg: Registration) -> Iterator[Problem]:
    pairs = reg.protocol["pairs"]
    if pairs == "all":
        return
    names = {c["name"] for c in reg.data["conditions"]}
    done: set[frozenset[str]] = set()
    for i, (a, b) in enumerate(pairs):
        for j, n in enumerate((a, b)):
            if n not in names:
                yield (
                    ("protocol", "pairs", i, j),
                    f"pair [{a}, {b}] names '{n}', which is not a condition",
                    "use names from 'conditions'" + did_you_mean(n, names),
                )
        if a == b:
            yield (
                ("protocol", "pairs", i),
                f"pair [{a}, {b}] compares a condition with itself",
                "name two different conditions",
            )
        if frozenset((a, b)) in done:
            yield (("protocol", "pairs", i), f"pair [{a}, {b}] is listed twice", "list it once")
        done.add(frozenset((a, b)))


def _p1_method(reg: Registration) -> str:
    return str(reg.protocol.get("p1_method", Rules.p1_method))


def resamples_only_for_percentile_p1(reg: Registration) -> Iterator[Problem]:
    method = _p1_method(reg)
    for block in ("power_simulation", "operating_characteristics"):
        if method != "percentile" and "resamples" in (reg.protocol.get(block) or {}):
            yield (
                ("protocol", block, "resamples"),
                f"protocol.{block}.resamples sizes P1's percentile bootstrap, but p1_method is "
                f"{method}: the simulation would ignore it",
                f"remove protocol.{block}.resamples, or register p1_method: percentile",
            )


def lr_calibration_only_for_lr_test(reg: Registration) -> Iterator[Problem]:
    method = _p1_method(reg)
    if "lr_calibration" in reg.protocol and method != "lr_test":
        yield (
            ("protocol", "lr_calibration"),
            f"protocol.lr_calibration calibrates P1's likelihood-ratio test, but p1_method is "
            f"{method}: no gate would use it",
            "remove protocol.lr_calibration, or register p1_method: lr_test",
        )


def accepted_power_below_power(reg: Registration) -> Iterator[Problem]:
    ap, power = reg.data["accepted_power"], reg.protocol["power"]
    if ap is not None and ap >= power:
        yield (
            ("accepted_power",),
            f"accepted_power ({ap}) is not below protocol.power ({power})",
            "set accepted_power: null, or record the lower power actually accepted",
        )


# --- no protocol ------------------------------------------------------------------------------


def no_protocol_setting_written(reg: Registration) -> Iterator[Problem]:
    """``protocol.enabled: false``: a registered protocol setting would be ignored by the run."""
    for key in reg.doc.data.get("protocol") or {}:
        if key != "enabled":
            yield (
                ("protocol", key),
                f"protocol.{key} is registered, but protocol.enabled is false: the run would "
                "ignore it",
                f"remove protocol.{key}, or register the protocol (remove 'enabled: false')",
            )


def no_accepted_power_without_protocol(reg: Registration) -> Iterator[Problem]:
    """``accepted_power`` is the protocol's Eq. 2 check: without the protocol nothing reads it."""
    if reg.data["accepted_power"] is not None:
        yield (
            ("accepted_power",),
            "accepted_power accepts a power below the protocol's Eq. 2 bound, but "
            "protocol.enabled is false: nothing would check it",
            "remove accepted_power (or set it to null)",
        )


# --- the tables -------------------------------------------------------------------------------

#: the rules of one condition, run for each condition in turn
CONDITION_RULES: tuple[EntryRule, ...] = (
    condition_name_unique,
    prompts_within_cap,
    query_needs_generation,
    condition_model_registered,
    perturbation_needs_generation,
)

#: the rules of one scorer, run for each scorer in turn
SCORER_RULES: tuple[EntryRule, ...] = (scorer_name_unique, judge_registered)

#: the rules of every study, in order
RULES: tuple[Rule, ...] = (
    study_is_the_file_stem,
    each_condition,
    each_scorer,
    import_path_given,
    answer_names_what_is_registered,
)

#: the rules of a study that registers the protocol, after :data:`RULES`
PROTOCOL_RULES: tuple[Rule, ...] = (
    headline_scale_registered,
    headline_scale_computed,
    every_scale_computed,
    tolerance_scales_computed,
    band_increasing,
    headline_in_band,
    ceiling_only_for_lattice,
    scan_ordered,
    scan_resamples_only_for_bootstrap,
    pairs_name_two_conditions,
    resamples_only_for_percentile_p1,
    lr_calibration_only_for_lr_test,
    accepted_power_below_power,
)

#: the rules of a study without the protocol (``protocol.enabled: false``), after :data:`RULES`
NO_PROTOCOL_RULES: tuple[Rule, ...] = (
    no_protocol_setting_written,
    no_accepted_power_without_protocol,
)
