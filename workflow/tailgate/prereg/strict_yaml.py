"""Strict YAML loading for pre-registrations: JSON values only, every value with its line.

A pre-registration is hashed as JSON (DESIGN: "Canonical hash"), so the loader accepts only what
JSON can express and refuses the YAML features that make two readers disagree: duplicate keys,
non-string keys, NaN and infinities, timestamps, binary, sets, merge keys, multiple documents,
anchors and aliases (refused before the document is built, so a small file cannot expand into a
huge one). Plain numbers and booleans follow the YAML 1.2 core schema written as JSON writes them:
``500``, ``-3``, ``0.25``, ``1e-6``, ``true``. YAML 1.1 spellings that other readers take for
something else are refused, not guessed: octal (``0500`` is 320 to a YAML 1.1 reader), base 60
(``33:20`` is 2000), hexadecimal, underscores (``1_000``) and ``yes``/``no``/``on``/``off``.

A registration is also bounded before it is built, so that no reader of it recurses without end
or parses for minutes: the file must be a regular file (a named pipe would make the read wait) of
at most :data:`MAX_BYTES`, and nest mappings and lists at most :data:`MAX_NESTING` levels deep
(the shipped registrations nest 5), measured on the parser's event stream, which holds a stack,
not a recursion.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tailgate.errors import DamagedFileError, PreregError
from tailgate.files.safe_read import read_bytes

__all__ = ["MAX_BYTES", "MAX_NESTING", "Located", "field_name", "load_yaml", "read_registration"]

#: the largest registration read (bytes; the template, every field commented, is 21 kB)
MAX_BYTES = 1024 * 1024
#: the deepest nesting of mappings and lists accepted (the shipped registrations nest 5)
MAX_NESTING = 32

Path_ = tuple[str | int, ...]


class _Loader(yaml.SafeLoader):
    """SafeLoader with its own resolver table (the global SafeLoader is left untouched)."""


_Loader.yaml_implicit_resolvers = {
    k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)

_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
# YAML 1.2 core numbers in JSON's spelling (leading zeros only as "0" or "0.…")
_STRICT_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_STRICT_FLOAT = re.compile(
    r"^[-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$"
)
_STRICT_BOOL = {"true", "false", "True", "False", "TRUE", "FALSE"}
# plain strings a YAML 1.2 reader would take for numbers (octal 0o17, hexadecimal 0x1F)
_NUMBER_LIKE = re.compile(r"^[-+]?0[oOxXbB][0-9a-fA-F_]+$")
_JSON_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Located:
    """A parsed document and the 1-based line of every field path in it."""

    data: dict[str, Any]
    lines: dict[Path_, int]

    def line_of(self, path: Path_) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), None)


def field_name(path: Path_) -> str:
    """Dotted field name with list indices in brackets: ``conditions[0].perturbation.kind``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def read_registration(path: str | Path) -> tuple[bytes, str]:
    """The bytes and UTF-8 text of the registration ``path``, a regular file of at most
    :data:`MAX_BYTES` (module docstring); :class:`PreregError` naming the file otherwise."""
    file = str(path)
    try:
        raw = read_bytes(path, limit=MAX_BYTES)
    except FileNotFoundError:
        raise PreregError(
            "the file does not exist",
            file=file,
            fix="check the path, or start the study with 'tailgate init <study>'",
        ) from None
    except DamagedFileError as exc:
        problem = str(exc).removeprefix(f"{file}: ").split(";")[0].split(", where")[0]
        raise PreregError(
            f"{problem} (a registration is a regular file of at most {MAX_BYTES} bytes)",
            file=file,
            fix="write the registration as a plain YAML file from preregistrations/template.yaml",
        ) from None
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PreregError(
            f"the file is not UTF-8 text (byte {exc.start})", file=file, fix="save it as UTF-8"
        ) from None


