"""Deviations from the registered plan, derived from the lock and the realised design.

Three sources, one list (``verdict.json``'s ``deviations``, shown first in the report, re-derived by
``tailgate audit``):

* **the run's mode** — an exploratory run (``--config exploratory=true``: the registration was
  not required to be committed, :mod:`tailgate.prereg.committed`) is not a confirmatory test;
* **amendments** — every amendment that changed a decision rule (every non-descriptive field,
  :mod:`tailgate.prereg.diff`) or a pinned input file. A registration is public from entry 0 on,
  so a change after it is a deviation whether or not data was found at the time: a researcher
  can look at results and delete them before amending, so "no data existed" is a claim the
  amendment records (``data_existed``, shown as information) and never a reason to pass a
  change as the registered plan. The changes are derived from the entries' snapshots and pins
  (:func:`tailgate.prereg.lock.amendment_changes`), never from the list an amendment carries.
  A registered text the report shows (:data:`SHOWN_TEXT`: the title and hypotheses) that an
  amendment changed once data existed is a deviation too, though no decision reads it: a
  reader meets it beside the answer;
* **the realised design** — what the data and statistics actually hold against what was
  registered: fewer rows per condition than registered prompts, or bootstrap sizes other than
  the registered ones (:func:`realised_design`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from tailgate.files.safe_read import require_regular
from tailgate.prereg.committed import EXPLORATORY, exploratory_deviation
from tailgate.prereg.lock import amendment_changes

__all__ = [
    "SHOWN_TEXT",
    "amendment_log",
    "design_deviations",
    "generated_rows",
    "realised_design",
    "run_deviations",
]


#: the descriptive fields the report shows (module docstring)
SHOWN_TEXT = ("title", "hypotheses")


def run_deviations(mode: str) -> list[dict[str, Any]]:
    """The run's own deviation: an exploratory run (:mod:`tailgate.prereg.committed`)."""
    return [exploratory_deviation()] if mode == EXPLORATORY else []


def amendment_log(lock: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The lock's amendments (report shape) and the deviations they make (module docstring)."""
    amendments, deviations = [], []
    chain = lock.chain if lock is not None else []
    for previous, e in pairwise(chain):
        changes = [c.to_json() for c in amendment_changes(previous, e)]
        decision = [c["field"] for c in changes if c.get("decision")]
        classes = sorted({"decision_rule" if c.get("decision") else "other" for c in changes})
        amendments.append(
            {
                "seq": int(e["seq"]),
                "time": str(e["time"]),
                "reason": str(e.get("reason", "")),
                "classes": classes,
                "fields": [{"path": c["field"], "old": c["old"], "new": c["new"]} for c in changes],
                "data_existed": bool(e.get("data_existed")),
                "entry_hash": str(e["entry_hash"]),
            }
        )
        if decision:
            loosening = [c["field"] for c in changes if c.get("class") == "loosening"]
            when = "data existed" if e.get("data_existed") else "no data was found"
            deviations.append(
                {
                    "what": f"decision rule(s) {', '.join(decision)} changed after registration "
                    f"(amendment {e['seq']}; {when} then)"
                    + (f" (loosening: {', '.join(loosening)})" if loosening else "")
                    + "; results are not confirmatory under the registered plan",
                    "amendment": int(e["seq"]),
                }
            )
        shown = [c["field"] for c in changes if c["field"].split(".")[0] in SHOWN_TEXT]
        if shown and e.get("data_existed"):
            deviations.append(
                {
                    "what": f"registered text the report shows ({', '.join(shown)}) changed "
                    f"after data existed (amendment {e['seq']}); the report shows it after "
                    "the answer",
                    "amendment": int(e["seq"]),
                }
            )
    return amendments, deviations


def realised_design(
    study: Any,
    fits: Iterable[Mapping[str, Any]],
    generated: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Rows, exceedances and bootstrap sizes the statistics were computed with, per scorer,
    scale and condition, beside the registered prompts and B (None, with no fits, when the
    study registers no protocol). ``generated``: rows per condition in the generation shards
    (:func:`generated_rows`), the realised design of every condition, fitted or not."""
    registered_b = study.bootstrap.resamples if study.has_protocol else None
    headline_q = study.thresholds.headline if study.has_protocol else -1.0
    rows: dict[str, dict[str, Any]] = {}
    for c in study.conditions():
        rows[c["name"]] = {"registered_prompts": int(c["prompts"]), "analysed": {}}
        if generated is not None:
            rows[c["name"]]["generated_rows"] = generated.get(c["name"])
    used_b: set[int] = set()
    for doc in fits:
        cond = rows.get(str(doc.get("condition")))
        if cond is None:
            continue
        at = next(
            (t for t in doc.get("thresholds", []) if abs(float(t["q"]) - headline_q) < 1e-9),
            None,
        )
        cond["analysed"][f"{doc['scorer']}/{doc['scale']}"] = {
            "rows": int(doc["n"]),
            "n_exc_headline": None if at is None else int(at["n_exc"]),
        }
        used_b.add(int(doc.get("bootstrap", {}).get("resamples", -1)))
    return {
        "conditions": rows,
        "bootstrap": {"registered": registered_b, "used": sorted(used_b)},
    }


def generated_rows(shards: Iterable[Any]) -> dict[str, int]:
    """Rows per condition in the generation shards ``generations/<condition>/shard-<k>.parquet``
    (from the Parquet footers: nothing but the metadata is read)."""
    out: dict[str, int] = {}
    for shard in shards:
        path = Path(shard)
        require_regular(path)  # a pipe at a shard's path is damage, never a wait
        out[path.parent.name] = (
            out.get(path.parent.name, 0) + pq.ParquetFile(path).metadata.num_rows
        )
    return dict(sorted(out.items()))


def design_deviations(realised: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Deviations of the realised design from the registered one (module docstring)."""
    out = []
    for name, c in realised["conditions"].items():
        registered = c["registered_prompts"]
        analysed = [a["rows"] for a in c["analysed"].values()]
        if c.get("generated_rows") is not None:
            analysed.append(int(c["generated_rows"]))
        if analysed and min(analysed) < registered:
            got = min(analysed)
            out.append(
                {
                    "what": f"condition {name}: {got:,} rows analysed, {registered:,} registered "
                    f"(shortfall {1 - got / registered:.1%}); the registered sample size and "
                    "the power it was chosen for were not realised",
                    "amendment": None,
                }
            )
    b = realised["bootstrap"]
    other = [x for x in b["used"] if x != b["registered"]]
    if other:
        out.append(
            {
                "what": f"bootstrap resamples used {other}, registered {b['registered']}",
                "amendment": None,
            }
        )
    return out
