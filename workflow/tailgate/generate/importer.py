"""The ``import`` backend: bring your own completions and/or scores (JSONL, CSV or Parquet).

Registration (``data.import``)::

    data:
      backend: import
      import:
        path: data/my_completions.csv
        format: null            # jsonl | csv | parquet | lm-eval | inspect; null: by suffix
                                # (.jsonl/.ndjson, .csv, .parquet/.pq) or harness output
        task: null              # harness output of several tasks: the task read
        filter: null            # lm-eval, a task scored through several filters: the one read
        columns:                # registered name -> column in the file
          prompt_id: id         # required: any stable key per prompt (integer or text)
          condition: model      # null only when a single condition is registered
          prompt: prompt        # optional text (absent: empty prompts)
          completion: text      # null when only scores are imported
          score: toxicity       # the single `kind: column` scorer's file column, or by name:
                                #   {<scorer name>: <file column>, ...}; null: no scores

**Prompt keys.** The pipeline numbers prompts with an integer ``prompt_id``. When every key in the
file is a non-negative integer (``7``, or ``"007"`` in a CSV), the key is the ``prompt_id``.
Otherwise every key is read as text (an integer key as its decimal digits, text exactly as
written) and ``prompt_id`` is the key's rank, from 0, in the sorted set of all keys in the file
(Unicode code-point order, every condition's rows together). The same key therefore gets the same
``prompt_id`` in every condition (paired resampling pairs them), the numbering depends only on the
file's bytes (which the lock pins), and the original key is kept in the ``prompt_key`` column of
the generations table. A missing, empty or non-integral numeric key is refused.

**Scores.** Each registered ``kind: column`` scorer reads its ``column`` of the generations table;
the import writes the mapped file column there. ``columns.score`` is either one file column (when
exactly one ``column`` scorer is registered) or a mapping keyed by the registered scorer *name*,
``{toxicity: tox_prob, severity: sev}``, which must map every ``column`` scorer. Bounded scorers
(``bounded: true``) must have scores in [0, 1].

Every row is checked before anything is written; a bad file raises :class:`ImportDataError` (a
:class:`tailgate.generate.DataInputError`, exit code 2) whose message lists each bad row with the
file, row number (1-based data rows; for JSONL the line number), column, what is wrong and how to
fix it. The same checks run in ``tailgate design`` (:func:`inspect_import`, through
:mod:`tailgate.authoring.importcheck`) before anything is frozen. A CSV or Parquet file is checked
column by column into a few arrays (:class:`ImportedRows`; every generation job reads the whole
file, and a Python dict per row took 2.6 GB at 10⁶ rows per condition); only a file with a row to
name, or with text keys, is read row by row, with the same rules. Rows of one condition are
sorted by ``prompt_id``; if there are more rows than the registered ``prompts`` (default
``sample_cap``), the ones with the smallest ids are kept. Shard ``k`` holds the sorted positions
``p % shards == k`` (:func:`tailgate.generate.shards.shard_indices`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tailgate.errors import InputError
from tailgate.files.atomic import write_parquet
from tailgate.prereg.study import project_root

from .harness import FORMATS as HARNESS_FORMATS
from .harness import read_harness
from .import_spec import (
    FORMATS,
    RESERVED_COLUMNS,
    ImportDataError,
    ImportSpec,
    ScoreColumn,
    format_of,
    import_spec,
)
from .shards import shard_indices
from .spec import condition_spec

__all__ = [
    "FORMATS",
    "RESERVED_COLUMNS",
    "ImportDataError",
    "ImportSpec",
    "ImportSummary",
    "ScoreColumn",
    "check_rows",
    "format_of",
    "generate_shard",
    "import_spec",
    "imported_table",
    "inspect_import",
    "read_rows",
]

MAX_LISTED_ERRORS = 20
_DIGITS = re.compile(r"^\s*[0-9]+\s*$")


@dataclass(frozen=True)
class ImportSummary:
    """What the import file holds, after every row passed the checks (:func:`inspect_import`).

    ``rows``: valid rows per registered condition (registered order); ``key_mode``: ``integer``
    (keys are the prompt ids) or ``text`` (ranks of the sorted keys); ``keys``: distinct keys;
    ``shared_keys``: keys present in every registered condition; ``score_range``: (min, max) per
    scorer name.
    """

    spec: ImportSpec
    rows: dict[str, int]
    key_mode: str
    keys: int
    shared_keys: int
    score_range: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class ImportedRows:
    """The checked rows of an import file by column, in the file's order: a few arrays, never a
    Python dict per row (held that way, a file of 10⁶ rows per condition took 2.6 GB in every
    generation job, each of which reads the whole file; 0.6 GB as arrays).

    ``prompt_key`` holds each key as the file wrote it where that was text, else None (the key
    is then the integer ``prompt_id`` itself); ``scores`` maps each generations score column to
    its values."""

    prompt_id: np.ndarray  # int64
    prompt_key: np.ndarray  # object: str or None
    condition: np.ndarray  # object: str
    prompt: np.ndarray  # object: str
    completion: np.ndarray  # object: str
    scores: dict[str, np.ndarray]  # float64

    def __len__(self) -> int:
        return int(self.prompt_id.size)

    def of(self, condition: str) -> np.ndarray:
        """A mask of the rows of ``condition``."""
        return self.condition == condition

    def key_texts(self, rows: np.ndarray) -> list[str]:
        """The keys of ``rows`` as text."""
        return [
            str(int(pid)) if key is None else key
            for pid, key in zip(self.prompt_id[rows], self.prompt_key[rows], strict=True)
        ]

    @classmethod
    def of_records(cls, clean: list[dict[str, Any]], score_columns: list[str]) -> ImportedRows:
        """The clean rows of :func:`check_rows`, by column."""

        def objects(values: list[Any]) -> np.ndarray:
            out = np.empty(len(values), dtype=object)
            out[:] = values
            return out

        return cls(
            np.array([r["prompt_id"] for r in clean], dtype=np.int64),
            objects([r["prompt_key"] for r in clean]),
            objects([r["condition"] for r in clean]),
            objects([r["prompt"] for r in clean]),
            objects([r["completion"] for r in clean]),
            {c: np.array([r[c] for r in clean], dtype=np.float64) for c in score_columns},
        )


def read_rows(spec: ImportSpec) -> tuple[list[dict[str, Any]], str]:
    """The file's rows as dicts plus the word used for row numbers in messages."""
    if spec.format in HARNESS_FORMATS:
        return _read_harness(spec)
    if not spec.path.is_file():
        raise ImportDataError(
            f"Import file {spec.path} (field `data.import.path`) does not exist. Fix: correct the "
            f"path (relative paths are resolved against the project root)."
        )
    try:
        return _read(spec)
    except ImportDataError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, pa.ArrowException) as exc:
        raise ImportDataError(
            f"Import file {spec.path} cannot be read as {spec.format} "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no detail'}). "
            f"Fix: check the file, or set `data.import.format` to its real format."
        ) from None


