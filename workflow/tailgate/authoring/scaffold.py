"""``tailgate init``: a new pre-registration from the template (optionally from an import file).

Without a file, ``<dir>/<study>.yaml`` is ``preregistrations/template.yaml`` with the study's
name: every field written out with its default and a comment saying what it decides.

With ``--from-import FILE`` (JSONL, CSV, Parquet, or harness output: lm-eval samples, Inspect
logs) the same template is filled from the file:

* ``data``: ``backend: import``, the path relative to the project root (the folder above
  ``<dir>``), the format, and the columns guessed from the header: the prompt key
  (``prompt_id``, ``id``, ``key``, …), the condition (``condition``, ``model``, …), the prompt and
  the completion text (``completion``, ``text``, ``response``, …);
* ``conditions``: one per distinct value of the condition column (first-seen order), each with
  ``prompts`` = its rows in the file (a single condition ``imported`` when there is no condition
  column);
* ``scorers``: one ``kind: column`` scorer per other numeric column (``bounded: true`` when every
  value lies in [0, 1]), mapped by scorer name in ``columns.score`` (the single-column form for
  one scorer), with its bad tail ``worse`` where the harness records it (else ``worse: null``,
  which the user must decide); a ``profanity`` scorer of the completions when the file has no
  scores. Every column that is not registered is named with the reason (an empty or NaN cell, a
  text column, a constant column: no tail to compare);
* harness output: one condition per model of the task read (``--task`` where the output holds
  several, ``--filter`` where an lm-eval task was scored through several filters,
  :mod:`tailgate.generate.harness`); one condition alone is written with a note (the
  protocol has no pair to compare: design and freeze refuse it as written);
* ``sample_cap`` = the largest condition, and the Eq. 2 check of Zhou (2026)
  (:func:`tailgate.protocol.design.derived_design`): whether the smallest condition's rows give the
  n_exc* exceedances at the headline q that the registered Δfloor, α and power need. When they do
  not, ``accepted_power`` stays null with a note giving the simulated power of the registered
  procedure at 1.5 × Δfloor, the number it may record: init never accepts a lower power for the
  user, and design and freeze refuse the size until more rows are imported or the user writes it;
* ``generation.shards: 1`` (one job per condition reads the file).

The written file is loaded (schema, cross-field rules) and its import file checked by the import
backend itself (:func:`tailgate.generate.importer.inspect_import`) before it is written, atomically.
Refused (exit code 2, nothing written): an existing file or lock, a study name outside the
schema's pattern (also names that YAML or Snakemake's ``--config`` read as another type: ``nan``,
``true``, ``1e3``, ``null``), an unreadable or unusable import file.
"""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from tailgate.authoring.proposals import (
    g3_and_tie_notes,
    is_constant,
    load_text,
    numeric_values,
    propose_lattice,
    propose_tolerances,
)
from tailgate.errors import InputError
from tailgate.files.atomic import write_text
from tailgate.generate.harness import FORMATS as HARNESS
from tailgate.generate.harness import read_harness
from tailgate.generate.import_spec import SUFFIXES
from tailgate.prereg.schema import load_schema
from tailgate.protocol.design import (
    WHAT_A_SMALL_STUDY_LEARNS,
    cannot_pass,
    derived_design,
    operating_characteristics,
    power_line,
    with_procedure_power,
)

__all__ = ["Scaffold", "scaffold", "template_path"]

#: Header names (lower case) tried in this order for each registered column.
GUESSES: dict[str, tuple[str, ...]] = {
    "prompt_id": (
        "prompt_id",
        "id",
        "doc_id",
        "prompt_key",
        "key",
        "uid",
        "example_id",
        "item_id",
        "idx",
    ),
    "condition": ("condition", "model", "cond", "system", "arm", "variant", "group"),
    "prompt": ("prompt", "input", "question", "instruction"),
    "completion": ("completion", "text", "response", "output", "reply", "answer", "generation"),
}
COMMENT_COLUMN = 29  # the template's comments start here
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


