"""Per-sample scores from the evaluation harnesses researchers run, as import rows.

Two formats of the import backend (``data.import.format``) read a harness's own output:

* ``lm-eval``: the samples files lm-evaluation-harness writes with ``--log_samples``
  (``<output>/<model>/samples_<task>_<date>.jsonl``, one JSON object per document with
  ``doc_id``, ``arguments``, ``filtered_resps``, ``filter`` and one key per metric). The path is
  one samples file or a folder searched for them. The model is the folder the harness names
  after it (beside the file, lm-eval writes ``results_<date>.json`` into the same folder).
* ``inspect``: an Inspect eval log (``.eval`` or ``.json``), or a folder of ``.eval`` logs, read
  with Inspect's own reader (:func:`inspect_ai.log.read_eval_log`); each sample gives its id,
  epoch, input, output completion and one score per scorer.

Either becomes the same flat rows the JSONL/CSV import reads (:func:`read_harness`): ``condition``
(see below), the prompt key (``doc_id`` for lm-eval, ``id`` for Inspect), ``prompt``,
``response`` and one column per numeric metric. A metric becomes a column only when every
sample of every condition reports it as a finite number (``True``/``False`` as 1/0; Inspect's
grade letters C, I, P, N through Inspect's own :func:`inspect_ai.scorer.value_to_float`; a
numeric entry of a dictionary score as ``<scorer>_<key>``); every other metric is listed in
:attr:`HarnessTable.skipped` with the reason, and ``tailgate init`` prints the list.

**Conditions.** One per model and run; the task joins the name when the files hold more than one
task, the filter when a task has more than one (lm-eval), the epoch when a log has more than one
(Inspect), and ``run<k>`` (k-th by the run's date, then path) when one model, task, filter and
epoch occur in several runs. Names are made of lower-case letters, digits, ``_`` and ``-`` and
depend only on the files' content and relative paths, which the lock pins; the import backend
reads them again at run time through this module.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailgate.errors import InputError

__all__ = [
    "FORMATS",
    "HarnessMissingError",
    "HarnessTable",
    "detect_format",
    "read_harness",
]

#: the import formats this module reads
FORMATS = ("lm-eval", "inspect")
EXTRA = "harness"  # pip install 'tailgate[harness]'
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
#: lm-eval keys of a sample that are not metrics
_LM_EVAL_KEYS = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)
_ROW_COLUMNS = ("condition", "doc_id", "id", "prompt", "response")
_NAME_MAX = 64


class HarnessMissingError(InputError):
    """The optional package that reads a harness format is not installed (exit code 2)."""


@dataclass(frozen=True)
class HarnessTable:
    """Flat import rows read from harness output, with the metrics that were left out.

    ``rows``: one dict per sample (``condition``, ``key``'s column, ``prompt``, ``response`` and
    each kept metric); ``key``: the prompt-key column (``doc_id`` or ``id``); ``metrics``: the
    kept metric columns in first-seen order; ``skipped``: one line per metric left out, saying
    why; ``sources``: condition → where its samples came from.
    """

    rows: list[dict[str, Any]]
    key: str
    metrics: tuple[str, ...]
    skipped: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)


@dataclass
class _Group:
    """The samples of one condition before it is named."""

    model: str
    task: str
    run: tuple[str, str]  # (date, path): orders the runs of one model
    source: str
    split: str = ""  # the filter (lm-eval) or epoch (Inspect), when there are several
    samples: list[dict[str, Any]] = field(default_factory=list)


def detect_format(path: Path) -> str | None:
    """``lm-eval`` or ``inspect`` when ``path`` is harness output, else ``None``.

    A folder holding lm-eval samples files is ``lm-eval``, one holding ``.eval`` logs
    ``inspect``; a ``.eval`` file is ``inspect``; a ``.json`` file is ``inspect`` unless it is
    lm-eval's ``results_<date>.json``; a ``.jsonl`` file is ``lm-eval`` when its first object
    has lm-eval's sample keys (``doc_id``, ``filtered_resps``).
    """
    if path.is_dir():
        if any(_samples_files(path)):
            return "lm-eval"
        if any(path.rglob("*.eval")):
            return "inspect"
        return None
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if suffix == ".json":
        return None if path.name.startswith("results_") else "inspect"
    if suffix == ".jsonl" and path.is_file():
        try:
            with path.open(encoding="utf-8") as handle:
                first = next((line for line in handle if line.strip()), "")
            record = json.loads(first) if first else None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        if isinstance(record, dict) and {"doc_id", "filtered_resps"} <= record.keys():
            return "lm-eval"
    return None


def read_harness(path: Path, fmt: str) -> HarnessTable:
    """Read harness output at ``path`` (a file or folder) in format ``fmt`` as import rows.

    Raises :class:`tailgate.errors.InputError` (exit 2) naming the file and the fix for output
    that cannot be read, and :class:`HarnessMissingError` when Inspect is not installed.
    """
    if fmt == "lm-eval":
        groups, key = _lm_eval_groups(path), "doc_id"
    elif fmt == "inspect":
        groups, key = _inspect_groups(path), "id"
    else:  # pragma: no cover - the importer only dispatches these formats
        raise ValueError(fmt)
    if not groups or not any(g.samples for g in groups):
        raise InputError(
            f"{path} holds no {fmt} samples. Fix: "
            + (
                "run lm-evaluation-harness with --log_samples and import its samples_*.jsonl "
                "file or the folder holding it."
                if fmt == "lm-eval"
                else "import an Inspect log (.eval or .json) whose samples were kept."
            )
        )
    names = _condition_names(groups)
    metrics, skipped = _numeric_metrics(groups)
    rows: list[dict[str, Any]] = []
    for name, group in zip(names, groups, strict=True):
        for sample in group.samples:
            row = {
                "condition": name,
                key: sample["key"],
                "prompt": sample["prompt"],
                "response": sample["response"],
            }
            for metric in metrics:
                row[_column(metric)] = sample["metrics"][metric]
            rows.append(row)
    return HarnessTable(
        rows=rows,
        key=key,
        metrics=tuple(_column(m) for m in metrics),
        skipped=tuple(skipped),
        sources={n: g.source for n, g in zip(names, groups, strict=True)},
    )


# --- lm-evaluation-harness ------------------------------------------------------------------


def _samples_files(folder: Path) -> Iterable[Path]:
    return (p for p in folder.rglob("samples_*.jsonl") if p.is_file())


def _lm_eval_groups(path: Path) -> list[_Group]:
    if path.is_dir():
        files = sorted(_samples_files(path))
        base = path
    else:
        files, base = [path], path.parent
    groups: list[_Group] = []
    for file in files:
        match = _SAMPLES.match(file.name)
        task = match.group("task") if match else file.stem.removeprefix("samples_")
        date = match.group("date") if match else ""
        model = file.parent.name  # lm-eval names the folder after the model
        rel = file.relative_to(base).as_posix()
        by_filter: dict[str, _Group] = {}
        for number, record in _json_lines(file):
            filt = str(record.get("filter", "none"))
            group = by_filter.get(filt)
            if group is None:
                group = by_filter[filt] = _Group(model, task, (date, rel), str(file), filt)
            group.samples.append(_lm_eval_sample(file, number, record))
        several = len(by_filter) > 1
        for group in by_filter.values():
            group.split = f"filter {group.split}" if several else ""
            groups.append(group)
    return groups


def _json_lines(file: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"lm-eval samples file {file} cannot be read ({type(exc).__name__}). Fix: import "
            f"the samples_*.jsonl file lm-evaluation-harness wrote with --log_samples."
        ) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(
                f"lm-eval samples file {file}, line {number}: not valid JSON ({err.msg}). Fix: "
                f"restore the file lm-evaluation-harness wrote."
            ) from None
        if not isinstance(record, dict) or "doc_id" not in record:
            raise InputError(
                f"lm-eval samples file {file}, line {number}: not a sample (no field "
                f"`doc_id`). Fix: import the samples_*.jsonl files of --log_samples only."
            )
        yield number, record


def _arguments(record: dict[str, Any]) -> list[list[Any]]:
    """The request arguments of a sample as lists (``{"gen_args_0": {"arg_0": …}}`` in newer
    harness versions, a list of lists in older ones)."""
    args = record.get("arguments")
    if isinstance(args, dict):
        out = []
        for _, request in sorted(args.items(), key=lambda kv: _index(kv[0])):
            if isinstance(request, dict):
                out.append([v for _, v in sorted(request.items(), key=lambda kv: _index(kv[0]))])
            else:
                out.append([request])
        return out
    if isinstance(args, list):
        return [a if isinstance(a, list) else [a] for a in args]
    return []


def _index(name: str) -> int:
    digits = re.findall(r"\d+", str(name))
    return int(digits[-1]) if digits else 0


def _lm_eval_sample(file: Path, number: int, record: dict[str, Any]) -> dict[str, Any]:
    args = _arguments(record)
    prompt = str(args[0][0]) if args and args[0] else ""
    resps = record.get("filtered_resps")
    response: str
    if isinstance(resps, list) and resps and all(isinstance(r, str) for r in resps):
        response = resps[0]
    elif isinstance(resps, str):
        response = resps
    elif isinstance(resps, list) and len(resps) == len(args) and all(len(a) > 1 for a in args):
        # loglikelihood requests (the harness writes [log-likelihood, is-greedy] as text): the
        # continuation the model scores highest
        scores = [_number_text(r[0]) if isinstance(r, list) and r else None for r in resps]
        if all(x is not None for x in scores):
            best = max(range(len(scores)), key=lambda i: float(scores[i]))  # type: ignore[arg-type]
            response = str(args[best][1])
        else:
            response = json.dumps(resps, ensure_ascii=False)
    else:
        response = json.dumps(resps, ensure_ascii=False)
    metrics: dict[str, Any] = {}
    listed = record.get("metrics")
    names = (
        [str(m) for m in listed]
        if isinstance(listed, list)
        else [k for k in record if k not in _LM_EVAL_KEYS]
    )
    for name in names:
        metrics[name] = record.get(name)
    return {
        "key": record["doc_id"],
        "prompt": prompt,
        "response": response,
        "metrics": metrics,
        "where": f"{file}, line {number}",
    }


# --- Inspect --------------------------------------------------------------------------------


def _inspect_reader() -> tuple[Callable[..., Any], Callable[[Any], float]]:
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise HarnessMissingError(
            "Reading an Inspect log needs the inspect-ai package, which is not installed. Fix: "
            f"pip install 'tailgate[{EXTRA}]' (or pip install inspect-ai)."
        ) from None
    return read_eval_log, value_to_float()


def _inspect_groups(path: Path) -> list[_Group]:
    read_eval_log, to_float = _inspect_reader()
    files = sorted(path.rglob("*.eval")) if path.is_dir() else [path]
    base = path if path.is_dir() else path.parent
    groups: list[_Group] = []
    for file in files:
        try:
            log = read_eval_log(str(file))
        except Exception as exc:  # Inspect raises several types for a file it cannot read
            first = str(exc).splitlines()[0] if str(exc) else "no detail"
            raise InputError(
                f"Inspect log {file} cannot be read by inspect_ai.log.read_eval_log "
                f"({type(exc).__name__}: {first[:300]}). Fix: import the .eval or .json log "
                f"Inspect wrote, unchanged."
            ) from None
        spec = log.eval
        rel = file.relative_to(base).as_posix()
        epochs = sorted({int(s.epoch) for s in log.samples or []})
        by_epoch: dict[int, _Group] = {}
        for sample in log.samples or []:
            epoch = int(sample.epoch)
            group = by_epoch.get(epoch)
            if group is None:
                split = f"epoch {epoch}" if len(epochs) > 1 else ""
                group = _Group(
                    str(spec.model), str(spec.task), (str(spec.created), rel), str(file), split
                )
                by_epoch[epoch] = group
            group.samples.append(_inspect_sample(file, sample, to_float))
        groups.extend(by_epoch[e] for e in sorted(by_epoch))
    return groups


_GRADES = frozenset({"C", "I", "P", "N"})


def _inspect_sample(file: Path, sample: Any, to_float: Callable[[Any], float]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for name, score in (sample.scores or {}).items():
        value = score.value
        if isinstance(value, dict):
            for key, item in value.items():
                metrics[f"{name}_{key}"] = item
        elif isinstance(value, str) and value in _GRADES:
            metrics[name] = to_float(value)
        else:
            metrics[name] = value
    inp = sample.input
    if isinstance(inp, str):
        prompt = inp
    else:
        prompt = "\n".join(str(getattr(m, "text", m)) for m in inp)
    output = getattr(sample, "output", None)
    return {
        "key": sample.id,
        "prompt": prompt,
        "response": str(getattr(output, "completion", "") or ""),
        "metrics": metrics,
        "where": f"{file}, sample {sample.id!r} epoch {sample.epoch}",
    }


# --- shared ---------------------------------------------------------------------------------


def _number_text(value: Any) -> float | None:
    """A finite number, also written as text (``"-41.38"``); else ``None``."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    return _finite(value)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def _numeric_metrics(groups: list[_Group]) -> tuple[list[str], list[str]]:
    """Metrics that every sample reports as a finite number (first-seen order), converting them
    in place; the others, each with the reason it was left out."""
    seen: dict[str, None] = {}
    for g in groups:
        for s in g.samples:
            for name in s["metrics"]:
                seen.setdefault(name, None)
    kept: list[str] = []
    skipped: list[str] = []
    total = sum(len(g.samples) for g in groups)
    for name in seen:
        missing = non_numeric = 0
        example: tuple[str, Any] | None = None
        for g in groups:
            for s in g.samples:
                if name not in s["metrics"]:
                    missing += 1
                elif _finite(s["metrics"][name]) is None:
                    non_numeric += 1
                    example = example or (s["where"], s["metrics"][name])
        if non_numeric:
            where, value = example  # type: ignore[misc]
            shown = json.dumps(value, default=str)[:60]
            skipped.append(
                f"metric {name!r} skipped: not a finite number in {non_numeric} of {total} "
                f"samples (e.g. {shown} at {where})"
            )
        elif missing:
            skipped.append(
                f"metric {name!r} skipped: missing from {missing} of {total} samples (a column "
                f"scorer needs a score for every sample of every condition)"
            )
        else:
            kept.append(name)
    for g in groups:
        for s in g.samples:
            for name in kept:
                s["metrics"][name] = _finite(s["metrics"][name])
    return kept, skipped


