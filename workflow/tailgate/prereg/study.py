"""A loaded pre-registration: validated, defaults applied, hashed.

``load(path)`` is the only way the rest of tailgate reads a study: strict YAML
(:mod:`tailgate.prereg.strict_yaml`), the versioned JSON Schema (:mod:`tailgate.prereg.schema`),
derived defaults, the cross-field checks the schema cannot express, then the canonical hash
(:mod:`tailgate.prereg.canonical`).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from tailgate.errors import PreregError
from tailgate.prereg.canonical import canonical_hash, normalise, sha256_bytes
from tailgate.prereg.schema import apply_defaults, fill_defaults, load_schema, validate
from tailgate.prereg.strict_yaml import Located, field_name, load_yaml
from tailgate.prereg.validated import (
    Study,
    lock_path_for,
    prereg_for,
    project_root,
    results_dir_for,
)

__all__ = [
    "NAME_RE",
    "Study",
    "load",
    "lock_path_for",
    "prereg_for",
    "project_root",
    "results_dir_for",
    "worse_of",
]

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def worse_of(scorer: dict[str, Any]) -> str | None:
    """Which tail of a scorer's scores holds the worse outcomes: ``higher`` or ``lower``, from
    the scorer's one declaration ``worse`` (absent: ``higher``, the tail of a toxicity
    probability, a grade of harm or a negative log-likelihood); ``None`` while it is registered
    as not yet known (``worse: null``, which design and freeze refuse). Every stage studies the
    bad tail: the severities are the scores oriented so that larger is worse
    (:func:`tailgate.transform.transform_scores`)."""
    value = scorer.get("worse", "higher")
    return None if value is None else str(value)


def load(path: str | Path) -> Study:
    """Load, validate and hash the pre-registration at ``path``.

    Raises :class:`tailgate.errors.PreregError` naming the file, line, field and fix.
    """
    p = Path(path)
    file = str(p)
    if p.suffix not in (".yaml", ".yml"):
        raise PreregError(
            f"a pre-registration is a .yaml file, got '{p.name}'",
            file=file,
            fix="name the file preregistrations/<study>.yaml",
        )
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise PreregError(
            "the file does not exist",
            file=file,
            fix="check the path, or start the study with 'tailgate init <study>'",
        ) from None
    except OSError as exc:
        raise PreregError(f"cannot read the file ({exc.strerror})", file=file) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PreregError(
            f"the file is not UTF-8 text (byte {exc.start})", file=file, fix="save it as UTF-8"
        ) from None
    doc = load_yaml(p, text)
    validate(doc, file)
    data = apply_defaults(doc.data)
    _derive(data)
    check_cross_fields(data, doc, p)
    data = normalise(data)
    # the analyses' cross-field checks (criteria statistics, condition and scorer names) are the
    # same function for design, freeze, verify and Snakemake's parse time: a registration the
    # run would refuse is never frozen
    from tailgate.analyses.registry import check_analyses

    check_analyses(data, p, doc)
    return Study(path=p, data=data, canonical_hash=canonical_hash(data), raw_hash=sha256_bytes(raw))


def _derive(data: dict[str, Any]) -> None:
    """Defaults that depend on other fields: condition prompts and the simulate truth."""
    simulate_schema = load_schema()["$defs"]["simulate"]
    for cond in data["conditions"]:
        cond.setdefault("prompts", data["sample_cap"])
        if data["data"]["backend"] == "simulate" and "simulate" not in cond:
            cond["simulate"] = {}
        if "simulate" in cond:
            fill_defaults(cond["simulate"], simulate_schema)


def check_cross_fields(data: dict[str, Any], doc: Located, path: Path) -> None:
    """The rules JSON Schema cannot express (names, references, orderings)."""
    file = str(path)

    def fail(where: tuple, message: str, fix: str) -> None:
        raise PreregError(
            message, file=file, line=doc.line_of(where), field=field_name(where), fix=fix
        )

    stem = path.stem
    if data["study"] != stem:
        fail(
            ("study",),
            f"study is '{data['study']}' but the file is named '{path.name}'",
            f"rename the file to {data['study']}.yaml or set 'study: {stem}'"
            + ("" if NAME_RE.match(stem) else " after renaming the file to a valid study name"),
        )
    backend = data["data"]["backend"]
    models = data["models"]
    seen: dict[str, int] = {}
    for i, cond in enumerate(data["conditions"]):
        name = cond["name"]
        if name in seen:
            fail(
                ("conditions", i, "name"),
                f"condition name '{name}' is used twice (also conditions[{seen[name]}])",
                "give every condition a unique name",
            )
        seen[name] = i
        if cond["prompts"] > data["sample_cap"]:
            fail(
                ("conditions", i, "prompts"),
                f"prompts ({cond['prompts']}) exceeds sample_cap ({data['sample_cap']})",
                "lower the condition's prompts or raise sample_cap",
            )
        model = cond.get("model")
        if cond.get("query") is not None and backend != "transformers":
            fail(
                ("conditions", i, "query"),
                f"condition '{name}' registers a query, but data.backend is {backend}: only the "
                "transformers backend answers a registered query",
                "remove 'query' (simulate and import conditions carry their own rows) or use "
                "data.backend: transformers",
            )
        if backend == "transformers":
            if model is None:
                fail(
                    ("conditions", i),
                    f"condition '{name}' names no model, but data.backend is transformers",
                    "add 'model: <key of models>' to the condition",
                )
            if model not in models:
                fail(
                    ("conditions", i, "model"),
                    f"model '{model}' is not a key of models"
                    + (
                        f" (known: {', '.join(sorted(models))})" if models else " (models is empty)"
                    ),
                    "add the model under 'models:' or correct the key",
                )
        elif model is not None and model not in models:
            fail(
                ("conditions", i, "model"),
                f"model '{model}' is not a key of models",
                "add the model under 'models:', correct the key, or remove 'model'",
            )
        if cond["perturbation"]["kind"] != "none" and backend == "import":
            fail(
                ("conditions", i, "perturbation"),
                "perturbations need generation, but data.backend is import",
                "use 'perturbation: {kind: none}' for imported data",
            )
    seen = {}
    for i, sc in enumerate(data["scorers"]):
        if sc["name"] in seen:
            fail(
                ("scorers", i, "name"),
                f"scorer name '{sc['name']}' is used twice (also scorers[{seen[sc['name']]}])",
                "give every scorer a unique name",
            )
        seen[sc["name"]] = i
        if sc["kind"] == "token_nll" and sc["judge"] not in models:
            fail(
                ("scorers", i, "judge"),
                f"judge '{sc['judge']}' is not a key of models",
                "add the judge model under 'models:' or correct the key",
            )
    if backend == "import" and data["data"]["import"]["path"] is None:
        fail(
            ("data", "import", "path"),
            "data.backend is import but data.import.path is null",
            "give the path of the JSONL/CSV/Parquet file to import",
        )
    from tailgate.prereg.answer import answer_problems, protocol_registered

    for where, message, fix in answer_problems(data):
        fail(where, message, fix)
    if not protocol_registered(data):
        _check_no_protocol(data, doc, fail)
        return
    proto = data["protocol"]
    if proto["headline_scale"] not in data["transform"]["scales"]:
        fail(
            ("protocol", "headline_scale"),
            f"headline_scale '{proto['headline_scale']}' is not among transform.scales "
            f"{data['transform']['scales']}",
            "add it to transform.scales or choose a listed scale",
        )
    # what is registered is what runs: probability and logit need scores in [0, 1], so an
    # unbounded scorer is analysed on identity only (tailgate.stages.common.scales_for)
    scorers = data["scorers"]
    head = scorers[0]
    if not head.get("bounded", True) and proto["headline_scale"] != "identity":
        fail(
            ("protocol", "headline_scale"),
            f"headline_scale '{proto['headline_scale']}' cannot be computed for the headline "
            f"scorer '{head['name']}' (the first scorer): it is registered 'bounded: false', so "
            "the run analyses it on the identity scale only",
            "set 'headline_scale: identity' (with identity in transform.scales), or list a "
            "bounded scorer first",
        )
    if not any(sc.get("bounded", True) for sc in scorers):
        unused = [s for s in data["transform"]["scales"] if s != "identity"]
        if unused:
            fail(
                ("transform", "scales"),
                f"scale(s) {', '.join(unused)} would never be computed: every scorer is "
                "registered 'bounded: false' and is analysed on the identity scale only",
                "register 'scales: [identity]'",
            )
    # per-scale tolerances name a scale, or a scorer's scale, that the run computes (as
    # tailgate.stages.common.scales_for: a bounded scorer on every registered scale, an
    # unbounded one on identity)
    computed = {
        (sc["name"], sc_scale)
        for sc in scorers
        for sc_scale in (data["transform"]["scales"] if sc.get("bounded", True) else ["identity"])
    }
    for key in proto["tolerances"].get("scales") or {}:
        scorer_name, _, scale_name = key.rpartition("/")
        hit = [pair for pair in computed if pair[1] == scale_name]
        if scorer_name:
            hit = [pair for pair in hit if pair[0] == scorer_name]
        if not hit:
            runs = sorted({f"{a}/{b}" for a, b in computed} | {b for _, b in computed})
            fail(
                ("protocol", "tolerances", "scales", key),
                f"'{key}' names no scale the run analyses, so its tolerances would never be used",
                f"use one of {', '.join(runs)}",
            )
    thr = proto["thresholds"]
    band = thr["band"]
    if band != sorted(band):
        fail(
            ("protocol", "thresholds", "band"),
            f"the threshold band {band} is not in increasing order",
            f"write it sorted: {sorted(band)}",
        )
    if thr["headline"] not in band:
        fail(
            ("protocol", "thresholds", "headline"),
            f"headline threshold {thr['headline']} is not in the band {band}",
            "add the headline threshold to the band or pick one of its values",
        )
    scan = proto["stability"]["scan"]
    if not scan["start"] < scan["stop"]:
        fail(
            ("protocol", "stability", "scan"),
            f"scan start ({scan['start']}) is not below stop ({scan['stop']})",
            "swap start and stop so that start < stop",
        )
    if scan["step"] > scan["stop"] - scan["start"]:
        fail(
            ("protocol", "stability", "scan", "step"),
            f"scan step ({scan['step']}) is larger than the scanned range",
            "use a step smaller than stop - start",
        )
    pairs = proto["pairs"]
    if pairs != "all":
        names = {c["name"] for c in data["conditions"]}
        done: set[frozenset[str]] = set()
        for i, (a, b) in enumerate(pairs):
            for j, n in enumerate((a, b)):
                if n not in names:
                    fail(
                        ("protocol", "pairs", i, j),
                        f"pair [{a}, {b}] names '{n}', which is not a condition",
                        "use names from 'conditions'",
                    )
            if a == b:
                fail(
                    ("protocol", "pairs", i),
                    f"pair [{a}, {b}] compares a condition with itself",
                    "name two different conditions",
                )
            if frozenset((a, b)) in done:
                fail(("protocol", "pairs", i), f"pair [{a}, {b}] is listed twice", "list it once")
            done.add(frozenset((a, b)))
    method = proto.get("p1_method", "percentile")
    for block in ("power_simulation", "operating_characteristics"):
        if method != "percentile" and "resamples" in (proto.get(block) or {}):
            fail(
                ("protocol", block, "resamples"),
                f"protocol.{block}.resamples sizes P1's percentile bootstrap, but p1_method is "
                f"{method}: the simulation would ignore it",
                f"remove protocol.{block}.resamples, or register p1_method: percentile",
            )
    if "lr_calibration" in proto and method != "lr_test":
        fail(
            ("protocol", "lr_calibration"),
            f"protocol.lr_calibration calibrates P1's likelihood-ratio test, but p1_method is "
            f"{method}: no gate would use it",
            "remove protocol.lr_calibration, or register p1_method: lr_test",
        )
    ap = data["accepted_power"]
    if ap is not None and ap >= proto["power"]:
        fail(
            ("accepted_power",),
            f"accepted_power ({ap}) is not below protocol.power ({proto['power']})",
            "set accepted_power: null, or record the lower power actually accepted",
        )


def _check_no_protocol(data: dict[str, Any], doc: Located, fail: Any) -> None:
    """``protocol.enabled: false``: a registered protocol setting or ``accepted_power`` (the
    protocol's Eq. 2 check) would be ignored by the run, so neither may be written."""
    written = doc.data.get("protocol") or {}
    for key in written:
        if key != "enabled":
            fail(
                ("protocol", key),
                f"protocol.{key} is registered, but protocol.enabled is false: the run would "
                "ignore it",
                f"remove protocol.{key}, or register the protocol (remove 'enabled: false')",
            )
    if data["accepted_power"] is not None:
        fail(
            ("accepted_power",),
            "accepted_power accepts a power below the protocol's Eq. 2 bound, but "
            "protocol.enabled is false: nothing would check it",
            "remove accepted_power (or set it to null)",
        )


def study_copy(study: Study) -> dict[str, Any]:
    """A deep, mutable copy of the study's canonical data (for building variants in tests)."""
    return copy.deepcopy(study.data)