def _read_harness(spec: ImportSpec) -> tuple[list[dict[str, Any]], str]:
    """Harness output (:mod:`tailgate.generate.harness`) as rows numbered by sample."""
    if not spec.path.exists():
        raise ImportDataError(
            f"Import path {spec.path} (field `data.import.path`) does not exist. Fix: correct "
            f"the path (relative paths are resolved against the project root)."
        )
    try:
        table = read_harness(spec.path, spec.format, spec.task, spec.filter)
    except InputError as exc:
        raise ImportDataError(str(exc)) from None
    return [{**row, "__row__": i} for i, row in enumerate(table.rows, start=1)], "sample"


def _read(spec: ImportSpec) -> tuple[list[dict[str, Any]], str]:
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
    frame = _frame(spec)
    records = frame.to_dict(orient="records")
    for number, record in enumerate(records, start=1):
        record["__row__"] = number
    if not records:  # a header without rows still names its columns
        return [{"__columns__": [str(c) for c in frame.columns]}], "row"
    return records, "row"


#: rows converted to Python values at a time by the columnar check (bounded memory)
_CHUNK = 1 << 16


def _frame(spec: ImportSpec) -> Any:
    """A csv or parquet file as pandas reads it for :func:`read_rows`."""
    if spec.format == "csv":
        import pandas as pd

        return pd.read_csv(spec.path, dtype=str, keep_default_na=False)

    return pq.read_table(spec.path).to_pandas()


