"""Each registered field is declared once, in the schema: its ``x-registered`` annotation (role,
the direction that loosens it, the stages that read it) is what the amendment diff classifies by
and what a stage's fingerprint is made of (tailgate.prereg.fields)."""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

import pytest
from tailgate.plans.fingerprint import STAGES, stage_fingerprint, stage_parts
from tailgate.prereg import fields
from tailgate.prereg.diff import diff, is_decision
from tailgate.prereg.study import load

REPO = Path(__file__).resolve().parents[2]

#: SHA-256 over the fingerprint of every job of every shipped study (each stage, each wildcard
#: value): a change re-runs the shipped studies' jobs, so it must be deliberate
SHIPPED_FINGERPRINTS = "877283840f612e4d4fb287ebbb640e22c18fac32dd9872d07df3ae3e12894c25"


def _jobs(study):
    values = {
        "condition": [c["name"] for c in study.data["conditions"]],
        "scorer": [s["name"] for s in study.data["scorers"]],
        "embedder": sorted(study.data.get("models") or {}),
        "analysis": sorted(study.data.get("analyses") or {}),
    }
    for stage in STAGES:
        combos: list[dict[str, str]] = [{}]
        for key in sorted(set(re.findall(r"\{(\w+)\}", " ".join(stage_parts(stage))))):
            combos = [{**c, key: v} for c in combos for v in values[key]]
        for wildcards in combos:
            yield stage, wildcards


def test_the_shipped_studies_keep_every_job_fingerprint():
    h = hashlib.sha256()
    shipped = (REPO / "preregistrations").glob("*.yaml")
    for path in sorted(p for p in shipped if p.stem != "template"):
        study = load(path)
        for stage, wc in _jobs(study):
            fp = stage_fingerprint(study, stage, **wc)
            h.update(f"preregistrations/{path.name} {stage} {sorted(wc.items())} {fp}\n".encode())
    assert h.hexdigest() == SHIPPED_FINGERPRINTS


def test_every_stage_reads_something_and_every_read_is_a_known_stage():
    reads = fields.annotations().reads
    assert set(reads) == set(STAGES)
    assert all(reads[s] for s in STAGES)


def test_a_field_moved_the_way_its_annotation_loosens_is_a_loosening():
    for f in fields.annotations().fields:
        rule = f.own.get("loosens")
        if not isinstance(rule, str) or f.container or "*" in f.pattern or "[" in f.pattern:
            continue
        up, down = 0.5, 0.25
        old, new = (down, up) if rule == "up" else (up, down)
        (change,) = diff(_at(f.pattern, old), _at(f.pattern, new))
        assert (change.field, change.direction) == (f.pattern, "loosening")


def test_a_field_of_a_list_entry_is_classified_by_its_annotation():
    """``conditions[*].min_rows`` names every condition's field (brackets are literal, not a
    character class): lowering it after the data refuses fewer conditions, a loosening."""
    old = {"conditions": [{"name": "a", "min_rows": 500}, {"name": "b", "min_rows": 500}]}
    new = {"conditions": [{"name": "a", "min_rows": 100}, {"name": "b", "min_rows": 900}]}
    changes = {c.field: c.direction for c in diff(old, new)}
    assert changes == {
        "conditions[a].min_rows": "loosening",
        "conditions[b].min_rows": "tightening",
    }


def test_an_ordered_choice_loosens_from_its_first_value_to_its_last():
    for f in fields.annotations().fields:
        rule = f.own.get("loosens")
        if isinstance(rule, list):
            (change,) = diff(_at(f.pattern, rule[0]), _at(f.pattern, rule[-1]))
            assert change.direction == "loosening", f.pattern


def test_descriptive_and_design_only_blocks_cover_their_fields():
    for f in fields.annotations().fields:
        assert is_decision(f.pattern.replace("*", "x")) == (f.role == fields.DECISION), f.pattern


def _at(dotted: str, value):
    """``{"a": {"b": value}}`` for ``a.b``."""
    return functools.reduce(lambda inner, key: {key: inner}, reversed(dotted.split(".")), value)


