"""The study's registered answer: which outcome the run summary, ``verdict.json`` and the report
lead with.

A study registers the tail-shape protocol of Zhou (2026) (``protocol``, present unless
``protocol.enabled: false``), further analyses (``analyses``), or both. Its answer is named by
the top-level ``answer`` list: ``H1`` (the protocol's H1 verdict), an analysis name (every
criterion of that analysis) or ``<analysis>.<criterion>``. Absent, it is derived from what is
registered: ``[H1]`` when the protocol is registered, else every analysis criterion. The answer
is PASS when every criterion it names is PASS; anything else (FAIL, BORDERLINE, NOT_TESTED, H1
KILL) makes it FAIL, as every criterion fails closed (:mod:`tailgate.analyses.criteria`).

Neither field has a schema default, so a study written before they existed keeps its canonical
hash and means what it meant: the protocol, answered by H1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tailgate.prereg.schema import apply_defaults

__all__ = [
    "H1",
    "answer_document",
    "answer_problems",
    "answer_rows",
    "protocol_registered",
    "protocol_settings",
    "registered_answer",
]

#: the protocol's H1 verdict, as an answer item and as the ``name`` of its criteria row
H1 = "H1"
#: the ``analysis`` of the H1 row of the criteria table (tailgate.stages.analyses.h1_row)
PROTOCOL = "protocol"


def protocol_registered(data: Mapping[str, Any]) -> bool:
    """Whether the canonical document registers the tail-shape protocol (absent: it does)."""
    return (data.get("protocol") or {}).get("enabled", True) is not False


def protocol_settings(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The protocol block, or the schema's protocol defaults when the study registers no
    protocol (its block is then only ``enabled: false``): the study-wide defaults an analysis
    falls back on for an absent parameter (α, the TVaR level, the resampling scheme, the
    headline scale), documented with each kind."""
    if protocol_registered(data):
        return data["protocol"]

    return apply_defaults({"protocol": {}})["protocol"]


def registered_answer(data: Mapping[str, Any]) -> tuple[list[str], bool]:
    """The answer's items and whether they were registered (False: derived from what is
    registered, as the module docstring says)."""
    if data.get("answer"):
        return [str(a) for a in data["answer"]], True
    if protocol_registered(data):
        return [H1], False
    return sorted(data.get("analyses", {})), False


def answer_problems(data: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str, str]]:
    """(path, message, fix) for every answer item that names nothing registered, and for a
    study that registers neither the protocol nor an analysis criterion (it has no answer)."""
    analyses = data.get("analyses", {})
    out: list[tuple[tuple[str | int, ...], str, str]] = []
    has_protocol = protocol_registered(data)
    if not has_protocol and not any(a.get("criteria") for a in analyses.values()):
        out.append(
            (
                ("protocol", "enabled"),
                "the study registers no protocol and no analysis criterion, so it has no answer",
                "register the protocol (remove 'enabled: false') or an analysis with criteria",
            )
        )
    for i, item in enumerate(data.get("answer") or []):
        name, _, criterion = str(item).partition(".")
        where: tuple[str | int, ...] = ("answer", i)
        if item == H1:
            if not has_protocol:
                out.append(
                    (
                        where,
                        "answer names H1, but the protocol is not registered "
                        "(protocol.enabled: false)",
                        "name analysis criteria, or register the protocol",
                    )
                )
        elif name not in analyses:
            out.append(
                (
                    where,
                    f"answer names '{item}', but no analysis '{name}' is registered",
                    "use H1, a registered analysis name or '<analysis>.<criterion>' (registered: "
                    f"{', '.join(sorted(analyses)) or 'none'})",
                )
            )
        elif criterion and criterion not in [c["name"] for c in analyses[name].get("criteria", [])]:
            names = [c["name"] for c in analyses[name].get("criteria", [])]
            out.append(
                (
                    where,
                    f"answer names '{item}', but analysis '{name}' has no criterion '{criterion}'",
                    f"use one of its criteria: {', '.join(names) or 'none registered'}",
                )
            )
        elif not criterion and not analyses[name].get("criteria"):
            out.append(
                (
                    where,
                    f"answer names analysis '{name}', which registers no criteria",
                    "register criteria for it or name another analysis",
                )
            )
    return out


def answer_rows(items: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The criteria rows (``verdict.json``'s ``criteria``) the answer's ``items`` name, in the
    order of the items."""
    out: list[dict[str, Any]] = []
    for item in items:
        name, _, criterion = item.partition(".")
        for r in rows:
            if item == H1:
                hit = r.get("analysis") == PROTOCOL and r.get("name") == H1
            else:
                hit = r.get("analysis") == name and (not criterion or r.get("name") == criterion)
            if hit and r not in out:
                out.append(dict(r))
    return out


def answer_document(data: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``verdict.json``'s ``answer``: the registered items, the rows they name, the outcome
    (PASS iff every row is PASS) and a one-line summary."""
    items, registered = registered_answer(data)
    chosen = answer_rows(items, rows)
    passed = sum(r.get("outcome") == "PASS" for r in chosen)
    outcome = "PASS" if chosen and passed == len(chosen) else "FAIL"
    if [r.get("analysis") for r in chosen] == [PROTOCOL]:
        summary = f"H1 {chosen[0].get('value')}"
    else:
        summary = f"{passed} of {len(chosen)} criteria PASS"
    return {
        "items": items,
        "registered": registered,
        "outcome": outcome,
        "summary": summary,
        "criteria": chosen,
    }