def _values(frame: Any, column: str) -> Any:
    """The values of ``column`` as :func:`read_rows`' records hold them (Python scalars), a
    chunk at a time."""
    series = frame[column]
    for start in range(0, len(series), _CHUNK):
        yield from series.iloc[start : start + _CHUNK].tolist()


def _check_columns(spec: ImportSpec, frame: Any, conditions: list[str]) -> ImportedRows | None:
    """The rows of a csv or parquet file checked column by column, with the same per-value
    rules as :func:`check_rows`, when every row is valid and every key a non-negative integer
    (the common case, and the large files); else None, and :func:`check_rows` names the
    problems row by row (or ranks text keys)."""
    n = len(frame)
    needed = [spec.prompt_id, spec.condition, spec.prompt, spec.completion]
    needed += [s.source for s in spec.scores]
    if n == 0 or any(c is not None and c not in frame.columns for c in needed):
        return None
    try:
        keys = _typed_keys(frame[spec.prompt_id].to_numpy())
        if keys is None:
            keys = _keys_by_value(frame, spec.prompt_id, n)
        if keys is None:
            return None
        prompt_id, prompt_key = keys
        if spec.condition is None:
            condition = np.full(n, conditions[0], dtype=object)
        else:
            condition = _texts(frame, spec.condition)
            if condition is None or not frame[spec.condition].isin(conditions).all():
                return None
        texts = []
        for column in (spec.prompt, spec.completion):
            text = np.full(n, "", dtype=object) if column is None else _texts(frame, column)
            if text is None:
                return None
            texts.append(text)
        scores: dict[str, np.ndarray] = {}
        for sc in spec.scores:
            values = _numbers(frame, sc.source, n)
            if values is None or (sc.bounded and not np.all((values >= 0.0) & (values <= 1.0))):
                return None
            scores[sc.column] = values
    except OverflowError:  # a key beyond 64 bits
        return None
    for name in conditions:  # one row per prompt and condition
        ids = prompt_id[condition == name]
        if distinct(ids).size != ids.size:
            return None
    return ImportedRows(prompt_id, prompt_key, condition, texts[0], texts[1], scores)


