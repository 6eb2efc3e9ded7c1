"""The versioned JSON Schema of a pre-registration: validation messages and defaults.

The schema lives in ``workflow/tailgate/schemas/prereg.v<N>.schema.json``; defaults are the schema's
``default`` keywords (the protocol defaults are the pre-registered design of Zhou (2026), Section 3)
and are applied before hashing, so writing a default out or leaving it implicit hashes alike.
Beside them, each field's ``x-registered`` annotation (its role, the direction that loosens it,
the stages that read it) is read by :mod:`tailgate.prereg.fields`; validation ignores it.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from tailgate.errors import PreregError
from tailgate.prereg.strict_yaml import Located, field_name

__all__ = [
    "SCHEMA_DIR",
    "SCHEMA_VERSION",
    "apply_defaults",
    "did_you_mean",
    "load_schema",
    "validate",
]

SCHEMA_VERSION = 1
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"


@functools.cache
def load_schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """The JSON Schema of pre-registration ``version``."""
    path = SCHEMA_DIR / f"prereg.v{version}.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def _validator(version: int = SCHEMA_VERSION) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(version))


def validate(doc: Located, file: str) -> None:
    """Raise :class:`PreregError` for the first schema violation (in file order)."""
    version = doc.data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise PreregError(
            f"schema_version is {version!r}; this version of tailgate reads schema version "
            f"{SCHEMA_VERSION}",
            file=file,
            line=doc.line_of(("schema_version",)),
            field="schema_version",
            fix=f"write 'schema_version: {SCHEMA_VERSION}' as in preregistrations/template.yaml",
        )
    # for oneOf/anyOf failures, the most specific sub-error (jsonschema's best match)
    found = _validator().iter_errors(doc.data)
    errors = [best_match(e.context) if e.context else e for e in found]
    if not errors:
        return
    errors.sort(key=lambda e: (doc.line_of(tuple(e.absolute_path)) or 0, -len(e.absolute_path)))
    raise _to_prereg_error(errors[0], doc, file)


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def did_you_mean(written: Any, options: Iterable[Any]) -> str:
    """``'; did you mean "x"?'`` for the option closest to what was written (difflib's ratio
    at least 0.6), or ``''`` when none is close: the end of a fix that names the allowed values."""
    words = [o for o in options if isinstance(o, str)]
    close = difflib.get_close_matches(written, words, n=1) if isinstance(written, str) else []
    return f"; did you mean {_describe(close[0])}?" if close else ""


def _to_prereg_error(err: jsonschema.ValidationError, doc: Located, file: str) -> PreregError:
    path = tuple(err.absolute_path)
    kw = err.validator
    val = err.validator_value
    inst = err.instance
    fix = None
    if kw == "additionalProperties":
        allowed = sorted((err.schema.get("properties") or {}).keys())
        extra = sorted(k for k in inst if k not in allowed) if isinstance(inst, dict) else []
        key = extra[0] if extra else "?"
        path = (*path, key)
        message = f"unknown key '{key}'"
        fix = "remove it or correct its spelling; allowed here: " + ", ".join(allowed)
        fix += did_you_mean(key, [k for k in allowed if k not in inst])
    elif kw == "required":
        missing = [k for k in val if not (isinstance(inst, dict) and k in inst)]
        key = missing[0] if missing else "?"
        message = f"required field '{key}' is missing"
        path = (*path, key)
        fix = f"add '{key}:' (see preregistrations/template.yaml)"
    elif kw == "type":
        want = val if isinstance(val, str) else " or ".join(val)
        message = f"expected {want}, got {_describe(inst)}"
        fix = f"write {'an' if want[0] in 'aeiou' else 'a'} {want} here"
    elif kw in ("enum", "const"):
        options = val if kw == "enum" else [val]
        message = f"{_describe(inst)} is not one of {', '.join(_describe(o) for o in options)}"
        fix = "use one of the listed values" + did_you_mean(inst, options)
    elif kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        op = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[
            kw
        ]
        message = f"must be {op} {val}, got {_describe(inst)}"
        fix = f"use a value {op} {val}"
    elif kw == "pattern" and isinstance(inst, str) and re.match(r"^[a-z0-9][a-z0-9_-]*$", inst):
        message = f"{_describe(inst)} is read as a number, boolean or null by YAML or Snakemake"
        fix = f"choose a name that is a word, e.g. 'study-{inst}'"
    elif kw == "pattern":
        message = f"{_describe(inst)} is not a valid name"
        fix = (
            "use lower-case letters, digits, '_' and '-', starting with a letter or digit "
            "(no paths, dots or spaces)"
        )
    elif kw == "propertyNames":
        message = f"{err.message}"
        fix = "use lower-case letters, digits, '_' and '-' for names"
    elif kw == "minItems":
        message = f"needs at least {val} item(s), got {len(inst)}"
        fix = "add the missing entries"
    elif kw == "maxItems":
        message = f"allows at most {val} item(s), got {len(inst)}"
        fix = "remove the extra entries"
    elif kw == "uniqueItems":
        message = "contains the same value twice"
        fix = "list each value once"
    elif kw in ("maxLength", "minLength"):
        message = err.message
        fix = "use a shorter name" if kw == "maxLength" else "write a non-empty string"
    else:
        message = err.message
        fix = "see preregistrations/template.yaml for the expected form"
    return PreregError(message, file=file, line=doc.line_of(path), field=field_name(path), fix=fix)


def apply_defaults(data: dict[str, Any], version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """A copy of valid ``data`` with every schema default filled in (recursively), except inside
    a ``protocol`` block with ``enabled: false``, which stays as written."""
    schema = load_schema(version)
    out = copy.deepcopy(data)
    _fill(out, schema, schema)
    protocol = data.get("protocol")
    if isinstance(protocol, dict) and protocol.get("enabled") is False:
        # a study without the protocol registers none of its settings: no defaults are filled
        out["protocol"] = copy.deepcopy(protocol)
    return out


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        return root["$defs"][name]
    return schema


def fill_defaults(value: Any, schema: dict[str, Any], version: int = SCHEMA_VERSION) -> None:
    """Fill defaults of ``schema`` (a sub-schema of the pre-registration schema) into ``value``."""
    _fill(value, schema, load_schema(version))


def _fill(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> None:
    schema = _resolve(schema, root)
    if isinstance(value, dict):
        branches = [schema]
        for clause in schema.get("allOf", []):
            cond = clause.get("if")
            if cond is not None and jsonschema.Draft202012Validator(cond).is_valid(value):
                branches.append(_resolve(clause.get("then", {}), root))
        for branch in branches:
            for key, sub in (branch.get("properties") or {}).items():
                if not isinstance(sub, dict):
                    continue
                sub_r = _resolve(sub, root)
                if key not in value:
                    default = sub.get("default", sub_r.get("default", _MISSING))
                    if default is _MISSING:
                        continue
                    value[key] = copy.deepcopy(default)
                _fill(value[key], sub_r, root)
            extra = branch.get("additionalProperties")
            if isinstance(extra, dict):
                known = set(branch.get("properties") or {})
                for key, item in value.items():
                    if key not in known:
                        _fill(item, extra, root)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                _fill(item, items, root)


_MISSING = object()
