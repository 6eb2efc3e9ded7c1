"""Report sections on the registered procedure: operating characteristics, inference, ties,
threshold diagnostics, the multiverse (tailgate.report.procedure)."""

from __future__ import annotations

import numpy as np
from tailgate.protocol.operating import OCScenario, OperatingCharacteristics
from tailgate.report import procedure
from tailgate.stats import gpd, inference
from tailgate.stats.gof import sample_gpd


def test_oc_table_states_the_null_rate_and_the_family_bound() -> None:
    oc = OperatingCharacteristics(
        "any",
        0.1,
        30_000,
        200,
        100,
        10,
        0.995,
        (
            OCScenario(0.0, 200, {"any": 2, "all": 0, "headline": 1}),
            OCScenario(0.05, 200, {"any": 8, "all": 0, "headline": 4}),
            OCScenario(0.1, 200, {"any": 60, "all": 1, "headline": 50}),
        ),
    ).to_dict()
    t = procedure.oc_table(oc)
    assert t.header[2] == "band rule any (registered)"
    assert all(h.strip() for h in t.header)  # no empty column header
    assert t.rows[1][:3] == ("0.050", "false PASS", "0.040 ± 0.014")
    # Δξ = Δfloor is the boundary of H1's null, not power; the paper's reading stays beside it
    assert t.rows[2][1].startswith("boundary of H1's null: a PASS here is not yet a discovery")
    assert "reads this rate as power at the floor" in t.rows[2][1]
    assert "1.0% of the time" in t.note and "at most 10.0%" in t.note  # 10 × 0.01


def test_inference_and_lr_tables_read_the_stored_fits() -> None:
    rng = np.random.default_rng(0)
    records = {}
    for name, xi in (("a", 0.0), ("b", 0.4)):
        y = sample_gpd(rng, xi, 1.0, 800)
        f = gpd.fit(y)
        p = inference.profile_ci(y, 0.95, f)
        records[name] = {
            "thresholds": [
                {
                    "q": 0.95,
                    "n_exc": 800,
                    "xi": f.xi,
                    "xi_se": inference.observed_information(y, f).se_xi,
                    "xi_ci": [f.xi - 0.1, f.xi + 0.1],
                    "xi_profile_ci": [p.low, p.high],
                    "ci_level": 0.95,
                    "profile": inference.profile_grid(y, f).to_dict(),
                    "ties": {"fires": name == "b", "at_threshold": 3, "tied_exceedances": 40,
                             "rule": "strict", "q": 0.95},
                }
            ]
        }  # fmt: skip
    t = procedure.inference_table("s", "logit", records, 0.95)
    assert [r[0] for r in t.rows] == ["a", "b"] and t.rows[1][-1] == "yes"
    gates = {"scorer": "s", "scale": "logit", "pairs": [{"a": "a", "b": "b"}]}
    lr = procedure.lr_table(gates, records, 0.95)
    assert float(lr.rows[0][2].replace("e", "E")) < 1e-6  # ξ 0 vs 0.4 at n = 800
    ties = procedure.ties_table({"s": {"logit": records}})
    assert ties is not None and [r[0] for r in ties.rows] == ["s/logit/b"]
    assert procedure.ties_table({"s": {"logit": {"a": records["a"]}}}) is None


def test_diagnostics_figure_and_multiplicity_note() -> None:
    scans = {
        "a": {
            "q": [0.8, 0.9],
            "mean_excess": [1.0, 1.1],
            "mean_excess_se": [0.05, 0.08],
            "modified_scale": [0.9, None],
        }
    }
    fig = procedure.diagnostics_figure(scans, band=[0.9])
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 2  # e(u) and the band line
    note = procedure.multiplicity_note(
        {"multiplicity": "bonferroni", "family_size": 6, "family": "confirmatory",
         "adjusted_gates": ["G1", "G2", "P1"], "alpha": 0.05 / 6, "level": 1 - 0.05 / 6}
    )  # fmt: skip
    assert "m = 6" in note and "G4 unadjusted" in note and "0.0083" in note
    assert procedure.multiplicity_note({"multiplicity": "none"}).startswith("Multiplicity: none")


def test_multiverse_heat_map_marks_the_registered_cell() -> None:
    cells = [
        {"threshold_rule": r, "g5": "fixed", "p1": p, "multiplier": 1.0,
         "h1": "PASS" if r == "any" else "KILL", "registered": (r, p) == ("any", "percentile")}
        for r in ("any", "all")
        for p in ("percentile", "lr_test")
    ]  # fmt: skip
    doc = {
        "scorer": "s",
        "scale": "logit",
        "dimensions": {
            "threshold_rule": ["any", "all"],
            "g5": ["fixed"],
            "p1": ["percentile", "lr_test"],
            "multiplier": [1.0],
        },
        "cells": cells,
        "pass_share": 0.5,
        "registered": cells[0],
    }
    fig = procedure.multiverse_figure([doc])
    ax = fig.axes[0]
    assert ax.images[0].get_array().tolist() == [[1.0, 1.0], [0.0, 0.0]]
    (box,) = ax.patches
    assert box.get_xy() == (-0.5, -0.5)  # row "any", column "percentile ×1"
    table = procedure.multiverse_table(doc)
    assert table.rows[0][2:] == ("[PASS]", "PASS") and "50%" in table.note
