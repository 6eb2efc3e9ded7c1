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

**Tasks and filters.** A study compares models on one task, and on one reading of their
answers. Output holding several tasks (lm-eval samples files, Inspect logs) is read for the
registered task only (``data.import.task``, ``tailgate init --task NAME``): one condition per
model, and each metric is taken over the samples of that task, which has it. An lm-eval task
scored through several filters (``filter_list``: the same answers read several ways) is read for
the registered filter only (``data.import.filter``, ``tailgate init --filter NAME``). Output of
several tasks, or of several filters, without one registered is refused, listing them with
their metrics and the command that chooses one.

**Rolling log-likelihoods.** An lm-eval ``loglikelihood_rolling`` task (perplexity of whole
documents, as wikitext) writes each document's ``word_perplexity``, ``byte_perplexity`` and
``bits_per_byte`` as ``[log-likelihood, words or bytes]``; the aggregates divide the summed
log-likelihoods by the summed counts. The document's log-likelihood, the first element, is
imported once, as the metric ``loglikelihood`` (higher is better: its bad tail is the low one).

**Conditions.** One per model and run; the epoch joins the name when a log has more than one
(Inspect), and ``run<k>`` (k-th by the run's date, then path) when one model and epoch occur in
several runs. Names are made of lower-case letters, digits, ``_`` and ``-`` and depend only on
the files' content and relative paths, which the lock pins; the import backend reads them again
at run time through this module.

**Directions.** Which tail of a metric holds the worse outcomes (the scorer's ``worse``) comes
from the harness where it records it (:attr:`HarnessTable.worse`): lm-eval writes
``higher_is_better`` for every metric of a task in ``results_<date>.json`` beside the samples
file, for the metric's *aggregate*; a per-sample value aggregated by lm-eval's ``perplexity``
(exp of minus the mean) is a log-likelihood, whose direction is the opposite of the aggregate's
(a higher log-likelihood is better, a higher perplexity worse). Inspect records a scorer's
metadata in the log: ``@scorer(metrics=..., worse="lower")`` or ``higher_is_better=True``;
a score given as Inspect's grade letters (C = correct is 1) is a correctness, higher is better.
Where the harness records nothing the direction is unknown (``None``), and ``tailgate init``
registers ``worse: null`` for the user to decide.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailgate.errors import InputError, install_fix

from .harness_groups import (
    Group,
    column,
    condition_names,
    metrics_of,
    number_text,
    numeric_metrics,
)

__all__ = [
    "FORMATS",
    "HarnessMissingError",
    "HarnessTable",
    "detect_format",
    "read_harness",
]

#: the import formats this module reads
FORMATS = ("lm-eval", "inspect")
EXTRA = "harness"  # the optional extra that installs the harnesses (errors.install_fix)
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
    #: metric column -> its bad tail (``higher`` or ``lower``; ``None``: the harness does not say)
    worse: dict[str, str | None] = field(default_factory=dict)
    #: metric column -> where its direction comes from (one line each, for ``tailgate init``)
    directions: dict[str, str] = field(default_factory=dict)
    #: the task read, when one was chosen among several
    task: str | None = None
    #: the lm-eval filter read, when one was chosen among several
    filter: str | None = None
    #: how metrics were read, one line each (e.g. a rolling log-likelihood), for ``tailgate init``
    notes: tuple[str, ...] = ()


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


def read_harness(
    path: Path,
    fmt: str,
    task: str | None = None,
    filter: str | None = None,
    *,
    init: str | None = None,
) -> HarnessTable:
    """Read harness output at ``path`` (a file or folder) in format ``fmt`` as import rows;
    ``task`` and ``filter``: the task and the lm-eval filter to read where the output holds
    several (module docstring); ``init``: the ``tailgate init`` command being run, which a
    refusal completes into the command that chooses (else the registration's fields are named).

    Raises :class:`tailgate.errors.InputError` (exit 2) naming the file and the fix for output
    that cannot be read or a task or filter that is missing or ambiguous, and
    :class:`HarnessMissingError` when Inspect is not installed.
    """
    if fmt == "lm-eval":
        groups, key = _lm_eval_groups(path), "doc_id"
    elif fmt == "inspect":
        groups, key = _inspect_groups(path), "id"
        if filter is not None:
            raise InputError(
                f"{path}: a filter (field `data.import.filter`, `tailgate init --filter`) "
                "selects how lm-eval read the answers; an Inspect log has none. Fix: leave it out."
            )
    else:  # pragma: no cover - the importer only dispatches these formats
        raise ValueError(fmt)
    groups = _one_of(path, groups, "task", task, init)
    groups = _one_of(path, groups, "filter", filter, init)
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
    names = condition_names(groups)
    metrics, skipped = numeric_metrics(groups)
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
                row[column(metric)] = sample["metrics"][metric]
            rows.append(row)
    worse, directions = _directions(groups, metrics)
    return HarnessTable(
        rows=rows,
        key=key,
        metrics=tuple(column(m) for m in metrics),
        skipped=tuple(skipped),
        sources={n: g.source for n, g in zip(names, groups, strict=True)},
        worse={column(m): w for m, w in worse.items()},
        directions={column(m): d for m, d in directions.items()},
        task=task,
        filter=filter,
        notes=tuple(dict.fromkeys(n for g in groups for n in g.notes)),
    )


def _listing(choices: dict[str, list[Group]]) -> str:
    return "; ".join(
        f"{name} (metrics {', '.join(metrics_of(gs)) or 'none'})" for name, gs in choices.items()
    )


def _one_of(
    path: Path, groups: list[Group], what: str, chosen: str | None, init: str | None
) -> list[Group]:
    """The groups of the registered task or filter (``what``); output of several without one
    registered, or without the one registered, is refused (module docstring)."""
    choices: dict[str, list[Group]] = {}  # each task (or filter) with its groups, first seen first
    for g in groups:
        choices.setdefault(g.task if what == "task" else g.filter, []).append(g)
    field_ = f"data.import.{what}"
    if chosen is not None:
        if chosen in choices:
            return choices[chosen]
        raise InputError(
            f"{path} holds no samples of {what} {chosen!r} (field `{field_}`, or `tailgate init "
            f"--{what}`). It holds: {_listing(choices)}. Fix: name one of these."
        )
    if len(choices) <= 1:
        return groups
    first = next(iter(choices))
    how = (
        f"run `{init} --{what} {shlex.quote(first)}`"
        if init is not None
        else f"register `{field_}: {first}`"
    )
    why = (
        "A study compares models on one task, and each metric belongs to its task"
        if what == "task"
        else "A study compares models, not the readings of one model's answers"
    )
    raise InputError(
        f"{path} holds the samples of {len(choices)} {what}s: {_listing(choices)}. {why}. Fix: "
        f"choose one ({how}, one study per {what})."
    )


def _directions(
    groups: list[Group], metrics: list[str]
) -> tuple[dict[str, str | None], dict[str, str]]:
    """Each kept metric's bad tail and where it comes from (module docstring, "Directions")."""
    worse: dict[str, str | None] = {}
    said: dict[str, str] = {}
    for name in metrics:
        known = {g.better[name] for g in groups if name in g.better}
        values = {b for b, _ in known}
        if len(values) == 1:
            better, where = sorted(known)[0]
            worse[name] = "lower" if better else "higher"
            said[name] = f"{where}: worse: {worse[name]}"
        else:
            worse[name] = None
            said[name] = (
                "the harness records no direction"
                if not values
                else "the harness records both directions in different runs"
            ) + ": worse: null (REVIEW: higher or lower)"
    return worse, said


# --- lm-evaluation-harness ------------------------------------------------------------------


def _samples_files(folder: Path) -> Iterable[Path]:
    return (p for p in folder.rglob("samples_*.jsonl") if p.is_file())


def _lm_eval_groups(path: Path) -> list[Group]:
    if path.is_dir():
        files = sorted(_samples_files(path))
        base = path
    else:
        files, base = [path], path.parent
    groups: list[Group] = []
    for file in files:
        match = _SAMPLES.match(file.name)
        task = match.group("task") if match else file.stem.removeprefix("samples_")
        date = match.group("date") if match else ""
        model = file.parent.name  # lm-eval names the folder after the model
        rel = file.relative_to(base).as_posix()
        by_filter: dict[str, Group] = {}
        for number, record in _json_lines(file):
            filt = str(record.get("filter", "none"))
            group = by_filter.get(filt)
            if group is None:
                group = by_filter[filt] = Group(model, task, (date, rel), str(file), filter=filt)
            group.samples.append(_lm_eval_sample(file, number, record))
        better = _lm_eval_better(file.parent, task)
        for group in by_filter.values():
            group.better = dict(better)
            rolled = sorted({m for s in group.samples for m in s["rolled"]})
            if rolled:
                group.better[LOGLIKELIHOOD] = (True, f"{file.name}: {_ROLLED_WHERE}")
                group.notes.append(
                    f"metrics {', '.join(map(repr, rolled))}: each sample's value is [the "
                    f"document's log-likelihood, its words or bytes]; imported once, as metric "
                    f"{LOGLIKELIHOOD!r}"
                )
            groups.append(group)
    return groups


#: the metric a rolling log-likelihood is imported as (module docstring)
LOGLIKELIHOOD = "loglikelihood"
#: lm-eval's per-document metrics of ``loglikelihood_rolling`` tasks: [log-likelihood, count]
_ROLLING = frozenset({"word_perplexity", "byte_perplexity", "bits_per_byte"})
_ROLLED_WHERE = (
    "loglikelihood_rolling: the document's log-likelihood, higher is better: worse: lower"
)


def _rolling(metrics: dict[str, Any]) -> list[str]:
    """Replace the rolling metrics of one sample by the document's log-likelihood (module
    docstring) in place; the names replaced. A metric that is not ``[number, count]`` stays."""
    rolled = []
    for name in sorted(_ROLLING & metrics.keys()):
        value = metrics[name]
        if isinstance(value, list) and len(value) == 2 and number_text(value[0]) is not None:
            loglik = number_text(value[0])
            if metrics.setdefault(LOGLIKELIHOOD, loglik) == loglik:
                del metrics[name]
                rolled.append(name)
    return rolled


#: lm-eval aggregations of per-sample log-likelihoods into a perplexity, exp(-mean): the
#: aggregate's higher_is_better is the opposite of the per-sample value's
_LOG_LIKELIHOOD_AGGREGATIONS = frozenset({"perplexity"})


def _lm_eval_better(folder: Path, task: str) -> dict[str, tuple[bool, str]]:
    """metric -> (a higher per-sample value is better, where that is recorded) for ``task``,
    from the ``results_<date>.json`` files lm-eval writes beside the samples (module docstring,
    "Directions"); unreadable or absent files record nothing."""
    out: dict[str, tuple[bool, str]] = {}
    for results in sorted(folder.glob("results_*.json")):
        try:
            if results.stat().st_size > 64 * 1024 * 1024 or not results.is_file():
                continue
            doc = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict):
            continue
        flags = (doc.get("higher_is_better") or {}).get(task)
        if not isinstance(flags, dict):
            continue
        config = (doc.get("configs") or {}).get(task) or {}
        aggregation = {
            str(m.get("metric")): str(m.get("aggregation", ""))
            for m in (config.get("metric_list") or [])
            if isinstance(m, dict)
        }
        for metric, flag in flags.items():
            if not isinstance(flag, bool):
                continue
            agg = aggregation.get(str(metric), str(metric))
            where = f"{results.name}: higher_is_better {str(flag).lower()}"
            if agg in _LOG_LIKELIHOOD_AGGREGATIONS:
                flag = not flag
                where += (
                    f" for the aggregate (aggregation {agg} = exp of minus the mean); each "
                    f"sample's value is a log-likelihood, higher is better"
                )
            out.setdefault(str(metric), (flag, where))
    return out


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
        scores = [number_text(r[0]) if isinstance(r, list) and r else None for r in resps]
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
        "rolled": _rolling(metrics),
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
            f"{install_fix(EXTRA)}."
        ) from None
    return read_eval_log, value_to_float()


