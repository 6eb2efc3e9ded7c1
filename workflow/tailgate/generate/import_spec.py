"""The ``import`` backend's registration, ``data.import``, read and checked before any file is
opened (:func:`import_spec`): the file and its format (by ``format``, harness output, or the
suffix), the columns that hold the prompt key, the condition, the prompt and the completion, and
the file column every registered ``kind: column`` scorer is filled from (:class:`ScoreColumn`).
The backend itself, which reads and checks the file's rows, is :mod:`tailgate.generate.importer`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailgate.errors import DataInputError
from tailgate.generate.harness import FORMATS as HARNESS_FORMATS
from tailgate.generate.harness import detect_format

__all__ = [
    "FORMATS",
    "RESERVED_COLUMNS",
    "SUFFIXES",
    "ImportDataError",
    "ImportSpec",
    "ScoreColumn",
    "format_of",
    "import_spec",
]

FORMATS = ("jsonl", "csv", "parquet", *HARNESS_FORMATS)
#: the import format a file suffix names
SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".eval": "inspect",
}
#: Columns of the generations table that a score column may not replace.
RESERVED_COLUMNS = (
    "prompt_id",
    "prompt_key",
    "prompt",
    "completion",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
)
_TEXT_SCORERS = ("detoxify", "profanity", "token_nll", "regex", "judge")


class ImportDataError(DataInputError):
    """A bad ``data.import`` registration or import file (one paragraph; CLI exit code 2)."""


@dataclass(frozen=True)
class ScoreColumn:
    """One imported score: the registered ``column`` scorer ``scorer`` reads generations column
    ``column``, filled from the file's column ``source``."""

    scorer: str
    column: str
    source: str
    bounded: bool


@dataclass(frozen=True)
class ImportSpec:
    """The validated ``data.import`` block."""

    path: Path
    format: str
    prompt_id: str
    condition: str | None
    prompt: str | None
    completion: str | None
    scores: tuple[ScoreColumn, ...]
    task: str | None = None  # harness output: the task read where it holds several
    filter: str | None = None  # lm-eval: the filter read where a task has several

    @property
    def score_columns(self) -> list[str]:
        """The generations columns the import writes scores to (each once, registered order)."""
        return list(dict.fromkeys(s.column for s in self.scores))


def _column_scorers(study: Any) -> list[dict[str, Any]]:
    return [s for s in study.scorers() if s.get("kind") == "column"]


def import_spec(study: Any, *, base_dir: str | os.PathLike[str] | None = None) -> ImportSpec:
    """Validate ``data.import`` of ``study``; relative paths resolve against ``base_dir``."""
    block = study.source().get("import") or {}
    where = "data.import"
    raw_path = block.get("path")
    if not isinstance(raw_path, str) or not raw_path:
        raise ImportDataError(
            f"Field `{where}.path` of study {study.name!r} is missing. Fix: set it to the JSONL, "
            f"CSV or Parquet file holding the completions and/or scores."
        )
    path = Path(raw_path)
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    fmt = block.get("format") or format_of(path)
    if fmt not in FORMATS:
        raise ImportDataError(
            f"Cannot tell the format of {path} (field `{where}.format` is "
            f"{block.get('format')!r} and the suffix {path.suffix!r} is not one of "
            f"{', '.join(sorted(SUFFIXES))}, nor is it harness output). Fix: set "
            f"`{where}.format` to one of {', '.join(FORMATS)}."
        )
    columns = block.get("columns") or {}
    prompt_id = columns.get("prompt_id")
    if not isinstance(prompt_id, str):
        raise ImportDataError(
            f"Field `{where}.columns.prompt_id` is missing. Fix: name the file column holding "
            f"each row's prompt key (an integer or text id), e.g. `columns: {{prompt_id: id}}`."
        )
    n_conditions = len(study.conditions())
    condition = columns.get("condition")
    if condition is None and n_conditions > 1:
        raise ImportDataError(
            f"Field `{where}.columns.condition` is missing but {n_conditions} conditions are "
            f"registered. Fix: name the file column that says which condition each row belongs to."
        )
    completion = columns.get("completion")
    if completion is None and columns.get("score") is None:
        raise ImportDataError(
            f"Neither `{where}.columns.completion` nor `{where}.columns.score` is set, so there is "
            f"nothing to import. Fix: map the completion text column, the score column, or both."
        )
    scores = _score_columns(study, columns.get("score"), where)
    if completion is None:
        text = [s["name"] for s in study.scorers() if s.get("kind") in _TEXT_SCORERS]
        if text:
            raise ImportDataError(
                f"Scorer(s) {', '.join(map(repr, text))} read completions, but "
                f"`{where}.columns.completion` is null. Fix: map the file column holding the "
                f"completion text, or register only `kind: column` scorers."
            )
    return ImportSpec(
        path=path,
        format=fmt,
        prompt_id=prompt_id,
        condition=condition,
        prompt=columns.get("prompt"),
        completion=completion,
        scores=scores,
        task=block.get("task"),
        filter=block.get("filter"),
    )


