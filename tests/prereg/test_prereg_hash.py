"""Canonical hash: cosmetic edits keep it, every change of meaning changes it."""

from __future__ import annotations

import hashlib
import json

import pytest
from tailgate.plans.registration import load
from tailgate.prereg import canonical_hash, canonical_json
from tailgate.prereg.guard import require_frozen

COSMETIC = {
    "comments": lambda t: (
        "# header comment\n" + t.replace("seed: 12345", "seed: 12345   # the root seed")
    ),
    "key_order": lambda t: t.replace(
        "tolerances: {mean: 0.10, tvar: 0.20}", "tolerances: {tvar: 0.20, mean: 0.10}"
    ).replace("schema_version: 1\nstudy: study\n", "study: study\nschema_version: 1\n"),
    "quoting": lambda t: t.replace('title: "test study"', "title: 'test study'").replace(
        "headline_scale: logit", 'headline_scale: "logit"'
    ),
    "block_vs_flow": lambda t: t.replace("gof: {alpha: 0.05}", "gof:\n    alpha: 0.05"),
    "number_spelling": lambda t: t.replace("epsilon: 1.0e-6", "epsilon: 0.000001").replace(
        "alpha: 0.05\n  multiplicity", "alpha: 5.0e-2\n  multiplicity"
    ),
    "integral_float": lambda t: t.replace("sample_cap: 40000", "sample_cap: 40000.0"),
    "explicit_default": lambda t: t.replace(
        "data:\n  backend: simulate\n", "data:\n  backend: simulate\n  prompts: {split: train}\n"
    ),
    "default_left_out": lambda t: t.replace("  tvar_level: 0.90\n", ""),
    "exponent_without_dot": lambda t: t.replace("epsilon: 1.0e-6", "epsilon: 1e-6"),
}


@pytest.mark.parametrize("edit", sorted(COSMETIC))
def test_cosmetic_edits_keep_the_hash_and_are_accepted(frozen, edit):
    before = load(frozen.prereg)
    text = frozen.text()
    new = COSMETIC[edit](text)
    assert new != text
    frozen.write(new)
    after = require_frozen(frozen.prereg)  # accepted by the guard
    assert after.canonical_hash == before.canonical_hash
    assert after.raw_hash != before.raw_hash


def test_canonical_json_is_sorted_compact_and_fixed():
    doc = {"b": [1.0, -0.0, 0.1, 1e-6, True, None], "a": {"y": "é", "x": 2}}
    text = canonical_json(doc).decode()
    assert text == '{"a":{"x":2,"y":"\\u00e9"},"b":[1,0,0.1,1e-06,true,null]}'
    assert canonical_hash(doc) == hashlib.sha256(text.encode()).hexdigest()
    # independent reference: the stdlib with the same normalisation written out by hand
    ref = json.dumps(
        {"a": {"x": 2, "y": "é"}, "b": [1, 0, 0.1, 1e-06, True, None]},
        sort_keys=True,
        separators=(",", ":"),
    )
    assert text == ref


def test_negative_zero_hashes_like_zero(frozen):
    frozen.replace("xi_bar: 0.0", "xi_bar: -0.0")
    require_frozen(frozen.prereg)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("seed: 12345", "seed: 12346"),
        ('title: "test study"', 'title: "test study."'),
        ("mean: 0.10", "mean: 0.100001"),
        # a second scorer's bounded flag (the headline scorer's would change which scales
        # the run computes, refused unless the scales change with it)
        ("bounded: true}", "bounded: true}\n  - {name: s, kind: column, column: x}"),
        ("true}", "true}\n  - {name: s, kind: column, column: x, bounded: false}"),
    ],
)
def test_any_change_of_meaning_changes_the_hash(project, old, new):
    h = load(project.prereg).canonical_hash
    project.replace(old, new)
    assert load(project.prereg).canonical_hash != h


def test_defaults_are_applied(project, study_text):
    s = load(project.prereg)
    assert s.data["generation"] == {
        "temperature": 1,
        "top_p": 0.9,
        "max_new_tokens": 32,
        "shards": 4,
    }
    assert s.condition("clean")["prompts"] == 40000  # defaults to sample_cap
    assert s.condition("clean")["simulate"]["bulk"] == {"loc": -6, "scale": 1}
    assert s.data["data"]["import"]["columns"]["score"] == "score"
    assert s.pairs() == [("clean", "noisy")]


def test_template_and_demo_are_valid(repo_root):
    t = load(repo_root / "preregistrations" / "template.yaml")
    assert t.name == "template"
    demo = require_frozen(repo_root / "preregistrations" / "protocol-demo.yaml")
    assert demo.data["accepted_power"] == 0.78


def test_every_shipped_registration_matches_its_committed_lock(repo_root):
    """New optional fields (no schema default) keep the canonical hash of every committed lock:
    ``tailgate verify`` of each shipped study exits 0."""
    import subprocess
    import sys

    shipped = sorted((repo_root / "preregistrations").glob("*.lock.json"))
    assert len(shipped) >= 4
    for lock in shipped:
        prereg = lock.with_name(lock.name.replace(".lock.json", ".yaml"))
        res = subprocess.run(
            [sys.executable, "-m", "tailgate.cli", "verify", str(prereg)],
            capture_output=True, text=True, check=False, cwd=repo_root,
        )  # fmt: skip
        assert res.returncode == 0, f"{prereg.name}: {res.stdout}{res.stderr}"
