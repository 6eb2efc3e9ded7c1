"""The ``import`` backend: bring your own completions and/or scores (JSONL, CSV or Parquet).

Registration (``data.import``)::

    data:
      backend: import
      import:
        path: data/my_completions.jsonl
        format: null            # jsonl | csv | parquet; null: by suffix
                                # (.jsonl/.ndjson, .csv, .parquet/.pq)
        columns:                # registered name -> column in the file
          prompt_id: id         # required: non-negative integer, unique within a condition
          condition: model      # required when more than one condition is registered
          prompt: prompt        # optional text
          completion: text      # completion and/or score must be mapped
          score: toxicity       # or a mapping {registered score column: file column}

Scores are written under the column name of the registered ``kind: column`` scorer
(``scorers[].column``), so the ``column`` scorer reads them unchanged. Bounded scorers
(``bounded: true``) must have scores in [0, 1].

Every row is checked before anything is written; a bad file raises
:class:`tailgate.generate.DataInputError` whose message lists each bad row with the file, row
number (1-based data rows; for JSONL the line number), column, what is wrong and how to fix it.
Rows of one condition are sorted by ``prompt_id``; if there are more rows than the registered
``prompts`` (default ``sample_cap``), the ones with the smallest ids are kept. Shard ``k`` holds
the sorted positions ``p % shards == k`` (:func:`tailgate.generate.shards.shard_indices`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.atomic import write_parquet

from . import DataInputError, condition_spec, shard_count
from .shards import shard_indices

__all__ = [
    "FORMATS",
    "ImportSpec",
    "generate_shard",
    "import_spec",
    "imported_table",
    "read_rows",
]

FORMATS = ("jsonl", "csv", "parquet")
_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
MAX_LISTED_ERRORS = 20


@dataclass(frozen=True)
class ImportSpec:
    """The validated ``data.import`` block.

    ``scores`` maps each output score column (a registered ``column`` scorer's column) to the
    file's column; ``bounded`` lists the output score columns that must lie in [0, 1].
    """

    path: Path
    format: str
    prompt_id: str
    condition: str | None
    prompt: str | None
    completion: str | None
    scores: tuple[tuple[str, str], ...]
    bounded: frozenset[str]


def _column_scorers(study: Any) -> list[dict[str, Any]]:
    return [s for s in study.data.get("scorers") or [] if s.get("kind") == "column"]


def import_spec(study: Any, *, base_dir: str | os.PathLike[str] | None = None) -> ImportSpec:
    """Validate ``data.import`` of ``study``; relative paths resolve against ``base_dir``."""
    block = (study.data.get("data") or {}).get("import") or {}
    where = "data.import"
    raw_path = block.get("path")
    if not isinstance(raw_path, str) or not raw_path:
        raise DataInputError(
            f"Field `{where}.path` of study {study.name!r} is missing. Fix: set it to the JSONL, "
            f"CSV or Parquet file holding the completions and/or scores."
        )
    path = Path(raw_path)
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    fmt = block.get("format") or _SUFFIXES.get(path.suffix.lower())
    if fmt not in FORMATS:
        raise DataInputError(
            f"Cannot tell the format of {path} (field `{where}.format` is "
            f"{block.get('format')!r} and the suffix {path.suffix!r} is not one of "
            f"{', '.join(sorted(_SUFFIXES))}). Fix: set `{where}.format` to one of "
            f"{', '.join(FORMATS)}."
        )
    columns = block.get("columns") or {}
    prompt_id = columns.get("prompt_id")
    if not isinstance(prompt_id, str):
        raise DataInputError(
            f"Field `{where}.columns.prompt_id` is missing. Fix: name the file column holding "
            f"each row's integer prompt id, e.g. `columns: {{prompt_id: id}}`."
        )
    n_conditions = len(study.data.get("conditions") or [])
    condition = columns.get("condition")
    if condition is None and n_conditions > 1:
        raise DataInputError(
            f"Field `{where}.columns.condition` is missing but {n_conditions} conditions are "
            f"registered. Fix: name the file column that says which condition each row belongs to."
        )
    scorers = _column_scorers(study)
    score_map = columns.get("score")
    pairs: list[tuple[str, str]] = []
    if isinstance(score_map, str):
        if len(scorers) != 1:
            raise DataInputError(
                f"Field `{where}.columns.score` is a single column, but {len(scorers)} scorers "
                f"of kind `column` are registered. Fix: register exactly one `kind: column` "
                f"scorer, or map each one: `score: {{<scorer column>: <file column>}}`."
            )
        pairs.append((str(scorers[0].get("column") or "score"), score_map))
    elif isinstance(score_map, dict):
        known = {str(s.get("column")) for s in scorers}
        for out, src in score_map.items():
            if out not in known:
                raise DataInputError(
                    f"Field `{where}.columns.score.{out}` names no registered `kind: column` "
                    f"scorer column (registered: {', '.join(sorted(known)) or 'none'}). Fix: "
                    f"register a column scorer with `column: {out}` or correct the key."
                )
            pairs.append((str(out), str(src)))
    elif score_map is not None:
        raise DataInputError(
            f"Field `{where}.columns.score` must be a column name or a mapping, got "
            f"{score_map!r}. Fix: e.g. `score: toxicity`."
        )
    completion = columns.get("completion")
    if completion is None and not pairs:
        raise DataInputError(
            f"Neither `{where}.columns.completion` nor `{where}.columns.score` is set, so there is "
            f"nothing to import. Fix: map the completion text column, the score column, or both."
        )
    bounded = frozenset(str(s.get("column")) for s in scorers if s.get("bounded", False))
    return ImportSpec(
        path=path,
        format=fmt,
        prompt_id=prompt_id,
        condition=condition,
        prompt=columns.get("prompt"),
        completion=completion,
        scores=tuple(pairs),
        bounded=bounded,
    )


def read_rows(spec: ImportSpec) -> tuple[list[dict[str, Any]], str]:
    """The file's rows as dicts plus the word used for row numbers in messages."""
    if not spec.path.is_file():
        raise DataInputError(
            f"Import file {spec.path} (field `data.import.path`) does not exist. Fix: correct the "
            f"path (relative paths are resolved against the repository root)."
        )
    if spec.format == "jsonl":
        rows: list[dict[str, Any]] = []
        problems: list[str] = []
        with spec.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    problems.append(f"line {number}: not valid JSON ({err.msg}); fix the line")
                    continue
                if not isinstance(record, dict):
                    problems.append(
                        f"line {number}: is not a JSON object; write one object per line"
                    )
                    continue
                record["__row__"] = number
                rows.append(record)
        if problems:
            _raise(spec, problems)
        return rows, "line"
    if spec.format == "csv":
        import pandas as pd

        frame = pd.read_csv(spec.path, dtype=str, keep_default_na=False)
    else:
        import pyarrow.parquet as pq

        frame = pq.read_table(spec.path).to_pandas()
    records = frame.to_dict(orient="records")
    for number, record in enumerate(records, start=1):
        record["__row__"] = number
    return records, "row"


def _raise(spec: ImportSpec, problems: list[str]) -> None:
    shown = problems[:MAX_LISTED_ERRORS]
    more = len(problems) - len(shown)
    tail = f"; and {more} more" if more > 0 else ""
    raise DataInputError(
        f"Import file {spec.path} ({spec.format}) has {len(problems)} bad "
        f"row{'s' if len(problems) != 1 else ''}: " + "; ".join(shown) + tail + ". Nothing was "
        "written. Fix the rows listed (or the column mapping in `data.import.columns`) and rerun."
    )


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return int(value) if math.isfinite(value) and float(value).is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        return int(text) if text.lstrip("-").isdigit() else None
    return None


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _check_rows(
    spec: ImportSpec, rows: list[dict[str, Any]], unit: str, conditions: list[str]
) -> list[dict[str, Any]]:
    """Validate every row; return clean rows with keys prompt_id, condition, prompt, completion
    and one key per output score column."""
    problems: list[str] = []
    clean: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], int] = {}
    if rows:
        present = set(rows[0]) if spec.format != "jsonl" else None
        needed = [spec.prompt_id, spec.condition, spec.prompt, spec.completion]
        needed += [src for _, src in spec.scores]
        missing = [c for c in needed if c is not None and present is not None and c not in present]
        if missing:
            have = ", ".join(sorted(map(str, present - {"__row__"})))
            raise DataInputError(
                f"Import file {spec.path} has no column {', '.join(map(repr, missing))} (mapped in "
                f"`data.import.columns`; the file has {have}). Fix: correct the mapping or the "
                f"file's header."
            )
    for record in rows:
        where = f"{unit} {record['__row__']}"
        bad = False

        def complain(column: str, what: str, fix: str, where: str = where) -> None:
            problems.append(f"{where}, column {column!r}: {what}; {fix}")

        pid = _as_int(record.get(spec.prompt_id))
        if pid is None or pid < 0:
            complain(
                spec.prompt_id,
                f"prompt id {record.get(spec.prompt_id)!r} is not a non-negative integer",
                "use integer ids such as 0, 1, 2",
            )
            bad = True
        if spec.condition is None:
            cond = conditions[0]
        else:
            cond = record.get(spec.condition)
            if cond not in conditions:
                complain(
                    spec.condition,
                    f"condition {cond!r} is not registered",
                    f"use one of {', '.join(conditions)} or register it",
                )
                bad = True
        out: dict[str, Any] = {"prompt_id": pid, "condition": cond}
        for key, column in (("prompt", spec.prompt), ("completion", spec.completion)):
            if column is None:
                out[key] = ""
                continue
            value = record.get(column)
            if not isinstance(value, str):
                complain(column, f"{key} is {value!r}, not text", "write the text (may be empty)")
                bad = True
            out[key] = value
        for out_col, src in spec.scores:
            score = _as_float(record.get(src))
            if score is None:
                complain(
                    src,
                    f"score {record.get(src)!r} is not a finite number",
                    "write a number (drop the row if it was never scored)",
                )
                bad = True
            elif out_col in spec.bounded and not 0.0 <= score <= 1.0:
                complain(
                    src,
                    f"score {score!r} lies outside [0, 1] but scorer column {out_col!r} is "
                    f"registered `bounded: true`",
                    "import probabilities, or register the scorer with `bounded: false`",
                )
                bad = True
            out[out_col] = score
        if not bad:
            key = (cond, pid)
            if key in seen:
                complain(
                    spec.prompt_id,
                    f"prompt id {pid} appears again for condition {cond!r} (first at "
                    f"{unit} {seen[key]})",
                    "keep one row per prompt and condition",
                )
                continue
            seen[key] = record["__row__"]
            clean.append(out)
    if problems:
        _raise(spec, problems)
    return clean


