"""Every public function of the statistics (``tailgate.stats``) and the protocol
(``tailgate.protocol``) says in numpydoc form what it takes and what it gives back.

A function is public when its module's ``__all__`` names it (or, in a module without one, when
its name does not start with ``_``). Its docstring must hold a ``Parameters`` section naming
every parameter of its signature, in order, and a ``Returns`` (or ``Yields``) section; a
``References`` section, where there is one, cites by author and year, never a file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "tailgate"
FOLDERS = ("stats", "protocol")


def _public(tree: ast.Module) -> list[ast.FunctionDef]:
    listed = next(
        (
            set(ast.literal_eval(node.value))
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(getattr(t, "id", None) == "__all__" for t in node.targets)
        ),
        None,
    )
    return [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and (node.name in listed if listed is not None else not node.name.startswith("_"))
    ]


def _functions() -> list[tuple[str, ast.FunctionDef]]:
    out = []
    for folder in FOLDERS:
        for path in sorted((PACKAGE / folder).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            out += [(f"{folder}/{path.name}:{fn.name}", fn) for fn in _public(tree)]
    return out


def _section(doc: str, title: str) -> str | None:
    """The body of numpydoc section ``title`` (up to the next section), or None."""
    m = re.search(rf"^{title}\n-{{{len(title)}}}\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, re.M | re.S)
    return m.group(1) if m else None


FUNCTIONS = _functions()


def test_the_check_sees_the_public_functions() -> None:
    assert len(FUNCTIONS) > 100  # the two layers' public functions, not an empty scan


@pytest.mark.parametrize(("where", "fn"), FUNCTIONS, ids=[w for w, _ in FUNCTIONS])
def test_public_function_has_numpydoc_sections(where: str, fn: ast.FunctionDef) -> None:
    doc = ast.get_docstring(fn) or ""
    args = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    args += [f"*{fn.args.vararg.arg}"] if fn.args.vararg else []
    args += [f"**{fn.args.kwarg.arg}"] if fn.args.kwarg else []
    assert doc.splitlines() and doc.splitlines()[0].strip(), f"{where}: no summary line"
    if args:
        params = _section(doc, "Parameters")
        assert params is not None, f"{where}: no Parameters section"
        heads = [line.split(" : ")[0] for line in params.splitlines() if line[:1].strip()]
        documented = [name.strip() for head in heads for name in head.split(",")]
        assert documented == args, f"{where}: Parameters name {documented}, signature {args}"
    assert _section(doc, "Returns") is not None or _section(doc, "Yields") is not None, (
        f"{where}: no Returns (or Yields) section"
    )
    refs = _section(doc, "References") or ""
    assert not re.search(r"\bseed\b|SPECS|\.txt\b|\b00[0-4]\b", refs), f"{where}: {refs!r}"