def _typed_keys(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Prompt ids of an integer column, or of a float column of whole numbers (the rules of
    :func:`_key`, for the whole column at once); None for any other column or a key below 0."""
    if values.dtype.kind in "iu":
        if values.size and (values.min() < 0 or values.max() > np.iinfo(np.int64).max):
            return None
    elif values.dtype.kind == "f":
        if not np.all(np.isfinite(values) & (values == np.floor(values)) & (values >= 0)):
            return None
        if values.size and values.max() >= 2.0**63:
            return None
    else:
        return None
    return values.astype(np.int64), np.full(values.size, None, dtype=object)


def _keys_by_value(frame: Any, column: str, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Prompt ids of a column of other values, checked one by one (:func:`_key`)."""
    prompt_id = np.empty(n, dtype=np.int64)
    prompt_key = np.empty(n, dtype=object)
    for i, value in enumerate(_values(frame, column)):
        key = _key(value)
        if key is None or key[0] is None or key[0] < 0:
            return None
        prompt_id[i] = key[0]
        prompt_key[i] = key[1] if isinstance(value, str) else None
    return prompt_id, prompt_key


def _texts(frame: Any, column: str) -> np.ndarray | None:
    """A column whose every value is text, as an object array; else None."""
    from pandas.api.types import infer_dtype

    series = frame[column]
    # pandas' text dtype reports "string" with missing values in it too
    if len(series) and (infer_dtype(series, skipna=False) != "string" or series.isna().any()):
        return None
    return series.to_numpy(dtype=object)


def _numbers(frame: Any, column: str, n: int) -> np.ndarray | None:
    """A score column as finite floats (the rules of :func:`_as_float`: a numeric column at
    once, any other value by value); None when a value is not a finite number."""
    values = frame[column].to_numpy()
    if values.dtype.kind in "iuf":
        values = values.astype(np.float64)
        return values if np.all(np.isfinite(values)) else None
    out = np.empty(n, dtype=np.float64)
    for i, value in enumerate(_values(frame, column)):
        number = _as_float(value)
        if number is None:
            return None
        out[i] = number
    return out


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of integer prompt ids by sorting (numpy's hashing path for int64 takes
    0.8 s at 10⁶ distinct values, the sort 16 ms)."""
    ordered = np.sort(values)
    if ordered.size == 0:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def checked_rows(spec: ImportSpec, conditions: list[str]) -> tuple[ImportedRows, str]:
    """Every row of the import file checked (:func:`check_rows`): the clean rows by column and
    the key mode. A csv or parquet file is checked column by column (:func:`_check_columns`)
    and read row by row only when that finds something to name."""
    if spec.format in ("csv", "parquet") and spec.path.is_file():
        try:
            frame = _frame(spec)
        except (OSError, UnicodeDecodeError, ValueError, pa.ArrowException):
            frame = None  # read_rows names the problem
        rows = None if frame is None else _check_columns(spec, frame, conditions)
        del frame
        if rows is not None:
            return rows, "integer"
    records, unit = read_rows(spec)
    clean, mode = check_rows(spec, records, unit, conditions)
    return ImportedRows.of_records(clean, spec.score_columns), mode


def file_columns(rows: list[dict[str, Any]]) -> list[str]:
    """The columns the file has (for JSONL: every key that occurs in some line)."""
    if rows and "__columns__" in rows[0]:
        return list(rows[0]["__columns__"])
    seen: dict[str, None] = {}
    for r in rows:
        for k in r:
            if k != "__row__":
                seen.setdefault(str(k), None)
    return list(seen)


def _raise(spec: ImportSpec, problems: list[str]) -> None:
    shown = problems[:MAX_LISTED_ERRORS]
    more = len(problems) - len(shown)
    tail = f"; and {more} more" if more > 0 else ""
    raise ImportDataError(
        f"Import file {spec.path} ({spec.format}) has {len(problems)} bad "
        f"row{'s' if len(problems) != 1 else ''}: " + "; ".join(shown) + tail + ". Nothing was "
        "written. Fix the rows listed (or the column mapping in `data.import.columns`) and rerun."
    )


def _key(value: Any) -> tuple[int | None, str] | None:
    """``(integer value or None, key text)`` of a prompt key; ``None`` when it is no key."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | np.integer):
        return int(value), str(int(value))
    if isinstance(value, float | np.floating):
        if math.isfinite(value) and float(value).is_integer():
            return int(value), str(int(value))
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        return (int(value) if _DIGITS.match(value) else None), value
    return None


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _rows_text(numbers: list[int], unit: str) -> str:
    shown = ", ".join(map(str, numbers[:3]))
    more = f" and {len(numbers) - 3} more" if len(numbers) > 3 else ""
    return f"{unit}{'s' if len(numbers) > 1 else ''} {shown}{more}"


def check_rows(
    spec: ImportSpec, rows: list[dict[str, Any]], unit: str, conditions: list[str]
) -> tuple[list[dict[str, Any]], str]:
    """Validate every row; return the clean rows and the key mode (``integer`` or ``text``).

    Each clean row has ``prompt_id`` (int), ``prompt_key`` (the key as text), ``condition``,
    ``prompt``, ``completion`` and one key per generations score column.
    """
    present = set(file_columns(rows))
    needed = [spec.prompt_id, spec.condition, spec.prompt, spec.completion]
    needed += [s.source for s in spec.scores]
    missing = list(dict.fromkeys(c for c in needed if c is not None and c not in present))
    if missing:
        have = ", ".join(sorted(present)) or "no columns"
        raise ImportDataError(
            f"Import file {spec.path} has no column {', '.join(map(repr, missing))} (mapped in "
            f"`data.import.columns`; the file has {have}). Fix: correct the mapping or the "
            f"file's header."
        )
    rows = [r for r in rows if "__columns__" not in r]
    problems: list[str] = []
    parsed: list[tuple[dict[str, Any], tuple[int | None, str]]] = []
    unknown: dict[Any, list[int]] = {}
    for record in rows:
        where = f"{unit} {record['__row__']}"
        before = len(problems)  # the row is clean when it adds none and its condition is known

        def complain(column: str, what: str, fix: str, where: str = where) -> None:
            problems.append(f"{where}, column {column!r}: {what}; {fix}")

        key = _key(record.get(spec.prompt_id))
        if key is None:
            complain(
                spec.prompt_id,
                f"prompt key {record.get(spec.prompt_id)!r} is missing or not a key",
                "give every row an integer or text id (whole numbers only)",
            )
        if spec.condition is None:
            cond = conditions[0]
        else:
            cond = record.get(spec.condition)
            if cond not in conditions:
                unknown.setdefault(cond if isinstance(cond, str) else repr(cond), []).append(
                    record["__row__"]
                )
        out: dict[str, Any] = {"condition": cond}
        for name, column in (("prompt", spec.prompt), ("completion", spec.completion)):
            if column is None:
                out[name] = ""
                continue
            value = record.get(column)
            if not isinstance(value, str):
                complain(column, f"{name} is {value!r}, not text", "write the text (may be empty)")
            out[name] = value
        for s in spec.scores:
            score = _as_float(record.get(s.source))
            if score is None:
                complain(
                    s.source,
                    f"score {record.get(s.source)!r} is not a finite number",
                    "write a number (drop the row if it was never scored)",
                )
            elif s.bounded and not 0.0 <= score <= 1.0:
                complain(
                    s.source,
                    f"score {score!r} lies outside [0, 1] but scorer {s.scorer!r} is registered "
                    f"`bounded: true`",
                    "import probabilities, or register the scorer with `bounded: false`",
                )
            out[s.column] = score
        if len(problems) == before and cond in conditions:
            assert key is not None
            out["__row__"] = record["__row__"]
            parsed.append((out, key))
    for cond, numbers in unknown.items():
        problems.append(
            f"{_rows_text(numbers, unit)}, column {spec.condition!r}: condition {cond!r} is not "
            f"registered; use one of {', '.join(conditions)} or register it"
        )
    integer = all(k[0] is not None and k[0] >= 0 for _, k in parsed)
    if integer:
        ids = [int(k[0]) for _, k in parsed]  # type: ignore[arg-type]
    else:
        rank = {text: i for i, text in enumerate(sorted({k[1] for _, k in parsed}))}
        ids = [rank[k[1]] for _, k in parsed]
    clean: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], int] = {}
    for (out, key), pid in zip(parsed, ids, strict=True):
        number = out.pop("__row__")
        first = seen.setdefault((out["condition"], pid), number)
        if first != number:
            problems.append(
                f"{unit} {number}, column {spec.prompt_id!r}: prompt key {key[1]!r} appears "
                f"again for condition {out['condition']!r} (first at {unit} {first}); keep one "
                f"row per prompt and condition"
            )
            continue
        clean.append({"prompt_id": pid, "prompt_key": key[1], **out})
    if problems:
        _raise(spec, problems)
    return clean, "integer" if integer else "text"


