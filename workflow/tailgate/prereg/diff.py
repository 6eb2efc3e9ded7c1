"""Field-level diff between two canonical pre-registrations, with the direction of each change.

Lists of named entries (``conditions``, ``scorers`` and each analysis's ``criteria``) are matched
by name, so a reordering is no change and an entry whose content is unchanged under a new name is
reported as *renamed*. A criterion is compared field by field (``statistic``, ``comparison``,
``threshold``, ``borderline``), and its threshold and comparison are classed by what they let
pass: a larger threshold under ``<``/``<=`` loosens, under ``>``/``>=`` tightens; a comparison
that accepts a superset of values (``<`` → ``<=``, ``==`` → ``>=``) loosens; a criterion removed
can no longer fail, so removing it loosens.

Classification is **fail-closed**: every field is a decision rule of the registered plan unless
the schema declares it ``descriptive`` (text that no stage reads, display-only resample counts)
or ``design-only`` (the sizes of the design's own simulations, e.g. the App. E power grid of Zhou
(2026)) in its ``x-registered`` annotation (:mod:`tailgate.prereg.fields`). A change of a
decision rule is classed **loosening** (a claim becomes easier to make), **tightening**, or
**unclassified** (no known direction: a new model, another threshold band, another seed…), by
the direction that loosens it, which the schema declares beside it (``loosens``: ``up`` or
``down`` for a number, the values of an ordered choice from strictest to loosest); a field
nobody annotated is therefore never silently harmless. Descriptive changes are classed
**descriptive**.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from typing import Any

from tailgate.prereg.fields import annotations

__all__ = ["Change", "diff", "format_changes", "is_decision", "is_number"]

LOOSENING, TIGHTENING, UNCLASSIFIED, DESCRIPTIVE = (
    "loosening",
    "tightening",
    "unclassified",
    "descriptive",
)


@dataclass(frozen=True)
class Change:
    """One changed field: ``field`` (dotted), old and new values (``None`` when absent), class."""

    field: str
    old: Any
    new: Any
    kind: str  # changed | added | removed | renamed
    direction: str  # loosening | tightening | unclassified | descriptive
    decision: bool  # a decision rule of the registered plan (every non-descriptive field)

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "old": self.old,
            "new": self.new,
            "kind": self.kind,
            "class": self.direction,
            "decision": self.decision,
        }

    def describe(self) -> str:
        tag = (self.direction + ", decision rule") if self.decision else "descriptive"
        if self.kind == "added":
            body = f"{self.field}: (absent) → {_show(self.new)}"
        elif self.kind == "removed":
            body = f"{self.field}: {_show(self.old)} → (removed)"
        elif self.kind == "renamed":
            body = f"{self.field}: renamed {self.old} → {self.new}"
        else:
            body = f"{self.field}: {_show(self.old)} → {_show(self.new)}"
        return f"{body}  [{tag}]"


def _show(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _plain(field: str) -> str:
    """``conditions[x].prompts`` → ``conditions[*].prompts`` (patterns name entries by ``*``)."""
    for key in ("conditions", "scorers"):
        if field.startswith(key + "["):
            close = field.find("]")
            return f"{key}[*]{field[close + 1 :]}" if close > 0 else field
    return field


def _glob(pattern: str) -> str:
    """A field pattern as an ``fnmatch`` pattern: its brackets are literal (``[*]`` names any
    entry of a list, which ``fnmatch`` would read as a character class matching ``*``)."""
    return pattern.replace("[", "[[]").replace("[[]*]", "[[]*[]]")


def _matches(field: str, patterns: Any) -> Any:
    plain = _plain(field)
    for pattern in patterns:
        glob = _glob(pattern)
        if fnmatch.fnmatchcase(field, glob) or fnmatch.fnmatchcase(plain, glob):
            return pattern
    return None


def is_decision(field: str) -> bool:
    """Whether ``field`` is a decision rule (fail-closed: unless the schema declares it
    descriptive or design-only)."""
    return _matches(field, annotations().descriptive) is None


def _classify(field: str, old: Any, new: Any, kind: str) -> Change:
    if not is_decision(field):
        return Change(field, old, new, kind, DESCRIPTIVE, False)
    cls = UNCLASSIFIED
    directions = annotations().directions
    pattern = _matches(field, directions)
    rule = directions[pattern] if pattern is not None else None
    if kind == "changed" and isinstance(rule, tuple) and old in rule and new in rule:
        cls = LOOSENING if rule.index(new) > rule.index(old) else TIGHTENING
    elif kind == "changed" and isinstance(rule, str):
        if is_number(old) and is_number(new) and old != new:
            cls = LOOSENING if (new > old) == (rule == "up") else TIGHTENING
        elif old is None and new is not None:  # e.g. accepted_power recorded
            cls = LOOSENING if rule == "down" else UNCLASSIFIED
        elif new is None and old is not None:
            cls = TIGHTENING if rule == "down" else UNCLASSIFIED
    elif kind in ("added", "removed") and isinstance(rule, str) and field == "accepted_power":
        cls = LOOSENING if kind == "added" else TIGHTENING
    return Change(field, old, new, kind, cls, True)


#: the orderings (of statistic against threshold) each comparison accepts
_ACCEPTS: dict[str, frozenset[str]] = {
    "<": frozenset({"lt"}),
    "<=": frozenset({"lt", "eq"}),
    "==": frozenset({"eq"}),
    ">=": frozenset({"gt", "eq"}),
    ">": frozenset({"gt"}),
}


def _criterion_class(part: str, old: Any, new: Any, old_c: dict, new_c: dict) -> str:
    """Direction of a change of one criterion's ``part`` (module docstring)."""
    if part == "comparison" and old in _ACCEPTS and new in _ACCEPTS:
        a, b = _ACCEPTS[old], _ACCEPTS[new]
        return LOOSENING if b > a else TIGHTENING if b < a else UNCLASSIFIED
    if part == "threshold" and is_number(old) and is_number(new) and old != new:
        sides = {_ACCEPTS.get(str(c.get("comparison")), frozenset()) for c in (old_c, new_c)}
        if all("lt" in s and "gt" not in s for s in sides):  # statistic below the threshold
            return LOOSENING if new > old else TIGHTENING
        if all("gt" in s and "lt" not in s for s in sides):
            return LOOSENING if new < old else TIGHTENING
    return UNCLASSIFIED