def load_yaml(path: str | Path, text: str | None = None) -> Located:
    """Parse ``path`` strictly; raise :class:`PreregError` naming the file, line and field."""
    file = str(path)
    if text is None:
        text = read_registration(path)[1]
    elif len(text) > MAX_BYTES:
        raise PreregError(
            f"{len(text)} characters, more than the {MAX_BYTES} a registration may hold",
            file=file,
            fix="write the registration as a plain YAML file from preregistrations/template.yaml",
        )
    _refuse_anchors(text, file)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise PreregError(
            f"malformed YAML: {problem}",
            file=file,
            line=mark.line + 1 if mark else None,
            fix="correct the YAML syntax at that line (indentation, quotes, colons)",
        ) from None
    except yaml.YAMLError as exc:
        raise PreregError(
            f"malformed YAML: {exc}", file=file, fix="correct the YAML syntax"
        ) from None
    finally:
        loader.dispose()
    if node is None:
        raise PreregError(
            "the file is empty",
            file=file,
            line=1,
            fix="start from preregistrations/template.yaml",
        )
    lines: dict[Path_, int] = {}
    data = _build(node, (), lines, file, _Loader(""))
    if not isinstance(data, dict):
        raise PreregError(
            f"the document is {_article(_json_type(data))}, not a mapping of fields",
            file=file,
            line=node.start_mark.line + 1,
            fix="write 'field: value' lines as in preregistrations/template.yaml",
        )
    return Located(data, lines)


def _refuse_anchors(text: str, file: str) -> None:
    """Refuse anchors (``&a``) and aliases (``*a``) and a nesting deeper than
    :data:`MAX_NESTING` from the event stream, before composing, naming the field where each
    stands."""
    frames: list[dict[str, Any]] = []  # {"map": bool, "key": str, "want_key": bool, "i": int}
    nesting = 0

    def path() -> Path_:
        out: list[str | int] = []
        for f in frames:
            if f["map"]:
                if not f["want_key"]:
                    out.append(str(f["key"]))
            else:
                out.append(f["i"])
        return tuple(out)

    def done() -> None:
        if frames:
            top = frames[-1]
            if top["map"]:
                top["want_key"] = True
            else:
                top["i"] += 1

    try:
        for event in yaml.parse(text, Loader=_Loader):
            nesting += isinstance(event, yaml.CollectionStartEvent)
            nesting -= isinstance(event, yaml.CollectionEndEvent)
            if nesting > MAX_NESTING:
                raise PreregError(
                    f"mappings and lists nested more than {MAX_NESTING} levels deep (the limit "
                    "tailgate reads; a registration nests about 5)",
                    file=file,
                    line=event.start_mark.line + 1,
                    field=field_name(path()[:1]),
                    fix="write the fields as in preregistrations/template.yaml",
                )
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                if frames:  # a mapping or list used as a key has none (refused below)
                    frames.pop()
                done()
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            is_alias = isinstance(event, yaml.AliasEvent)
            if is_alias or getattr(event, "anchor", None) is not None:
                raise PreregError(
                    f"YAML {'alias' if is_alias else 'anchor'} "
                    f"'{'*' if is_alias else '&'}{event.anchor}' is not allowed in a "
                    "pre-registration",
                    file=file,
                    line=event.start_mark.line + 1,
                    field=field_name(path()),
                    fix="write the values out in full where they are used (every registered "
                    "value must be visible at its own place)",
                )
            top = frames[-1] if frames else None
            if top is not None and top["map"] and top["want_key"]:
                top["key"] = getattr(event, "value", "?")
                top["want_key"] = False
                continue
            if isinstance(event, yaml.MappingStartEvent):
                frames.append({"map": True, "key": None, "want_key": True, "i": 0})
            elif isinstance(event, yaml.SequenceStartEvent):
                frames.append({"map": False, "key": None, "want_key": False, "i": 0})
            else:
                done()
    except yaml.YAMLError:
        return  # malformed YAML: the composer below reports it with its line


def _article(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _json_type(value: Any) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "integer"}.get(
        type(value), type(value).__name__
    )