def _column(metric: str) -> str:
    """The row column of a metric (never one of the rows' own columns)."""
    return f"score_{metric}" if metric in _ROW_COLUMNS else metric


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-_")


def _condition_names(groups: list[_Group]) -> list[str]:
    """Unique condition names (module docstring): model, then task, split and run as needed."""
    tasks = {g.task for g in groups}
    keyed: dict[tuple[str, str, str], list[_Group]] = {}
    for g in groups:
        keyed.setdefault((g.model, g.task, g.split), []).append(g)
    runs: dict[int, int] = {}
    for same in keyed.values():
        if len(same) > 1:
            dates = sorted({g.run for g in same})
            for g in same:
                runs[id(g)] = dates.index(g.run) + 1
    names: list[str] = []
    for g in groups:
        model = _slug(g.model.rsplit("__", 1)[-1].rsplit("/", 1)[-1]) or "model"
        parts = [model[-32:].strip("-_") or "model"]
        if len(tasks) > 1:
            parts.append(_slug(g.task)[:24])
        if g.split:
            parts.append(_slug(g.split)[:24])
        if id(g) in runs:
            parts.append(f"run{runs[id(g)]}")
        name = "-".join(p for p in parts if p)[:_NAME_MAX].strip("-_")
        if not name[:1].isalnum():
            name = f"m{name}"[:_NAME_MAX]
        names.append(name)
    counts: dict[str, int] = {}
    unique: list[str] = []
    for name in names:  # distinct models whose names slug alike
        counts[name] = counts.get(name, 0) + 1
        unique.append(name if names.count(name) == 1 else f"{name[:58]}-{counts[name]}")
    return unique
