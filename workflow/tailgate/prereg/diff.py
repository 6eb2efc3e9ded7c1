"""Field-level diff between two canonical pre-registrations, with the direction of each change.

Lists of named entries (``conditions``, ``scorers``) are matched by name, so a reordering is no
change and an entry whose content is unchanged under a new name is reported as *renamed*. Each
change of a decision parameter of the seed-000 protocol is classed as **loosening** (a claim
becomes easier to make), **tightening** or **neutral** (no direction, or not a decision rule).
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["DECISION_RULES", "Change", "diff", "format_changes"]

LOOSENING, TIGHTENING, NEUTRAL = "loosening", "tightening", "neutral"

# field pattern -> which direction of a numeric change loosens the protocol ("up" | "down"),
# or None for a decision parameter whose change has no direction.
DECISION_RULES: dict[str, str | None] = {
    "protocol.tolerances.*": "up",  # wider equivalence tolerance: G1/G2 pass more easily
    "protocol.delta_floor": "down",  # smaller floor: P2 passes more easily
    "protocol.alpha": "up",
    "protocol.power": "down",
    "accepted_power": "down",
    "protocol.min_exceedances": "down",  # smaller N*: G3 passes more easily
    "protocol.bootstrap.resamples": "down",  # fewer resamples: noisier CIs
    "protocol.bootstrap.level": "down",  # narrower CIs: P1 non-overlap more easily
    "protocol.stability.tolerance": "up",  # G5 passes more easily
    "protocol.stability.delta": "down",  # a narrower window varies less
    "protocol.stability.min_exceedances": "down",
    "protocol.gof.alpha": "down",  # G4 passes when p > α
    "protocol.multiplicity": None,
    "protocol.thresholds.*": None,
    "protocol.headline_scale": None,
    "protocol.pairs": None,
    "protocol.bootstrap.resampling": None,
    "protocol.stability.scan.*": None,
    "protocol.tvar_level": None,
    "protocol.xi_bar": None,
    "seed": None,
    "sample_cap": None,
    "conditions*": None,
    "scorers*": None,
    "transform.*": None,
    "data.*": None,
}


@dataclass(frozen=True)
class Change:
    """One changed field: ``field`` (dotted), old and new values (``None`` when absent), class."""

    field: str
    old: Any
    new: Any
    kind: str  # changed | added | removed | renamed
    direction: str  # loosening | tightening | neutral
    decision: bool  # a decision parameter of the registered protocol

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "old": self.old,
            "new": self.new,
            "kind": self.kind,
            "class": self.direction,
            "decision": self.decision,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Change:
        return cls(d["field"], d["old"], d["new"], d["kind"], d["class"], d["decision"])

    def describe(self) -> str:
        tag = self.direction + (", decision rule" if self.decision else "")
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


def _rule(field: str) -> tuple[bool, str | None]:
    plain = field.split("[")[0] if field.startswith(("conditions", "scorers")) else field
    for pattern, direction in DECISION_RULES.items():
        if fnmatch.fnmatchcase(field, pattern) or fnmatch.fnmatchcase(plain, pattern):
            return True, direction
    return False, None


def _classify(field: str, old: Any, new: Any, kind: str) -> Change:
    decision, direction = _rule(field)
    cls = NEUTRAL
    if direction and kind == "changed":
        if field == "protocol.multiplicity":
            pass
        elif _is_number(old) and _is_number(new) and old != new:
            up = new > old
            cls = LOOSENING if up == (direction == "up") else TIGHTENING
        elif field == "accepted_power" and old is None and new is not None:
            cls = LOOSENING
        elif field == "accepted_power" and new is None and old is not None:
            cls = TIGHTENING
    if field == "protocol.multiplicity" and kind == "changed":
        cls = LOOSENING if new == "none" else TIGHTENING
    return Change(field, old, new, kind, cls, decision)


def _is_number(v: Any) -> bool:
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
            else:
                _walk(old[key], new[key], sub, out)
        return
    out.append(_classify(field, old, new, "changed"))


def _named(old: list[dict], new: list[dict], field: str, out: list[Change]) -> None:
    by_old = {e["name"]: e for e in old}
    by_new = {e["name"]: e for e in new}
    removed = [n for n in by_old if n not in by_new]
    added = [n for n in by_new if n not in by_old]

    def body(e: dict) -> dict:
        return {k: v for k, v in e.items() if k != "name"}

    for r in list(removed):
        match = next((a for a in added if body(by_new[a]) == body(by_old[r])), None)
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
        # order of conditions can matter (e.g. pair orientation): report it, neutrally
        out.append(_classify(f"{field}.order", old_order, new_order, "changed"))


def format_changes(changes: list[Change], indent: str = "  ") -> str:
    """One line per change, e.g. ``protocol.tolerances.mean: 0.1 → 0.2  [loosening, ...]``."""
    return "\n".join(indent + c.describe() for c in changes)
