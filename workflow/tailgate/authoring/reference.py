"""The field table of the pre-registration reference and the template's comments, from the schema.

``workflow/docs/prereg-reference.md`` holds, between two markers, one row per registered field:
its type, default, role (decision rule, descriptive or design-only), the direction that loosens
it, the stages that read it and its description, all as the schema declares them
(:mod:`tailgate.prereg.fields`). ``preregistrations/template.yaml`` explains each field it writes
in a trailing comment, also written from the schema (:func:`template_comments`).
``python -m tailgate.authoring.reference`` rewrites both in place; ``--check`` exits 1 when either
differs from what it would write (a test runs it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from tailgate.prereg.fields import STAGES, Field, annotations
from tailgate.prereg.schema import SCHEMA_VERSION, load_schema

__all__ = ["BEGIN", "END", "PAGE", "field_table", "main", "rewrite", "template_comments"]

PAGE = Path(__file__).resolve().parents[2] / "docs" / "prereg-reference.md"
BEGIN = (
    "<!-- BEGIN field table: written by `python -m tailgate.authoring.reference`; do not edit -->"
)
END = "<!-- END field table -->"
TEMPLATE = Path(__file__).resolve().parents[3] / "preregistrations" / "template.yaml"
_WIDTH = 100  # the template's line width
_KEY = re.compile(r"(?P<code>(?P<indent> *)(?P<dash>- )?(?P<key>[a-z_]\w*):[^#]*?) *(?P<note>#.*)?")

_HEAD = (
    "| field | type | default | role | loosens | read by | description |",
    "| --- | --- | --- | --- | --- | --- | --- |",
)


def field_table(version: int = SCHEMA_VERSION) -> str:
    """The section between the markers: an introduction and one row per field."""
    lines = [
        f"## Every field (schema version {version})",
        "",
        f"Written from `workflow/tailgate/schemas/prereg.v{version}.schema.json`, where each field "
        "is declared once. *field*: as an amendment names it, `*` standing for any entry (a "
        "condition, a scorer, a model key, an analysis name); fields of one analysis kind or "
        "scorer kind name it in brackets. *role*: a decision rule of the registered plan "
        "(changing it after registration is a deviation), descriptive, or design-only (the "
        "sizes of the design's own simulations). *loosens*: the change that makes a claim "
        "easier to make, by which an amendment is classed loosening or tightening. *read by*: "
        "the workflow stages re-run when it changes.",
        "",
        *_HEAD,
    ]
    lines.extend(_row(f, kinds) for f, kinds in _rows(annotations(version).fields))
    return "\n".join(lines) + "\n"


def _scalar_item(f: Field) -> bool:
    """An item of a list of plain values (``transform.scales[*]``): its list's row says it."""
    return f.pattern.endswith("[*]") and not f.container and "properties" not in f.schema


def _rows(fields: tuple[Field, ...]) -> list[tuple[Field, list[str]]]:
    """One row per field and form: a field every kind declares alike (a scorer's ``worse``) is
    one row; one that only some kinds declare, or that a kind declares its own way (its
    default), is a row naming those kinds."""
    forms: dict[tuple[str, str], tuple[Field, list[str]]] = {}
    family: dict[str, set[str]] = {}
    for f in fields:
        if _scalar_item(f):
            continue
        form = json.dumps({k: v for k, v in f.schema.items() if k != "description"}, sort_keys=True)
        row = forms.setdefault((f.pattern, form), (f, []))
        row[1].append(f.where)
        base, _, kind = f.where.partition("_")
        if kind:
            family.setdefault(base, set()).add(f.where)
    out = []
    for f, wheres in forms.values():
        kinds = [w for w in dict.fromkeys(wheres) if "_" in w]
        if kinds and set(f.schema) <= {"const", "description"}:
            continue  # the value that selects a kind's branch: the field's own row lists it
        base = kinds[0].partition("_")[0] if kinds else ""
        every = len(kinds) == len(wheres) and set(kinds) == family.get(base)
        out.append((f, [] if every or len(kinds) < len(wheres) else kinds))
    return out