def inspect_import(
    study: Any, *, base_dir: str | os.PathLike[str] | None = None
) -> tuple[ImportSummary, ImportedRows]:
    """Read and check the registered import file (every row, every registered condition).

    The one check of an import file: the generation shards and ``tailgate design`` both call it.
    Raises :class:`ImportDataError` for a bad registration or file, and for a registered condition
    without rows. Returns the summary and the clean rows.
    """
    spec = import_spec(study, base_dir=base_dir)
    names = [str(c.get("name")) for c in study.conditions()]
    rows, mode = checked_rows(spec, names)
    ids = {n: distinct(rows.prompt_id[rows.of(n)]) for n in names}
    counts = {n: int(np.count_nonzero(rows.of(n))) for n in names}
    empty = [n for n in names if counts[n] == 0]
    if empty:
        where = f" (column {spec.condition!r})" if spec.condition else ""
        raise ImportDataError(
            f"Import file {spec.path} has no rows for registered condition(s) "
            f"{', '.join(map(repr, empty))}{where}. Fix: add their rows, or remove the "
            f"condition(s) from the pre-registration."
        )
    ranges = {}
    for s in spec.scores:
        values = rows.scores[s.column]
        ranges[s.scorer] = (float(values.min()), float(values.max()))
    shared = (
        functools.reduce(lambda a, b: np.intersect1d(a, b, assume_unique=True), ids.values())
        if ids
        else np.empty(0)
    )
    summary = ImportSummary(
        spec=spec,
        rows=counts,
        key_mode=mode,
        keys=int(distinct(rows.prompt_id).size),
        shared_keys=int(shared.size),
        score_range=ranges,
    )
    return summary, rows