def _criteria(old: Any, new: Any, field: str, out: list[Change]) -> None:
    """One analysis's ``criteria`` compared criterion by criterion (module docstring)."""
    names_old = [c.get("name") for c in old] if _named_list(old) else None
    names_new = [c.get("name") for c in new] if _named_list(new) else None
    if names_old is None or names_new is None:
        out.append(_classify(field, old, new, "changed"))
        return
    before = {c["name"]: c for c in old}
    after = {c["name"]: c for c in new}
    for name in names_old:
        sub = f"{field}[{name}]"
        if name not in after:
            body = _body(before[name])
            twin = next((n for n in names_new if n not in before and _body(after[n]) == body), None)
            if twin is not None:
                out.append(Change(f"{sub}.name", name, twin, "renamed", UNCLASSIFIED, True))
            else:
                out.append(Change(sub, before[name], None, "removed", LOOSENING, True))
            continue
        o, n = before[name], after[name]
        for part in sorted(set(o) | set(n)):
            if o.get(part) == n.get(part) and type(o.get(part)) is type(n.get(part)):
                continue
            kind = "added" if part not in o else "removed" if part not in n else "changed"
            cls = _criterion_class(part, o.get(part), n.get(part), o, n)
            out.append(Change(f"{sub}.{part}", o.get(part), n.get(part), kind, cls, True))
    renamed_to = {c.new for c in out if c.kind == "renamed" and c.field.startswith(field + "[")}
    for name in names_new:
        if name not in before and name not in renamed_to:
            out.append(Change(f"{field}[{name}]", None, after[name], "added", UNCLASSIFIED, True))


def _named_list(v: Any) -> bool:
    """A list of objects with unique names (criteria: else compared as one list)."""
    if not isinstance(v, list) or not all(isinstance(c, dict) and "name" in c for c in v):
        return False
    names = [c["name"] for c in v]
    return len(set(names)) == len(names)


def _body(e: dict) -> dict:
    return {k: v for k, v in e.items() if k != "name"}


def is_number(v: Any) -> bool:
    """An int or a float, not a bool."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Changes from canonical document ``old`` to ``new`` (empty when they are equal)."""
    out: list[Change] = []
    _walk(old, new, "", out)
    return out


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _walk(old: Any, new: Any, field: str, out: list[Change]) -> None:
    if old == new and type(old) is type(new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            sub = _join(field, key)
            if key not in new:
                out.append(_classify(sub, old[key], None, "removed"))
            elif key not in old:
                out.append(_classify(sub, None, new[key], "added"))
            elif field == "" and key in ("conditions", "scorers"):
                _named(old[key], new[key], key, out)
            elif key == "criteria" and field.startswith("analyses."):
                _criteria(old[key], new[key], sub, out)
            else:
                _walk(old[key], new[key], sub, out)
        return
    out.append(_classify(field, old, new, "changed"))


def _named(old: list[dict], new: list[dict], field: str, out: list[Change]) -> None:
    by_old = {e["name"]: e for e in old}
    by_new = {e["name"]: e for e in new}
    removed = [n for n in by_old if n not in by_new]
    added = [n for n in by_new if n not in by_old]

    for r in list(removed):
        match = next((a for a in added if _body(by_new[a]) == _body(by_old[r])), None)
        if match is not None:
            out.append(_classify(f"{field}[{r}].name", r, match, "renamed"))
            removed.remove(r)
            added.remove(match)
    for r in removed:
        out.append(_classify(f"{field}[{r}]", by_old[r], None, "removed"))
    for a in added:
        out.append(_classify(f"{field}[{a}]", None, by_new[a], "added"))
    for n in by_old:
        if n in by_new:
            _walk(by_old[n], by_new[n], f"{field}[{n}]", out)
    old_order = [e["name"] for e in old if e["name"] in by_new]
    new_order = [e["name"] for e in new if e["name"] in by_old]
    if old_order != new_order:
        # order of conditions can matter (pair orientation, headline scorer): a decision change
        out.append(_classify(f"{field}.order", old_order, new_order, "changed"))


def format_changes(changes: list[Change], indent: str = "  ") -> str:
    """One line per change, e.g. ``protocol.tolerances.mean: 0.1 → 0.2  [loosening, ...]``."""
    return "\n".join(indent + c.describe() for c in changes)