def _row(f: Field, kinds: list[str]) -> str:
    name = f"`{f.pattern}`"
    if kinds:  # declared by some kinds only: analysis_dominance, scorer_judge
        name += " (" + ", ".join(k.partition("_")[2] for k in kinds) + ")"
    readers = ", ".join(s for s in STAGES if s in f.readers)
    cells = (name, _type(f.schema), _default(f.schema), f.role, _loosens(f.loosens), readers)
    return "| " + " | ".join((*cells, _cell(f.description))) + " |"


def _type(schema: dict[str, Any]) -> str:
    if "const" in schema:
        return f"`{_json(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{_json(v)}`" for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind:
        return str(kind)
    if "oneOf" in schema or "anyOf" in schema:
        return "one of several forms"
    return ""


def _default(schema: dict[str, Any]) -> str:
    return f"`{_json(schema['default'])}`" if "default" in schema else ""


def _loosens(rule: Any) -> str:
    if rule is None:
        return ""
    if isinstance(rule, tuple):
        return " → ".join(f"`{_json(v)}`" for v in rule)
    return {"up": "larger", "down": "smaller"}[rule]


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rewrite(page: str, version: int = SCHEMA_VERSION) -> str:
    """``page`` with the section between the markers written anew."""
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"the page has no '{BEGIN}' ... '{END}' section")
    return f"{head}{BEGIN}\n{field_table(version)}{END}{tail}"


def template_comments(text: str, version: int = SCHEMA_VERSION) -> str:
    """The template ``text`` with the trailing comment of each ``key: value  # ...`` line
    written anew: "REQUIRED." where the enclosing block requires the key, then the field's
    description, wrapped at the comment's column (continuation lines two spaces further in).
    Values, lines without a comment, the header and the commented-out examples (lines that
    start with ``#``) stay as they are."""
    fields: dict[str, Field] = {}
    for f in annotations(version).fields:
        fields.setdefault(f.pattern, f)
    out: list[str] = []
    blocks: list[tuple[int, str]] = []  # (indent, field) of the blocks around the line
    column = -1  # the comment column of the field above: its continuation lines are dropped
    for number, line in enumerate(text.splitlines(), start=1):
        if column >= 0 and line.startswith(" " * column + "#"):
            continue
        match, column = _KEY.fullmatch(line), -1
        if match is None:
            out.append(line)
            continue
        indent = len(match["indent"])
        if match["dash"]:  # an entry of a list: its keys are fields of `<list>[*]`
            blocks = [b for b in blocks if b[0] < indent]
            blocks.append((indent, (blocks[-1][1] if blocks else "") + "[*]"))
            indent += 2
        blocks = [b for b in blocks if b[0] < indent]
        parent = blocks[-1][1] if blocks else ""
        path = f"{parent}.{match['key']}" if parent else match["key"]
        blocks.append((indent, path))
        if not match["note"]:
            out.append(line)
            continue
        if not (fields.get(path) and fields[path].description):
            raise ValueError(
                f"template line {number}: {path} has no description in the schema. Fix: declare "
                "it there with one, or correct the template's key or indentation."
            )
        required = (fields[parent].schema if parent else load_schema(version)).get("required", [])
        note = ("REQUIRED. " if match["key"] in required else "") + fields[path].description
        code = match["code"].rstrip()
        column = match.start("note")
        wrapped = textwrap.wrap(
            note, _WIDTH - column - 2, subsequent_indent="  ", break_on_hyphens=False
        )
        out.append(f"{code.ljust(column)}# {wrapped[0]}")
        out.extend(f"{' ' * column}# {rest}" for rest in wrapped[1:])
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tailgate.authoring.reference", description=__doc__.splitlines()[0]
    )
    parser.add_argument("page", nargs="?", type=Path, default=PAGE)
    parser.add_argument("--template", type=Path, default=TEMPLATE)
    parser.add_argument("--check", action="store_true", help="exit 1 when either file is stale")
    args = parser.parse_args(argv)
    stale = 0
    for path, write in ((args.page, rewrite), (args.template, template_comments)):
        text = path.read_text(encoding="utf-8")
        new = write(text)
        if new != text and args.check:
            print(f"{path} is stale: run python -m tailgate.authoring.reference", file=sys.stderr)
            stale = 1
        elif new != text:
            path.write_text(new, encoding="utf-8")
    return stale


if __name__ == "__main__":
    sys.exit(main())