def _inspect_groups(path: Path) -> list[Group]:
    read_eval_log, to_float = _inspect_reader()
    files = sorted(path.rglob("*.eval")) if path.is_dir() else [path]
    base = path if path.is_dir() else path.parent
    groups: list[Group] = []
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
        by_epoch: dict[int, Group] = {}
        for sample in log.samples or []:
            epoch = int(sample.epoch)
            group = by_epoch.get(epoch)
            if group is None:
                split = f"epoch {epoch}" if len(epochs) > 1 else ""
                group = Group(
                    str(spec.model), str(spec.task), (str(spec.created), rel), str(file), split
                )
                by_epoch[epoch] = group
            group.samples.append(_inspect_sample(file, sample, to_float))
        better = _inspect_better(log, file)
        for group in by_epoch.values():
            group.better = dict(better)
            for s in group.samples:
                for m in s["metrics"]:
                    owner = next((b for b in better if m.startswith(f"{b}_")), None)
                    if m not in group.better and owner is not None:  # an entry of a dict score
                        group.better[m] = better[owner]
                    elif m not in group.better and m in s["graded"]:
                        group.better[m] = (
                            True,
                            f"{file.name}: Inspect grade letters (C = correct = 1)",
                        )
        groups.extend(by_epoch[e] for e in sorted(by_epoch))
    return groups