def test_an_unknown_stage_or_key_in_an_annotation_is_refused(monkeypatch):
    schema = {"type": "object", "properties": {"x": {"x-registered": {"stages": ["fits"]}}}}
    monkeypatch.setattr(fields, "load_schema", lambda version=1: schema)
    fields.annotations.cache_clear()
    try:
        with pytest.raises(ValueError, match="unknown stage"):
            fields.annotations()
        schema["properties"]["x"]["x-registered"] = {"loosen": "up"}
        fields.annotations.cache_clear()
        with pytest.raises(ValueError, match="unknown"):
            fields.annotations()
    finally:
        fields.annotations.cache_clear()


def test_the_reference_page_is_what_the_schema_writes():
    from tailgate.authoring.reference import PAGE, main, rewrite

    text = PAGE.read_text(encoding="utf-8")
    assert rewrite(text) == text, "run: python -m tailgate.authoring.reference"
    assert main(["--check"]) == 0


def test_the_check_fails_on_a_stale_page(tmp_path):
    from tailgate.authoring.reference import BEGIN, END, TEMPLATE, main

    page, template = tmp_path / "page.md", tmp_path / "template.yaml"
    page.write_text(f"# page\n\n{BEGIN}\n| stale |\n{END}\n", encoding="utf-8")
    template.write_text(TEMPLATE.read_text(encoding="utf-8"), encoding="utf-8")
    args = [str(page), "--template", str(template)]
    assert main([*args, "--check"]) == 1
    assert main(args) == 0 and main([*args, "--check"]) == 0
    assert "| `protocol.bootstrap.resamples` |" in page.read_text(encoding="utf-8")


