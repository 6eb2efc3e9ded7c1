"""Every kind of semantic edit to a frozen field after data exists is refused, naming the field;
amendments are recorded in the chain and let the study proceed."""

from __future__ import annotations

import json

import pytest
from tailgate.errors import RefusalError
from tailgate.prereg.guard import require_frozen

NOISY_BLOCK = """  - name: noisy
    model: tiny
    perturbation: {kind: embedding_noise, sigma_rel: 0.25}
    simulate: {tail: {xi: 0.3, sigma: 0.5, share: 0.05}}
"""

# id: (old text, new text, field named in the diff, expected class)
EDITS = {
    "tolerance_mean_wider": ("mean: 0.10", "mean: 0.20", "protocol.tolerances.mean", "loosening"),
    "tolerance_tvar_narrower": (
        "tvar: 0.20",
        "tvar: 0.10",
        "protocol.tolerances.tvar",
        "tightening",
    ),
    "delta_floor_smaller": (
        "delta_floor: 0.10",
        "delta_floor: 0.05",
        "protocol.delta_floor",
        "loosening",
    ),
    "alpha_larger": (
        "alpha: 0.05\n  multiplicity",
        "alpha: 0.10\n  multiplicity",
        "protocol.alpha",
        "loosening",
    ),
    "multiplicity_dropped": (
        "multiplicity: bonferroni",
        "multiplicity: none",
        "protocol.multiplicity",
        "loosening",
    ),
    "headline_threshold": (
        "headline: 0.95",
        "headline: 0.96",
        "protocol.thresholds.headline",
        "unclassified",
    ),
    "band": ("0.98, 0.99]", "0.98]", "protocol.thresholds.band", "unclassified"),
    "stability_tolerance": (
        "tolerance: 0.05",
        "tolerance: 0.10",
        "protocol.stability.tolerance",
        "loosening",
    ),
    "stability_delta": ("delta: 0.02", "delta: 0.03", "protocol.stability.delta", "tightening"),
    "n_star_smaller": (
        "min_exceedances: 500",
        "min_exceedances: 400",
        "protocol.min_exceedances",
        "loosening",
    ),
    "bootstrap_fewer": (
        "resamples: 10000",
        "resamples: 1000",
        "protocol.bootstrap.resamples",
        "loosening",
    ),
    "gof_alpha": ("gof: {alpha: 0.05}", "gof: {alpha: 0.10}", "protocol.gof.alpha", "tightening"),
    "seed": ("seed: 12345", "seed: 54321", "seed", "unclassified"),
    "sample_cap": ("sample_cap: 40000", "sample_cap: 45000", "sample_cap", "unclassified"),
    "transform_epsilon": (
        "epsilon: 1.0e-6",
        "epsilon: 1.0e-4",
        "transform.epsilon",
        "unclassified",
    ),
    "condition_added": (
        NOISY_BLOCK,
        NOISY_BLOCK + NOISY_BLOCK.replace("noisy", "louder"),
        "conditions[louder]",
        "unclassified",
    ),
    "condition_removed": (NOISY_BLOCK, "", "conditions[noisy]", "unclassified"),
    "condition_renamed": ("name: noisy", "name: noisier", "conditions[noisy].name", "unclassified"),
    "condition_changed": (
        "sigma_rel: 0.25",
        "sigma_rel: 0.5",
        "conditions[noisy].perturbation.sigma_rel",
        "unclassified",
    ),
    "scorer_column": (
        "column: simulated_score",
        "column: other_score",
        "scorers[toxicity].column",
        "unclassified",
    ),
    "scorer_kind": (
        "{name: toxicity, kind: column, column: simulated_score, bounded: true}",
        "{name: toxicity, kind: profanity}",
        "scorers[toxicity].kind",
        "unclassified",
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_semantic_edit_after_data_is_refused_everywhere(with_data, edit):
    old, new, field, cls = EDITS[edit]
    lock_before = with_data.lock.read_bytes()
    with_data.replace(old, new)

    # the library guard used by every entry point
    with pytest.raises(RefusalError) as exc:
        require_frozen(with_data.prereg)
    assert any(c.field == field for c in exc.value.changes), exc.value.changes
    change = next(c for c in exc.value.changes if c.field == field)
    assert change.direction == cls

    # the CLI: verify exits 3 with the field and class; freeze refuses to re-freeze (the
    # registration was committed before the data, and a committed lock is never replaced)
    code, _, err = with_data.cli("verify", with_data.prereg)
    assert code == 3
    assert field in err and f"[{cls}" in err
    assert "tailgate amend" in err and "restore the registered file" in err
    code, _out, err = with_data.cli("freeze", with_data.prereg)
    assert code == 3
    assert field in err and "a committed registration is never replaced" in err
    assert with_data.lock.read_bytes() == lock_before

    # a script that would write results refuses too
    from placeholder_data import main as placeholder_main

    assert placeholder_main([str(with_data.prereg), str(with_data.results / "x.parquet")]) == 3
    assert not (with_data.results / "x.parquet").exists()


def test_diff_shows_old_and_new_values(with_data):
    with_data.replace("mean: 0.10", "mean: 0.2")
    code, _, err = with_data.cli("verify", with_data.prereg)
    assert code == 3
    assert "protocol.tolerances.mean: 0.1 → 0.2  [loosening, decision rule]" in err


def test_no_lock_is_refused(project):
    code, _, err = project.cli("verify", project.prereg)
    assert code == 3 and "not frozen" in err and "tailgate freeze" in err


def test_refreeze_before_data_is_allowed(frozen):
    frozen.replace("mean: 0.10", "mean: 0.20")
    code, out, _ = frozen.cli("freeze", frozen.prereg)
    assert code == 0 and "re-frozen" in out
    assert frozen.cli("verify", frozen.prereg)[0] == 0


def test_amendment_is_chained_and_lets_the_study_proceed(with_data):
    first = json.loads(with_data.lock.read_text())
    with_data.replace("mean: 0.10", "mean: 0.20")
    code, out, err = with_data.cli("amend", with_data.prereg, "--reason", "tolerance too strict")
    assert code == 0, err
    assert "data already existed" in out
    # the receipt dates an amendment made after the data, not a plan made before it
    assert "before collecting data" not in out and "data already existed, so it dates" in out
    lock = json.loads(with_data.lock.read_text())
    assert lock["chain_length"] == 2 and len(lock["chain"]) == 2
    e0, e1 = lock["chain"]
    assert e0 == first["chain"][0]
    assert e1["seq"] == 1 and e1["type"] == "amendment"
    assert e1["previous_entry_hash"] == e0["entry_hash"]
    assert e1["reason"] == "tolerance too strict"
    assert e1["data_existed"] is True
    assert e1["changes"] == [
        {
            "field": "protocol.tolerances.mean",
            "old": 0.1,
            "new": 0.2,
            "kind": "changed",
            "class": "loosening",
            "decision": True,
        }
    ]
    assert lock["head"]["entry_hash"] == e1["entry_hash"]
    study = require_frozen(with_data.prereg)
    assert e1["canonical_hash"] == study.canonical_hash
    with_data.add_data()  # the study proceeds under the new head
    assert with_data.cli("audit", with_data.results, "--no-git")[0] == 0


def test_amend_refuses_bad_requests(frozen, project):
    code, _, err = frozen.cli("amend", frozen.prereg, "--reason", "nothing")
    assert code == 2 and "nothing to amend" in err
    frozen.replace("seed: 12345", "seed: 1")
    code, _, err = frozen.cli("amend", frozen.prereg, "--reason", "  ")
    assert code == 2 and "--reason" in err
    code, _, err = frozen.cli("amend", frozen.prereg)
    assert code == 2


def test_a_broken_lock_is_refused(with_data):
    lock = json.loads(with_data.lock.read_text())
    lock["chain"][0]["prereg"]["protocol"]["alpha"] = 0.5  # rewrite history in place
    with_data.lock.write_text(json.dumps(lock))
    code, _, err = with_data.cli("verify", with_data.prereg)
    assert code == 3 and "does not verify" in err