@dataclass(frozen=True)
class Scaffold:
    """A written pre-registration and what the command should tell the user about it."""

    path: Path
    notes: tuple[str, ...]


def template_path() -> Path:
    """``preregistrations/template.yaml`` of the installed project."""
    return Path(__file__).resolve().parents[3] / "preregistrations" / "template.yaml"


def scaffold(
    study: str,
    *,
    from_import: str | None,
    directory: str,
    task: str | None = None,
    filter: str | None = None,
) -> Scaffold:
    """Write ``<directory>/<study>.yaml`` from the template (filled from ``from_import`` when
    given; ``task`` and ``filter``: the harness task and lm-eval filter to register where the
    output holds several); return its path and the notes to print. Raises :class:`InputError`
    (exit 2)."""
    _check_name(study)
    folder = Path(directory)
    target = folder / f"{study}.yaml"
    for existing in (target, folder / f"{study}.yml", folder / f"{study}.lock.json"):
        if existing.exists():
            raise InputError(
                f"tailgate init: {existing} already exists; init never overwrites a study. Fix: "
                f"choose another study name, or edit the existing file (after freezing, change "
                f"it only with 'tailgate amend')."
            )
    if not folder.is_dir():
        if folder.exists():
            raise InputError(f"tailgate init: {folder} is not a folder. Fix: pass --directory DIR.")
        folder.mkdir(parents=True)
    template = template_path().read_text(encoding="utf-8")
    text = _set(_study_header(template, study), "study", study)
    notes: list[str] = []
    if from_import is not None:
        init = f"tailgate init {study} --from-import {shlex.quote(from_import)}"
        for option, value in (("--directory", directory), ("--task", task), ("--filter", filter)):
            if value is not None and value != "preregistrations":
                init += f" {option} {shlex.quote(value)}"
        text, notes = _from_import(text, study, Path(from_import), folder, (task, filter), init)
    else:
        if task is not None or filter is not None:
            raise InputError(
                "tailgate init: --task and --filter select a task and a filter of "
                "--from-import harness output. Fix: add --from-import, or leave them out."
            )
        text = _set(text, "title", '""')
    load_text(text, study)  # the file as written must load
    write_text(target, text)
    return Scaffold(target, tuple(notes))


def _check_name(study: str) -> None:
    spec = load_schema()["properties"]["study"]
    if len(study) > spec["maxLength"] or not re.match(spec["pattern"], study):
        if _NAME.match(study) and len(study) <= spec["maxLength"]:
            why = "YAML or Snakemake's --config would read it as a number, boolean or null"
            fix = f"choose a word, e.g. 'study-{study}'"
        else:
            why = "a study name uses lower-case letters, digits, '_' and '-', starts with a letter "
            why += f"or digit and has at most {spec['maxLength']} characters"
            fix = "choose a name such as 'toxicity-2026'"
        raise InputError(f"tailgate init: invalid study name {study!r}: {why}. Fix: {fix}.")


def _study_header(template: str, study: str) -> str:
    """The template's header without its advice to copy the template (init did that)."""
    head, sep, body = template.partition("\nschema_version:")
    lines = [
        line
        for line in head.splitlines()
        if not line.startswith(("# Copy to ", "#   tailgate design ", "#   tailgate freeze "))
        and "writes this file for a new study" not in line
    ]
    lines[0] = f"# Pre-registration of study {study} (tailgate schema version 1)."
    return "\n".join(lines) + "\n" + sep + body


def _line(code: str, comment: str | None = None, *more: str) -> str:
    """``code`` with ``comment`` in the template's comment column, continued by the comment
    lines ``more`` below it."""
    if not comment:
        return code
    if len(code) >= COMMENT_COLUMN - 1:  # a long value: the comment goes on the next line
        code += "\n" + " " * COMMENT_COLUMN
    else:
        code = code.ljust(COMMENT_COLUMN - 1) + " "
    return code + "# " + comment + "".join(f"\n{' ' * COMMENT_COLUMN}#   {m}" for m in more)