def test_the_templates_comments_are_the_schemas_descriptions(tmp_path):
    import yaml
    from tailgate.authoring.reference import PAGE, TEMPLATE, main, template_comments
    from tailgate.prereg.schema import load_schema

    text = TEMPLATE.read_text(encoding="utf-8")
    assert template_comments(text) == text, "run: python -m tailgate.authoring.reference"
    # REQUIRED is the schema's `required`, not written by hand
    marked = set(re.findall(r"^(\w+):.*# REQUIRED\.", text, re.MULTILINE))
    assert marked == set(load_schema()["required"])
    assert re.search(r"^  - name: .*# REQUIRED\. The condition's name", text, re.MULTILINE)
    # a stale comment and a lost continuation line: --check fails, a rewrite restores them and
    # leaves the values, the header and the commented-out examples alone
    stale = text.replace("# REQUIRED. Study name;", "# Study name (old);", 1)
    stale = re.sub(r"(\naccepted_power:.*\n).*\n", r"\1", stale, count=1)
    assert stale != text and yaml.safe_load(stale) == yaml.safe_load(text)
    path = tmp_path / "template.yaml"
    path.write_text(stale, encoding="utf-8")
    assert main([str(PAGE), "--template", str(path), "--check"]) == 1
    assert main([str(PAGE), "--template", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == text
    with pytest.raises(ValueError, match=r"line \d+: protocol\.gof\.jackknife has no description"):
        template_comments(text.replace("  gof: {alpha: 0.05}", "  gof:\n    jackknife: 3", 1))


def _template_fields(node, prefix=""):
    """Every field the template writes (``conditions[*].name`` for a list's entries)."""
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from _template_fields(value, path)
    elif isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
        for value in node:
            yield from _template_fields(value, prefix + "[*]")


def test_every_field_the_template_writes_has_the_schemas_description():
    import yaml

    template = yaml.safe_load((REPO / "preregistrations" / "template.yaml").read_text())
    described = {f.pattern for f in fields.annotations().fields if f.description}
    named = list(dict.fromkeys(_template_fields(template)))
    assert len(named) > 80
    assert [f for f in named if f not in described] == []


@pytest.fixture()
def schema_with_a_new_field(monkeypatch):
    """The schema with one field added, in one place: ``protocol.gof.jackknife``,
    annotated as a decision rule that a larger value loosens, read by the fit."""
    import copy

    from tailgate.prereg.schema import load_schema

    schema = copy.deepcopy(load_schema())
    schema["properties"]["protocol"]["properties"]["gof"]["properties"]["jackknife"] = {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "Jackknife resamples of the Anderson-Darling p-value.",
        "x-registered": {"loosens": "up", "stages": ["fit"]},
    }
    monkeypatch.setattr(fields, "load_schema", lambda version=1: schema)
    fields.annotations.cache_clear()
    yield schema
    fields.annotations.cache_clear()


def test_a_field_added_in_the_schema_alone_is_classed_read_and_documented(
    schema_with_a_new_field, demo_study
):
    import copy
    import dataclasses

    from tailgate.authoring.reference import field_table

    field = "protocol.gof.jackknife"
    # the amendment diff classes it by its annotation
    (change,) = diff(_at(field, 10), _at(field, 20))
    assert (change.field, change.direction, change.decision) == (field, "loosening", True)
    (change,) = diff(_at(field, 20), _at(field, 10))
    assert change.direction == "tightening"
    # the fit reads it (and re-runs when it changes); the bulk bootstrap does not
    assert field in stage_parts("fit") and field not in stage_parts("bulk")
    data = copy.deepcopy(demo_study.data)
    data["protocol"]["gof"]["jackknife"] = 10
    changed = copy.deepcopy(data)
    changed["protocol"]["gof"]["jackknife"] = 20
    before, after = (dataclasses.replace(demo_study, data=d) for d in (data, changed))
    condition = data["conditions"][0]["name"]
    assert stage_fingerprint(before, "fit", condition=condition) != stage_fingerprint(
        after, "fit", condition=condition
    )
    assert stage_fingerprint(before, "bulk") == stage_fingerprint(after, "bulk")
    # the reference documents it
    row = next(r for r in field_table().splitlines() if r.startswith(f"| `{field}` |"))
    assert row == (
        f"| `{field}` | integer | `0` | decision | larger | fit, gates, sensitivity, operating, "
        "verdict, report | Jackknife resamples of the Anderson-Darling p-value. |"
    )


def test_a_descriptive_field_added_in_the_schema_is_no_decision_rule(schema_with_a_new_field):
    schema_with_a_new_field["properties"]["protocol"]["properties"]["gof"]["properties"][
        "jackknife"
    ]["x-registered"] = {"role": "descriptive"}
    fields.annotations.cache_clear()
    (change,) = diff(_at("protocol.gof.jackknife", 1), _at("protocol.gof.jackknife", 2))
    assert (change.direction, change.decision) == ("descriptive", False)
    assert all("protocol.gof.jackknife" not in stage_parts(s) for s in STAGES)


def test_the_typed_readers_read_each_protocol_block_as_registered():
    for path in sorted((REPO / "preregistrations").glob("*-demo.yaml")):
        study = load(path)
        if not study.has_protocol:
            continue
        p = study.protocol
        assert study.bootstrap.resamples == int(p["bootstrap"]["resamples"])
        assert study.bootstrap.level == float(p["bootstrap"]["level"])
        assert study.bootstrap.paired == (p["bootstrap"]["resampling"] == "paired")
        assert study.stability.scan.stop == float(p["stability"]["scan"]["stop"])
        assert study.stability.edge == p["stability"].get("edge", "one_sided")  # absent: default
        assert study.thresholds.band == tuple(p["thresholds"]["band"])
        assert study.thresholds.headline == float(p["thresholds"]["headline"])
        assert study.gof.alpha == float(p["gof"]["alpha"])
        assert study.sensitivity.tolerance_multipliers == tuple(
            p["sensitivity"]["tolerance_multipliers"]
        )
        assert study.power_simulation.n_exc == tuple(p["power_simulation"]["n_exc"])
        oc = p.get("operating_characteristics") or {}
        assert study.operating_characteristics.trials == oc.get("trials", 200)


def test_every_field_of_the_schema_is_described():
    from tailgate.authoring.reference import field_table

    rows = [r for r in field_table().splitlines() if r.startswith("| `")]
    assert len(rows) > 200
    assert [r.split(" | ")[0] for r in rows if r.endswith("|  |")] == []
