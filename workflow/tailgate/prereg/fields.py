"""The registered fields, as the schema declares them: each field's role, the direction that
loosens it and the workflow stages that read it.

Every field is declared once, in ``workflow/tailgate/schemas/prereg.v<N>.schema.json``; beside
its type, bounds, default and description, a field (or a whole block) carries an ``x-registered``
annotation, which JSON Schema validation ignores and the canonical form of a registration never
holds (so annotating a field changes no registration's hash):

``role``
    ``decision`` (a decision rule of the registered plan), ``descriptive`` (text no stage reads,
    display-only sizes) or ``design-only`` (the sizes of the design's own simulations, reported
    beside the verdict). Inherited by the fields of a block; a field nobody annotated is a
    decision rule (fail-closed).
``loosens``
    The direction of change that makes a claim easier to make: ``"up"`` or ``"down"`` for a
    number, or an ordered choice's values from strictest to loosest. On a block it applies to
    every field inside it.
``stages``
    The stages (:data:`STAGES`) that read this part of the registration, whole. A stage that
    reads a block reads every field inside it.
``skipped_by``
    The stages that read the block around this field but not the field: a job of such a stage
    leaves it out of that block (an analysis's statistics never read its criteria; only the
    grading does, so a criterion amendment re-runs the grading alone).
``entry``
    On the entry of a list or mapping: how a stage names one entry, with the job's wildcard, e.g.
    ``[{condition}]`` (``conditions[{condition}]``) or ``.{analysis}`` (``analyses.{analysis}``).
``read_when_absent``
    ``false`` for a part added after studies were run: a stage leaves it out of its reads while
    it is absent, so the fingerprints of registrations without it stay what they were.

From these, :func:`annotations` derives what :mod:`tailgate.prereg.diff` classifies an amendment
by and what :mod:`tailgate.plans.fingerprint` fingerprints a stage by, and
:mod:`tailgate.authoring.reference` writes the pre-registration reference of the docs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

from tailgate.prereg.schema import SCHEMA_VERSION, load_schema

__all__ = ["ANNOTATION", "ROLES", "STAGES", "Annotations", "Field", "annotations"]

#: the schema keyword that holds a field's annotation
ANNOTATION = "x-registered"

DECISION, DESCRIPTIVE, DESIGN_ONLY = "decision", "descriptive", "design-only"
ROLES = (DECISION, DESCRIPTIVE, DESIGN_ONLY)

#: the workflow's stages that read the registration, in the order they run
STAGES = (
    "select_prompts",
    "generate",
    "score",
    "embed",
    "transform",
    "fit",
    "bulk",
    "gates",
    "sensitivity",
    "power",
    "operating",
    "analysis",
    "grade",
    "verdict",
    "report",
)

_KEYS = frozenset({"role", "loosens", "stages", "skipped_by", "entry", "read_when_absent"})


@dataclass(frozen=True)
class Field:
    """One field (or block) of the schema, with its annotation resolved.

    ``pattern`` names it as an amendment's field does, ``*`` standing for any entry
    (``conditions[*].min_rows``, ``analyses.*.alpha``); ``read`` names it as a stage's reads do
    (``conditions[{condition}].pilot``; None below an entry no stage names). ``role`` and
    ``loosens`` are the effective ones (inherited from the enclosing block); ``own`` is the
    annotation written on the field itself; ``readers`` every stage that reads it (itself or a
    block around it).
    """

    pattern: str
    read: str | None
    role: str
    loosens: str | tuple[Any, ...] | None
    own: dict[str, Any]
    readers: tuple[str, ...]
    container: bool
    schema: dict[str, Any]
    where: str  # the schema definition it is declared in ("" for the top-level properties)

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages that read this part whole (its own annotation)."""
        return tuple(self.own.get("stages", ()))

    @property
    def description(self) -> str:
        return str(self.schema.get("description", ""))


@dataclass(frozen=True)
class Annotations:
    """What the schema's annotations say, in the forms the amendment diff and the stage
    fingerprints read (module docstring)."""

    fields: tuple[Field, ...]
    #: field patterns no decision depends on (descriptive and design-only fields and blocks)
    descriptive: tuple[str, ...]
    #: field pattern -> "up" / "down" / the values of an ordered choice, strictest first
    directions: dict[str, str | tuple[Any, ...]]
    #: stage -> the registered parts it reads (the job's wildcards in braces)
    reads: dict[str, tuple[str, ...]]
    #: parts a stage leaves out of its reads while they are absent
    newer: frozenset[str]
    #: stage -> the parts it leaves out of a block it reads (``skipped_by``)
    skips: dict[str, tuple[str, ...]]