def imported_table(rows: ImportedRows, picked: np.ndarray, score_columns: list[str]) -> pa.Table:
    """Rows ``picked`` (already validated) in the shared generation-shard layout, plus
    ``prompt_key``."""
    n = int(picked.size)
    columns: dict[str, pa.Array] = {
        "prompt_id": pa.array(rows.prompt_id[picked].tolist(), pa.int64()),
        "prompt": pa.array(rows.prompt[picked].tolist(), pa.string()),
        "completion": pa.array(rows.completion[picked].tolist(), pa.string()),
        "prompt_tokens": pa.array(np.zeros(n, np.int32), pa.int32()),
        "completion_tokens": pa.array(np.zeros(n, np.int32), pa.int32()),
        "finish_reason": pa.array(["imported"] * n, pa.string()),
        "prompt_key": pa.array(rows.key_texts(picked)),
    }
    for col in score_columns:
        columns[col] = pa.array(rows.scores[col][picked].tolist(), pa.float64())
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

    A relative import path resolves against the project root (the folder holding
    ``preregistrations/``), exactly as its pin does; no operational setting in ``options`` can
    point the job at another file.
    """
    cond_spec = condition_spec(study, condition)
    shards = study.shards
    summary, rows = inspect_import(study, base_dir=project_root(study.path))
    mine = np.flatnonzero(rows.of(condition))
    mine = mine[np.argsort(rows.prompt_id[mine], kind="stable")]  # one row per prompt id
    cap = cond_spec.get("prompts", study.sample_cap)
    if not (isinstance(cap, int) and not isinstance(cap, bool) and cap > 0):
        cap = None
    rows_of_shard = shard_indices(
        len(mine), shard=shard, shards=shards, count=cap, condition=condition, study=study.name
    )
    picked = mine[np.asarray(rows_of_shard, dtype=np.int64)]
    write_parquet(out_path, imported_table(rows, picked, summary.spec.score_columns))
