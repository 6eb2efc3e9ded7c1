"""A loaded pre-registration: validated, defaults applied, hashed.

``load(path)`` is the only way tailgate reads a study: strict YAML
(:mod:`tailgate.prereg.strict_yaml`), the versioned JSON Schema (:mod:`tailgate.prereg.schema`),
derived defaults, the cross-field checks the schema cannot express, then the canonical hash
(:mod:`tailgate.prereg.canonical`). Each analysis entry's own checks belong to its kind, a layer
above: the entry points load a study through :func:`tailgate.plans.registration.load` (adding them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tailgate.errors import PreregError
from tailgate.prereg.canonical import canonical_hash, normalise, sha256_bytes
from tailgate.prereg.cross_fields import NAME_RE, Registration, check
from tailgate.prereg.schema import apply_defaults, fill_defaults, load_schema, validate
from tailgate.prereg.strict_yaml import Located, load_yaml, read_registration
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


def worse_of(scorer: dict[str, Any]) -> str | None:
    """Which tail of a scorer's scores holds the worse outcomes: ``higher`` or ``lower``, from
    the scorer's one declaration ``worse`` (absent: ``higher``, the tail of a toxicity
    probability, a grade of harm or a negative log-likelihood); ``None`` while it is registered
    as not yet known (``worse: null``, which design and freeze refuse). Every stage studies the
    bad tail: the severities are the scores oriented so that larger is worse
    (:func:`tailgate.data.transform.transform_scores`)."""
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
    raw, text = read_registration(p)
    doc = load_yaml(p, text)
    validate(doc, file)
    data = apply_defaults(doc.data)
    _derive(data)
    check_cross_fields(data, doc, p)
    data = normalise(data)
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
    """The rules JSON Schema cannot express (names, references, orderings): the table of
    :mod:`tailgate.prereg.cross_fields`, the first problem raised as a :class:`PreregError`."""
    check(Registration(data, doc, path))