def _inspect_better(log: Any, file: Path) -> dict[str, tuple[bool, str]]:
    """scorer -> (a higher value is better, where that is recorded), from the scorer metadata
    Inspect writes into the log (``@scorer(..., worse="lower")`` or ``higher_is_better=...``);
    a dictionary score's entries inherit their scorer's."""
    out: dict[str, tuple[bool, str]] = {}
    results = getattr(log, "results", None)
    for score in getattr(results, "scores", None) or []:
        meta = getattr(score, "metadata", None) or {}
        name = str(getattr(score, "name", ""))
        worse, flag = meta.get("worse"), meta.get("higher_is_better")
        if worse in ("higher", "lower"):
            out[name] = (worse == "lower", f"{file.name}: scorer metadata worse={worse!r}")
        elif isinstance(flag, bool):
            out[name] = (flag, f"{file.name}: scorer metadata higher_is_better={flag}")
    return out


_GRADES = frozenset({"C", "I", "P", "N"})


def _inspect_sample(file: Path, sample: Any, to_float: Callable[[Any], float]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    graded: list[str] = []
    for name, score in (sample.scores or {}).items():
        value = score.value
        if isinstance(value, dict):
            for key, item in value.items():
                metrics[f"{name}_{key}"] = item
        elif isinstance(value, str) and value in _GRADES:
            metrics[name] = to_float(value)
            graded.append(name)
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
        "graded": graded,
        "where": f"{file}, sample {sample.id!r} epoch {sample.epoch}",
    }