def _build(node: yaml.Node, path: Path_, lines: dict[Path_, int], file: str, ctor: _Loader) -> Any:
    line = node.start_mark.line + 1
    lines.setdefault(path, line)
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in _PLAIN_TAGS:
        raise PreregError(
            f"the YAML tag {node.tag.rsplit(':', 1)[-1]!r} has no JSON form",
            file=file,
            line=line,
            field=field_name(path),
            fix="write a plain mapping or list without a '!!' tag",
        )
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise PreregError(
                    "YAML merge keys ('<<') are not allowed",
                    file=file,
                    line=key_line,
                    field=field_name(path),
                    fix="write the fields out in full",
                )
            if not isinstance(key_node, yaml.ScalarNode):
                raise PreregError(
                    "a mapping key must be a plain string",
                    file=file,
                    line=key_line,
                    field=field_name(path),
                    fix="use a plain word as the key",
                )
            key = _scalar(key_node, ctor, file, path)
            if not isinstance(key, str):
                raise PreregError(
                    f"the key {key_node.value!r} is read as {_article(_json_type(key))}, "
                    "not a string",
                    file=file,
                    line=key_line,
                    field=field_name((*path, str(key_node.value))),
                    fix=f'quote the key: "{key_node.value}":',
                )
            if key in out:
                raise PreregError(
                    f"duplicate key '{key}' (first defined at line {lines[(*path, key)]})",
                    file=file,
                    line=key_line,
                    field=field_name((*path, key)),
                    fix="keep exactly one entry for this key",
                )
            lines[(*path, key)] = key_line
            out[key] = _build(value_node, (*path, key), lines, file, ctor)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*path, i), lines, file, ctor) for i, item in enumerate(node.value)]
    return _scalar(node, ctor, file, path)


def _strict_plain(node: yaml.ScalarNode, file: str, path: Path_) -> None:
    """Refuse plain scalars whose meaning differs between YAML readers (module docstring)."""
    if node.style is not None:  # quoted or block scalars are strings
        return
    text, tag = node.value, node.tag
    problem = None
    if tag == "tag:yaml.org,2002:int" and not _STRICT_INT.match(text):
        problem = "an integer in a YAML 1.1 form (octal, base 60, hexadecimal or with '_')"
    elif tag == "tag:yaml.org,2002:float" and not _STRICT_FLOAT.match(text):
        problem = "a number in a YAML 1.1 form (base 60, leading zeros or with '_')"
    elif tag == "tag:yaml.org,2002:bool" and text not in _STRICT_BOOL:
        problem = "a YAML 1.1 boolean (yes/no/on/off)"
    elif tag == "tag:yaml.org,2002:str" and _NUMBER_LIKE.match(text):
        problem = "an octal, hexadecimal or binary number to a YAML 1.2 reader"
    if problem is not None:
        raise PreregError(
            f"{text!r} is {problem}; readers disagree on its value",
            file=file,
            line=node.start_mark.line + 1,
            field=field_name(path),
            fix="write a plain decimal number (e.g. 500, 0.05, 1e-6) or true/false, or quote "
            f'it ("{text}") if you mean a string',
        )


def _scalar(node: yaml.Node, ctor: _Loader, file: str, path: Path_) -> Any:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        _strict_plain(node, file, path)
    try:
        value = ctor.construct_object(node, deep=True)
    except yaml.MarkedYAMLError as exc:
        raise PreregError(
            f"unsupported YAML value: {exc.problem}",
            file=file,
            line=line,
            field=field_name(path),
            fix="use plain strings, numbers, booleans, null, lists and mappings",
        ) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise PreregError(
            f"{node.value!r} is not a finite number",
            file=file,
            line=line,
            field=field_name(path),
            fix="write a finite number (NaN and infinities have no JSON form)",
        )
    if not isinstance(value, _JSON_SCALARS):
        raise PreregError(
            f"{node.value!r} is read as a YAML {type(value).__name__}, which JSON cannot express",
            file=file,
            line=line,
            field=field_name(path),
            fix=f'quote it to make it a string: "{node.value}"',
        )
    return value