def _score_columns(study: Any, score_map: Any, where: str) -> tuple[ScoreColumn, ...]:
    """The registered ``column`` scorers with the file column each one is filled from."""
    scorers = _column_scorers(study)
    names = [str(s.get("name")) for s in scorers]
    field_ = f"`{where}.columns.score`"

    def entry(sc: dict[str, Any], source: str) -> ScoreColumn:
        column = str(sc.get("column") or "score")
        if column in RESERVED_COLUMNS:
            raise ImportDataError(
                f"Scorer {sc.get('name')!r} (kind column) registers `column: {column}`, a column "
                f"the generations table already has. Fix: give the scorer another `column`, e.g. "
                f"`column: {sc.get('name')}`."
            )
        return ScoreColumn(str(sc.get("name")), column, str(source), bool(sc.get("bounded", True)))

    if score_map is None:
        if scorers:
            raise ImportDataError(
                f"{field_} is null, but scorer(s) {', '.join(map(repr, names))} of kind `column` "
                f"read imported scores. Fix: map them, e.g. `score: {{{names[0]}: <file column>}}`"
                f", or register other scorers."
            )
        return ()
    if isinstance(score_map, str):
        if len(scorers) != 1:
            raise ImportDataError(
                f"{field_} is a single column ({score_map!r}), but {len(scorers)} scorers of kind "
                f"`column` are registered. Fix: map each scorer by name, "
                f"`score: {{<scorer name>: <file column>}}`, or write `score: null` when no "
                f"scores are imported."
            )
        return (entry(scorers[0], score_map),)
    if not isinstance(score_map, dict) or not score_map:
        raise ImportDataError(
            f"{field_} must be a file column or a mapping {{<scorer name>: <file column>}}, got "
            f"{score_map!r}. Fix: e.g. `score: toxicity`."
        )
    by_name = {str(s.get("name")): s for s in scorers}
    out: list[ScoreColumn] = []
    for name, source in score_map.items():
        if name not in by_name:
            raise ImportDataError(
                f"{field_[:-1]}.{name}` names no registered scorer of kind `column` (registered: "
                f"{', '.join(names) or 'none'}). Fix: key the mapping by the scorer's `name`, or "
                f"register `{{name: {name}, kind: column, column: {name}}}`."
            )
        if not isinstance(source, str) or not source:
            raise ImportDataError(
                f"{field_[:-1]}.{name}` must name a file column, got {source!r}. Fix: write the "
                f"column's header, e.g. `{name}: {name}`."
            )
        out.append(entry(by_name[name], source))
    missing = [n for n in names if n not in score_map]
    if missing:
        raise ImportDataError(
            f"{field_} maps no file column to scorer(s) {', '.join(map(repr, missing))} of kind "
            f"`column`. Fix: add `{missing[0]}: <file column>` to the mapping."
        )
    seen: dict[str, ScoreColumn] = {}
    for s in out:
        other = seen.setdefault(s.column, s)
        if other.source != s.source:
            raise ImportDataError(
                f"Scorers {other.scorer!r} and {s.scorer!r} both register `column: {s.column}` "
                f"but {field_} fills them from different file columns ({other.source!r}, "
                f"{s.source!r}). Fix: give each scorer its own `column`."
            )
    return tuple(out)


def format_of(path: Path) -> str | None:
    """The import format of ``path``: harness output (:func:`tailgate.generate.harness.
    detect_format`: a samples folder or file of lm-evaluation-harness, an Inspect log), else by
    the file's suffix; ``None`` when neither tells."""
    return (detect_format(path) if path.exists() else None) or SUFFIXES.get(path.suffix.lower())