@functools.cache
def annotations(version: int = SCHEMA_VERSION) -> Annotations:
    """The annotations of schema ``version`` (computed once a process)."""
    root = load_schema(version)
    fields: list[Field] = []
    _walk(root, root, _Place("", "", DECISION, None, (), ""), fields)
    descriptive: dict[str, None] = {}
    directions: dict[str, str | tuple[Any, ...]] = {}
    reads: dict[str, dict[str, None]] = {s: {} for s in STAGES}
    newer: set[str] = set()
    skips: dict[str, dict[str, None]] = {s: {} for s in STAGES}
    for f in fields:
        below = (f.pattern, f.pattern + ".*") if f.container else (f.pattern,)
        if f.own.get("role") in (DESCRIPTIVE, DESIGN_ONLY):
            descriptive.update(dict.fromkeys(below))
        if "loosens" in f.own:
            pattern = below[-1]
            rule = _rule(f.own["loosens"])
            if directions.setdefault(pattern, rule) != rule:
                raise ValueError(
                    f"{ANNOTATION}: {pattern} loosens both {directions[pattern]} and {rule}"
                )
        for stage in f.stages:
            if f.read is None:
                raise ValueError(
                    f"{ANNOTATION}: {f.pattern} is read by {stage}, but an entry "
                    "above it names no 'entry'"
                )
            reads[stage][f.read] = None
        if f.own.get("read_when_absent") is False and f.read is not None:
            newer.add(f.read)
        for stage in f.own.get("skipped_by", ()):
            if f.read is not None:
                skips[stage][f.read] = None
    return Annotations(
        tuple(fields),
        tuple(descriptive),
        directions,
        {s: tuple(parts) for s, parts in reads.items()},
        frozenset(newer),
        {s: tuple(parts) for s, parts in skips.items() if parts},
    )


def _rule(loosens: Any) -> str | tuple[Any, ...]:
    return tuple(loosens) if isinstance(loosens, list) else str(loosens)


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``node`` with its ``$ref`` followed (the referring node's keywords win), and the name of
    the definition it is declared in ("" when it has no reference)."""
    ref = node.get("$ref")
    if not ref:
        return node, ""
    name = ref.rsplit("/", 1)[-1]
    target, _ = _resolve(root["$defs"][name], root)
    merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    merged[ANNOTATION] = {**target.get(ANNOTATION, {}), **node.get(ANNOTATION, {})}
    return merged, name


def _branches(
    node: dict[str, Any], root: dict[str, Any], where: str
) -> list[tuple[dict[str, Any], str]]:
    """``node`` and the sub-schemas it holds under conditions (``allOf``'s ``then``/``else``,
    ``oneOf``, ``anyOf``), each with the definition it is declared in: the fields of each branch
    are fields of the node."""
    out = [(node, where)]
    clauses = [
        (c.get(part), _kind(c.get("if"), where))
        for c in node.get("allOf", [])
        for part in ("then", "else")
    ]
    clauses += [(c, where) for c in (*node.get("oneOf", []), *node.get("anyOf", []))]
    for clause, label in clauses:
        if isinstance(clause, dict):
            sub, defined = _resolve(clause, root)
            out.extend(_branches(sub, root, defined or label))
    return out


def _kind(condition: Any, where: str) -> str:
    """``<where>_<kind>`` for a branch taken when ``kind`` is one value (``scorer_judge``)."""
    kind = ((condition or {}).get("properties") or {}).get("kind") or {}
    return f"{where}_{kind['const']}" if where and "const" in kind else where


@dataclass(frozen=True)
class _Place:
    """Where the walk is: the field's names and what it inherits from its enclosing blocks."""

    pattern: str
    read: str | None
    role: str
    loosens: Any
    readers: tuple[str, ...]
    where: str


def _walk(node: dict[str, Any], root: dict[str, Any], at: _Place, out: list[Field]) -> None:
    for branch, defined in _branches(node, root, at.where):
        for key, sub in (branch.get("properties") or {}).items():
            path = f"{at.pattern}.{key}" if at.pattern else key
            read = f"{at.read}.{key}" if at.read else None if at.pattern else key
            _child(sub, root, replace(at, pattern=path, read=read, where=defined), out)
        for child, step in (("additionalProperties", ".*"), ("items", "[*]")):
            sub = branch.get(child)
            if isinstance(sub, dict) and at.pattern:
                entry = _resolve(sub, root)[0].get(ANNOTATION, {}).get("entry")
                read = f"{at.read}{entry}" if at.read and entry else None
                place = replace(at, pattern=at.pattern + step, read=read, where=defined)
                _child(sub, root, place, out)


def _child(sub: Any, root: dict[str, Any], at: _Place, out: list[Field]) -> None:
    if not isinstance(sub, dict):
        return
    node, defined = _resolve(sub, root)
    own = dict(node.get(ANNOTATION, {}))
    unknown = set(own) - _KEYS
    if unknown or own.get("role", DECISION) not in ROLES:
        raise ValueError(f"{ANNOTATION} of {at.pattern}: unknown {sorted(unknown) or own['role']}")
    bad = [s for s in (*own.get("stages", ()), *own.get("skipped_by", ())) if s not in STAGES]
    if bad:
        raise ValueError(f"{ANNOTATION} of {at.pattern}: unknown stage(s) {bad}")
    at = replace(
        at,
        role=own.get("role", at.role),
        loosens=_rule(own["loosens"]) if "loosens" in own else at.loosens,
        readers=tuple(
            s
            for s in at.readers + tuple(s for s in own.get("stages", ()) if s not in at.readers)
            if s not in own.get("skipped_by", ())
        ),
        where=defined or at.where,
    )
    container = any(
        isinstance(b.get(k), dict)
        for b, _ in _branches(node, root, at.where)
        for k in ("properties", "additionalProperties", "items")
    )
    out.append(
        Field(at.pattern, at.read, at.role, at.loosens, own, at.readers, container, node, at.where)
    )
    _walk(node, root, at, out)
