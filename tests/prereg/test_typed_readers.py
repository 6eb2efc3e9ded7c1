"""Every registered value outside ``tailgate.prereg`` is read through a typed reader of
:class:`tailgate.prereg.Study` (``study.rules.delta_floor``, ``study.thresholds.ties``,
``study.backend``), never by a raw key of the canonical document, so that each absent field's
default is written once, in its reader (:mod:`tailgate.prereg.protocol_blocks`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tailgate.prereg.protocol_blocks import Rules, Stability, Thresholds, read_block

PACKAGE = Path(__file__).resolve().parents[2] / "workflow" / "tailgate"
#: the document's attributes on a study: ``study.protocol``, ``study.data``
DOCUMENT = {"protocol", "data"}


def _document(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in DOCUMENT


def raw_reads(source: str) -> list[tuple[int, str]]:
    """The raw reads of the registration in ``source``: ``x.protocol[...]``, ``x.data[...]``,
    ``x.protocol.get(...)``, ``x.data.get(...)``, and a name bound to ``x.protocol`` (whose
    keys are then read raw)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and _document(node.value):
            found.append((node.lineno, ast.unparse(node)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _document(node.func.value)
        ):
            found.append((node.lineno, ast.unparse(node)))
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "protocol"
        ):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_registered_value_is_read_raw_outside_prereg() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("prereg/"):
            continue
        offenders += [f"{rel}:{n}: {text}" for n, text in raw_reads(path.read_text())]
    assert not offenders, "read these through a typed reader of Study:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "source",
    [
        'x = study.protocol["delta_floor"]',
        'x = ctx.study.data["transform"]["epsilon"]',
        'x = study.protocol.get("p1_method", "percentile")',
        'x = study.data.get("analyses") or {}',
        "p = study.protocol",
    ],
)
def test_the_scan_finds_each_kind_of_raw_read(source: str) -> None:
    assert raw_reads(source)


def test_typed_readers_pass_the_scan() -> None:
    assert not raw_reads("x = study.rules.delta_floor + study.thresholds.headline")


def test_an_absent_optional_field_reads_its_one_default() -> None:
    """The defaults the schema leaves out of the canonical document (so that they never enter
    its hash) are the readers'; a registered value replaces them."""
    rules = Rules.of(
        {
            "alpha": 0.05,
            "multiplicity": "bonferroni",
            "min_exceedances": 500,
            "delta_floor": 0.1,
            "tvar_level": 0.9,
            "power": 0.8,
            "xi_bar": 0.0,
            "headline_scale": "logit",
            "band_rule": "any",
        }
    )
    assert (rules.family, rules.p1_method, rules.lr_calibration) == (
        "registered",
        "percentile",
        "bartlett",
    )
    assert rules.adjusted_gates == ("G1", "G2", "P1")
    assert rules.lr_bootstrap_below == 200
    block = {"headline": 0.95, "band": [0.95, 0.97]}
    assert read_block(Thresholds, block).ties == "strict"
    assert read_block(Thresholds, block).min_levels == 30
    assert read_block(Thresholds, block).ceiling is None
    assert read_block(Thresholds, {**block, "ties": "lattice", "min_levels": 4}).min_levels == 4
    scan = {"start": 0.9, "stop": 0.99, "step": 0.01}
    st = read_block(
        Stability,
        {"delta": 0.02, "tolerance": 0.05, "scan": scan, "min_exceedances": 50, "resamples": 9},
    )
    assert (st.edge, st.tolerance_rule, st.se_multiplier, st.intervals) == (
        "one_sided",
        "fixed",
        2.0,
        "bootstrap",
    )