def _set(text: str, key: str, value: str, comment: str | None = None) -> str:
    """Replace the value of the top-level ``key:`` line, keeping (or replacing) its comment."""
    pattern = re.compile(rf"^{re.escape(key)}:[^\n#]*(#[^\n]*)?$", re.MULTILINE)
    match = pattern.search(text)
    if match is None:  # pragma: no cover - the template is part of the package
        raise RuntimeError(f"the template has no top-level '{key}:' line")
    old = (match.group(1) or "#").lstrip("#").strip()
    new = _line(f"{key}: {value}", comment if comment is not None else old)
    return text[: match.start()] + new + text[match.end() :]


def _replace_block(text: str, first: str, last_exclusive: str, block: str) -> str:
    """Replace the lines from the one starting with ``first`` up to the one starting with
    ``last_exclusive`` (not included) by ``block``."""
    start = text.index("\n" + first) + 1
    end = text.index("\n" + last_exclusive, start) + 1
    return text[:start] + block + text[end:]


def _yaml_str(value: str) -> str:
    """A YAML scalar that reads back as the string ``value`` (plain when that is safe)."""
    if re.match(r"^[A-Za-z_][A-Za-z0-9_./-]*$", value) and yaml.safe_load(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


def _note_before(text: str, key: str, note: str) -> str:
    """``note`` as comment lines just above the top-level ``key:`` line."""
    match = re.search(rf"^{re.escape(key)}:", text, re.MULTILINE)
    assert match is not None
    block = "".join(f"# {line}\n" for line in textwrap.wrap(note, 94))
    return text[: match.start()] + block + text[match.start() :]


@dataclass
class _File:
    """What init reads from an import file: rows, columns, format, the word for row numbers,
    notes (for harness output: each condition's source and the metrics left out), each score
    column's bad tail where the harness records it, and the task and filter read."""

    rows: list[dict[str, Any]]
    columns: list[str]
    fmt: str
    unit: str
    notes: list[str]
    worse: dict[str, str | None]
    task: str | None = None
    filter: str | None = None


def _read_file(path: Path, chosen: tuple[str | None, str | None], init: str) -> _File:
    """The import file ``path`` as init reads it (:class:`_File`); ``chosen``: the harness task
    and filter (``--task``, ``--filter``); ``init``: the command being run, which a refusal
    completes."""
    task, filt = chosen
    from tailgate.generate.importer import ImportSpec, file_columns, format_of, read_rows

    fmt = format_of(path)
    if (fmt in HARNESS or not path.suffix) and not path.exists():
        raise InputError(
            f"tailgate init: the import path {path} does not exist. Fix: give the path of a "
            f"JSONL, CSV or Parquet file, or of harness output (lm-eval samples, Inspect logs)."
        )
    if fmt is None:
        raise InputError(
            f"tailgate init: cannot tell the format of {path} from its suffix {path.suffix!r}. "
            f"Fix: name it with one of {', '.join(sorted(SUFFIXES))}, or import the output of "
            f"lm-evaluation-harness (a samples_*.jsonl file or its folder) or an Inspect log."
        )
    if fmt in HARNESS:
        table = read_harness(path, fmt, task, filt, init=init)
        rows = [{**row, "__row__": i} for i, row in enumerate(table.rows, start=1)]
        columns = ["condition", table.key, "prompt", "response", *table.metrics]
        notes = [f"condition {name} <- {src}" for name, src in table.sources.items()]
        notes += list(table.notes) + list(table.skipped)
        notes += [f"metric {m!r}: {table.directions[m]}" for m in table.metrics]
        if not table.metrics:
            notes.append("no metric is a number for every sample: the completions are imported")
        return _File(rows, columns, fmt, "sample", notes, dict(table.worse), task, filt)
    if task is not None or filt is not None:
        raise InputError(
            f"tailgate init: --task and --filter select a task and a filter of harness output, "
            f"but {path} is a {fmt} file. Fix: leave them out."
        )
    if not path.is_file():
        raise InputError(
            f"tailgate init: the import file {path} does not exist or is not a file. Fix: give "
            f"the path of a JSONL, CSV or Parquet file."
        )
    spec = ImportSpec(path, fmt, "", None, None, None, ())
    rows, unit = read_rows(spec)
    columns = file_columns(rows)
    rows = [r for r in rows if "__columns__" not in r]
    if not rows:
        raise InputError(f"tailgate init: the import file {path} has no rows. Fix: add the data.")
    return _File(rows, columns, fmt, unit, [], {})


def _guess(columns: list[str], role: str, taken: set[str]) -> str | None:
    lower = {c.lower(): c for c in reversed(columns)}
    for name in GUESSES[role]:
        if name in lower and lower[name] not in taken:
            return lower[name]
    return None


def _scorer_name(column: str, used: set[str]) -> str:
    from tailgate.generate.importer import RESERVED_COLUMNS

    name = re.sub(r"[^a-z0-9_-]+", "_", column.lower()).strip("_-")[:64] or "score"
    if not name[0].isalnum():
        name = "s" + name
    if name in RESERVED_COLUMNS:
        name = f"score_{name}"[:64]
    base, k = name, 2
    while name in used:
        name = f"{base[:60]}-{k}"
        k += 1
    used.add(name)
    return name


def _from_import(
    text: str,
    study: str,
    source: Path,
    folder: Path,
    chosen: tuple[str | None, str | None],
    init: str,
) -> tuple[str, list[str]]:
    read = _read_file(source, chosen, init)
    rows, columns, fmt, unit, read_notes = read.rows, read.columns, read.fmt, read.unit, read.notes
    taken: set[str] = set()
    chosen: dict[str, str | None] = {}
    for role in ("prompt_id", "condition", "prompt", "completion"):
        chosen[role] = _guess(columns, role, taken)
        if chosen[role]:
            taken.add(str(chosen[role]))
    if chosen["prompt_id"] is None:
        raise InputError(
            f"tailgate init: cannot tell which column of {source} holds the prompt keys (looked "
            f"for {', '.join(GUESSES['prompt_id'])}; the file has {', '.join(columns)}). Fix: "
            f"name that column 'prompt_id' or 'id' (integer or text keys)."
        )
    scores: list[tuple[str, str, bool, str | None]] = []  # (name, column, bounded, worse)
    used: set[str] = set()
    dropped: list[str] = []
    for column in columns:
        if column in taken:
            continue
        values, why = numeric_values(rows, column, unit)
        if why:
            dropped.append(f"column {column!r} skipped: {why}")
        elif is_constant(values):
            dropped.append(
                f"column {column!r} skipped: constant (every {unit} is {values[0]:g}): a "
                "constant score has no tail to compare"
            )
        else:
            bounded = all(0.0 <= v <= 1.0 for v in values)
            worse = read.worse.get(column)
            scores.append((_scorer_name(column, used), column, bounded, worse))
    read_notes = read_notes + dropped
    unknown = [n for n, _, _, w in scores if w is None]
    if unknown:
        read_notes.append(
            f"worse: null on scorer(s) {', '.join(unknown)}: the file does not say whether higher "
            "or lower scores are the worse outcomes (the tail every analysis studies). REQUIRED: "
            "write `worse: higher` or `worse: lower` on each; design and freeze refuse null"
        )
    if not scores and chosen["completion"] is None:
        raise InputError(
            f"tailgate init: {source} has neither a numeric score column nor a completion text "
            f"column (looked for {', '.join(GUESSES['completion'])}; the file has "
            f"{', '.join(columns)}). Fix: add scores or completions to the file."
        )
    counts: dict[str, int] = {}
    cond_col = chosen["condition"]
    for r in rows:
        value = r.get(cond_col) if cond_col else "imported"
        if not isinstance(value, str) or not _NAME.match(value) or len(value) > 64:
            raise InputError(
                f"tailgate init: {unit} {r['__row__']} of {source} has condition {value!r} in "
                f"column {cond_col!r}, which is not a valid condition name (lower-case letters, "
                f"digits, '_' and '-', starting with a letter or digit). Fix: rename the "
                f"condition values in the file."
            )
        counts[value] = counts.get(value, 0) + 1
    root = folder.resolve().parent
    absolute = source.resolve()
    try:
        rel = absolute.relative_to(root).as_posix()
    except ValueError:
        rel = str(absolute)
    if len(counts) < 2:
        read_notes.append(
            f"one condition ({next(iter(counts))}): the protocol compares the tails of pairs of "
            "conditions, so design and freeze refuse this study as written. Import a second "
            "model's or run's output as well (a folder holding both, or one file with a "
            "condition column), or register protocol: {enabled: false} with analyses that "
            "describe one condition"
        )
    data = dict(
        rows=counts,
        chosen=chosen,
        scores=scores,
        fmt=fmt,
        rel=rel,
        source=source,
        task=read.task,
        filter=read.filter,
    )
    draft = _fill(text, study, data)
    design = derived_design(load_text(draft, study, root))
    notes = _design_notes(design, counts)
    text = _fill(text, study, data, design=design)
    text, lattice_notes = propose_lattice(text, rows, scores)
    notes += g3_and_tie_notes(text, study, root) + lattice_notes
    text, proposed = propose_tolerances(text, study, rows, chosen["condition"], scores)
    if proposed:
        notes.append(
            f"tolerances: {proposed} proposed from the data (0.1 and 0.2 of each scale's pooled "
            "within-condition s.d.) under protocol.tolerances.scales: REVIEW them"
        )
    if not design.cap_meets_bound:
        design = _procedure_power(text, study, root)
        notes.append(
            f"accepted_power is left null: design and freeze refuse this size until you import "
            f"more rows (at least {design.prompts_required} per condition) or accept the lower "
            f"power yourself: {power_line(design)}. {WHAT_A_SMALL_STUDY_LEARNS}"
        )
    notes[:0] = [f"read {source}: {len(rows)} rows; " + _mapping_line(chosen, scores)]
    notes[1:1] = read_notes
    return text, notes


def _mapping_line(
    chosen: dict[str, str | None], scores: list[tuple[str, str, bool, str | None]]
) -> str:
    parts = [f"{role} <- {col!r}" for role, col in chosen.items() if col]
    parts += [
        f"scorer {n} <- {c!r} (bounded: {str(b).lower()}, worse: {w or 'null'})"
        for n, c, b, w in scores
    ]
    return ", ".join(parts)


def _fill(text: str, study: str, d: dict[str, Any], *, design: Any = None) -> str:
    counts: dict[str, int] = d["rows"]
    chosen: dict[str, str | None] = d["chosen"]
    scores: list[tuple[str, str, bool, str | None]] = d["scores"]
    cap = max(counts.values())
    out = (
        f"# Written by `tailgate init {study} --from-import {d['source']}`: the data block, the\n"
        f"# conditions, the scorers and the sample cap come from the file. Review EVERY field\n"
        f"# (all are frozen), then `tailgate design` and `tailgate freeze`.\n"
    ) + text
    out = _set(out, "title", _yaml_str(f"Imported from {d['rel']}"))
    cap_note = f"The largest condition in the file has {cap} rows."
    if design is not None:
        cap_note += (
            f" Eq. 2 (Zhou (2026)): n_exc* = {design.n_exc_required} exceedances at q = "
            f"{design.q_headline:g} need {design.prompts_required} prompts per condition; the "
            f"smallest condition ({design.min_prompts} rows) gives {design.n_exc_planned}: "
            + ("meets the bound." if design.cap_meets_bound else "BELOW the bound.")
        )
    out = _set(out, "sample_cap", str(cap), "REQUIRED. Maximum prompts per condition.")
    out = _note_before(out, "sample_cap", cap_note)
    if design is not None and not design.cap_meets_bound:
        note = (
            f"REVIEW: the rows give only {design.n_exc_planned} of the {design.n_exc_required} "
            f"exceedances Eq. 2 needs. design and freeze refuse this size until you import "
            f"more rows or write here the power of the registered procedure you accept, at most "
            f"what init and design print for it (simulated at 1.5 x delta_floor; init never "
            f"accepts it for you)."
        )
        out = _note_before(out, "accepted_power", note)
    out = _replace_block(out, "conditions:", "data:", _conditions_block(counts, chosen))
    backend = _line("  backend: import", "simulate | transformers | import") + "\n"
    out = _replace_block(out, "  backend: simulate", "  prompts:", backend)
    out = _replace_block(  # the prompt selection of the transformers backend: defaults apply
        out,
        "  prompts:",
        "  import:",
        "  # prompts: (transformers backend only; the import backend reads data.import)\n",
    )
    out = _replace_block(out, "  import:", "generation:", _import_block(d, chosen, scores))
    shards = _line(
        "  shards: 1",
        ">= 1: generation jobs per condition; 1 for the import backend",
        "(every job reads the whole file).",
    )
    out = _replace_block(out, "  shards: 4", "\nscorers:", shards + "\n")
    out = _replace_block(out, "  - {name: toxicity, kind: column", "  # kind column:", "")
    out = out.replace("\n  # kind column:", "\n" + _scorers_block(scores) + "  # kind column:", 1)
    return _headline_scale(out, scores)


def _headline_scale(text: str, scores: list[tuple[str, str, bool, str | None]]) -> str:
    """Register the scales the run computes: an unbounded headline scorer (values outside
    [0, 1]) is analysed on identity only, so the headline scale is identity; bounded scorers
    keep the logit of Proposition 1 of Zhou (2026) beside it."""
    if not scores or scores[0][2]:
        return text
    scales = "[identity, logit]" if any(b for _, _, b, _ in scores) else "[identity]"
    text = text.replace("  scales: [probability, logit]  ", f"  scales: {scales}".ljust(32), 1)
    text = text.replace("  headline_scale: logit    ", "  headline_scale: identity ", 1)
    return text


def _conditions_block(counts: dict[str, int], chosen: dict[str, str | None]) -> str:
    col = chosen["condition"]
    src = f"the values of the file's column {col!r}" if col else "the whole file (no column)"
    lines = [_line("conditions:", "REQUIRED, non-empty. From " + src + ".")]
    for i, (name, n) in enumerate(counts.items()):
        # the first condition carries the comments; the others say only what their rows are
        notes = _FIRST_CONDITION_NOTES if i == 0 else {"prompts": ["rows in the file"]}
        lines += [
            _line(f"  - name: {_yaml_str(name)}", *notes.get("name", [])),
            _line("    model: null", *notes.get("model", [])),
            _line("    perturbation: {kind: none}", *notes.get("perturbation", [])),
            _line(f"    prompts: {n}", *notes["prompts"]),
            _line("    pilot: false", *notes.get("pilot", [])),
        ]
    return "\n".join(lines) + "\n\n"


#: the comment lines of each field of the first condition init writes (:func:`_conditions_block`)
_FIRST_CONDITION_NOTES = {
    "name": ["REQUIRED, unique; the condition's value in the file."],
    "model": ["Key of `models` (none needed for imported data)."],
    "perturbation": ["imported data: always none"],
    "prompts": [
        "rows in the file; <= sample_cap. Fewer rows at run",
        "time are a reported deviation; with more, the rows",
        "with the smallest prompt ids are used.",
    ],
    "pilot": [
        "true: a deliberately small pilot (Section 6.1 of Zhou (2026)), reported,",
        "expected to fail G3, left out of the Eq. 2 cap check.",
    ],
}


def _import_block(
    d: dict[str, Any],
    chosen: dict[str, str | None],
    scores: list[tuple[str, str, bool, str | None]],
) -> str:
    def col(role: str) -> str:
        value = chosen[role]
        return "null" if value is None else _yaml_str(value)

    if not scores:
        score = "null"
    elif len(scores) == 1:
        score = _yaml_str(scores[0][1])
    else:
        score = "{" + ", ".join(f"{_yaml_str(n)}: {_yaml_str(c)}" for n, c, *_ in scores) + "}"
    lines = [
        _line("  import:", 'The import backend (README, "Bringing your own data").'),
        _line(f"    path: {_yaml_str(d['rel'])}", "REQUIRED: relative to the project root."),
        _line(f"    format: {d['fmt']}", "jsonl | csv | parquet | lm-eval | inspect | null"),
        *(
            [_line(f"    task: {_yaml_str(d['task'])}", "the harness task read (init --task)")]
            if d.get("task")
            else []
        ),
        *(
            [_line(f"    filter: {_yaml_str(d['filter'])}", "the lm-eval filter read (--filter)")]
            if d.get("filter")
            else []
        ),
        _line("    columns:", "Column names in the imported file."),
        _line(
            f"      prompt_id: {col('prompt_id')}",
            "prompt keys: integers are the prompt ids;",
            "text keys get their rank among the sorted keys",
        ),
        _line(
            f"      condition: {col('condition')}", "condition of each row (null: one condition)"
        ),
        _line(f"      prompt: {col('prompt')}", "prompt text (null: none)"),
        _line(f"      completion: {col('completion')}", "completion text (null: scores only)"),
        _line(
            f"      score: {score}",
            "{<scorer name>: <file column>} (one scorer: the",
            "column alone; null: no imported scores)",
        ),
        "",
    ]
    return "\n".join(lines) + "\n"


def _scorers_block(scores: list[tuple[str, str, bool, str | None]]) -> str:
    if not scores:
        return (
            _line(
                "  - {name: profanity, kind: profanity}",
                "no score column in the file: an",
                "offline scorer of the completions (replace as needed)",
            )
            + "\n"
        )
    lines = []
    for i, (name, column, bounded, worse) in enumerate(scores):
        why = "all values in [0, 1]" if bounded else "values outside [0, 1]"
        lead = "the headline scorer; " if i == 0 else ""
        tail = (
            f"worse: {worse} as the harness records it"
            if worse
            else "worse: REQUIRED, higher or lower (which scores are the worse outcomes)"
        )
        lines.append(f"  # {lead}file column {column!r}: {why}; {tail}")
        lines.append(
            f"  - {{name: {_yaml_str(name)}, kind: column, column: {_yaml_str(name)}, "
            f"bounded: {str(bounded).lower()}, worse: {worse or 'null'}}}"
        )
    return "\n".join(lines) + "\n"


def _procedure_power(text: str, study: str, root: Path) -> Any:
    """The derived design of the registration ``text`` with its procedure's power (what
    accepted_power may record; :func:`tailgate.protocol.design.with_procedure_power`): 0 where
    H1 cannot PASS at this size, else simulated from the study seed (seconds)."""
    registered = load_text(text, study, root)
    design = derived_design(registered)
    if cannot_pass(registered):
        return replace(design, procedure_power=0.0, procedure_power_mc_se=0.0)
    return with_procedure_power(design, operating_characteristics(registered, design))


def _design_notes(design: Any, counts: dict[str, int]) -> list[str]:
    rows = ", ".join(f"{k} {v}" for k, v in counts.items())
    verdict = "meets the Eq. 2 bound" if design.cap_meets_bound else "is BELOW the Eq. 2 bound"
    return [
        f"conditions (rows): {rows}; sample_cap {max(counts.values())}",
        f"Eq. 2 of Zhou (2026): n_exc* = {design.n_exc_required} exceedances at q = "
        f"{design.q_headline:g} ({design.prompts_required} prompts); the smallest condition gives "
        f"{design.n_exc_planned}, which {verdict}",
    ]