def imported_table(rows: list[dict[str, Any]], score_columns: list[str]) -> pa.Table:
    """Rows (already validated) in the shared generation-shard layout."""
    n = len(rows)
    columns: dict[str, pa.Array] = {
        "prompt_id": pa.array([r["prompt_id"] for r in rows], pa.int64()),
        "prompt": pa.array([r["prompt"] for r in rows], pa.string()),
        "completion": pa.array([r["completion"] for r in rows], pa.string()),
        "prompt_tokens": pa.array(np.zeros(n, np.int32), pa.int32()),
        "completion_tokens": pa.array(np.zeros(n, np.int32), pa.int32()),
        "finish_reason": pa.array(["imported"] * n, pa.string()),
    }
    for col in score_columns:
        columns[col] = pa.array([r[col] for r in rows], pa.float64())
    return pa.table(columns)


def generate_shard(
    study: Any,
    condition: str,
    shard: int,
    out_path: str | os.PathLike[str],
    *,
    options: dict[str, Any],
) -> None:
    """Validate the registered import file and write shard ``shard`` of ``condition``.

    ``options["base_dir"]`` (default: the current directory) resolves a relative import path.
    """
    cond_spec = condition_spec(study, condition)
    shards = shard_count(study)
    spec = import_spec(study, base_dir=options.get("base_dir"))
    names = [str(c.get("name")) for c in study.data.get("conditions") or []]
    records, unit = read_rows(spec)
    rows = _check_rows(spec, records, unit, names)
    mine = sorted((r for r in rows if r["condition"] == condition), key=lambda r: r["prompt_id"])
    cap = cond_spec.get("prompts", study.data.get("sample_cap"))
    if not (isinstance(cap, int) and not isinstance(cap, bool) and cap > 0):
        cap = None
    if not mine:
        raise DataInputError(
            f"Import file {spec.path} has no rows for condition {condition!r}. Fix: add its rows "
            f"(column {spec.condition!r}) or remove the condition from the pre-registration."
        )
    rows_of_shard = shard_indices(
        len(mine), shard=shard, shards=shards, count=cap, condition=condition, study=study.name
    )
    picked = [mine[i] for i in rows_of_shard]
    write_parquet(out_path, imported_table(picked, [out for out, _ in spec.scores]))
