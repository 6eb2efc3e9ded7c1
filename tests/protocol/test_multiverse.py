"""The multiverse view re-evaluates the verdict from stored statistics (App. B of Zhou (2026))."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tailgate.cli import main
from tailgate.protocol.gates import GateSettings
from tailgate.protocol.multiverse import G5_VARIANTS, grid, multiverse
from tailgate.protocol.verdict import h1_verdict, pairwise_matrix
from test_gates import B, bulk, cond

BAND = (0.95, 0.96, 0.97)
S = GateSettings()


def _stored():
    """A passes against B only at q = 0.96 (G3 fails elsewhere for A); C never passes."""
    summaries = {}
    for q in BAND:
        a = cond("A", q=q, n_exc=1600 if q == 0.96 else 100)
        summaries[q] = {"A": a, "B": dataclasses.replace(B, q=q), "C": cond("C", q=q)}
    store = {("A", "B"): bulk(), ("A", "C"): bulk(), ("B", "C"): bulk(mean=(0.2, 0.3))}
    return summaries, store


def _run(settings=S, band_rule="any"):
    summaries, store = _stored()
    pairs = list(store)
    return multiverse(
        summaries,
        store,
        settings,
        pairs=pairs,
        family=pairs,
        band=BAND,
        headline_q=0.95,
        band_rule=band_rule,
        multipliers=[0.5, 1.0, 2.0],
    )


def test_every_cell_and_the_registered_one() -> None:
    doc = _run()
    n_rules = 2 + len(BAND)
    assert len(doc["cells"]) == n_rules * 3 * len(G5_VARIANTS) * 3
    reg = [c for c in doc["cells"] if c["registered"]]
    assert len(reg) == 1 and reg[0] == doc["registered"]
    summaries, store = _stored()
    direct = h1_verdict(
        pairwise_matrix(summaries, store, S, list(store)),
        headline_q=0.95,
        band=BAND,
        settings=S,
        band_rule="any",
    )
    assert reg[0]["h1"] == direct.h1 == "PASS"
    assert reg[0]["threshold_rule"] == "any" and reg[0]["p1"] == "percentile"


def test_threshold_rules_differ_where_the_pass_is_single_threshold() -> None:
    doc = _run()
    at = {(c["threshold_rule"], c["g5"], c["p1"], c["multiplier"]): c["h1"] for c in doc["cells"]}
    key = ("fixed", "percentile", 1.0)
    assert at[("any", *key)] == "PASS"
    assert at[("all", *key)] == "KILL"
    assert at[("headline q=0.96", *key)] == "PASS"
    assert at[("headline q=0.95", *key)] == at[("headline q=0.97", *key)] == "KILL"
    # the profile and LR-test P1 need stored profiles: without them P1 fails
    assert at[("any", "fixed", "lr_test", 1.0)] == "KILL"
    assert 0 < doc["pass_share"] < 1
    header, rows = grid(doc)
    assert len(rows) == (2 + len(BAND)) * len(G5_VARIANTS)
    assert sum(cell == "[PASS]" for row in rows for cell in row) == 1
    assert len(header) == 2 + 3 * 3


def test_registered_headline_rule_is_marked_at_the_headline() -> None:
    doc = _run(band_rule="headline")
    assert doc["registered"]["threshold_rule"] == "headline q=0.95"
    assert doc["registered"]["h1"] == "KILL"


def test_cli_refuses_a_results_folder_without_gates(tmp_path, capsys) -> None:
    demo = Path(__file__).resolve().parents[2] / "preregistrations" / "protocol-demo.yaml"
    code = main(["multiverse", str(demo), str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "gates/<scorer>/<scale>.json" in err and "Fix:" in err
