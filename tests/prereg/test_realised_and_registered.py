"""What the results hold against the registered plan: the realised design of every condition,
fitted or not (rows in the generation shards against the registered prompts; a shortfall is a
deviation whether or not the protocol is registered), and each analysis criterion under the
registered plan beside its amended outcome."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tailgate.prereg.deviations import design_deviations, generated_rows, realised_design
from tailgate.prereg.study import load
from wf_project import REPO_ROOT


def _shards(root: Path, rows: dict[str, list[int]]) -> list[Path]:
    out = []
    for condition, sizes in rows.items():
        for k, n in enumerate(sizes):
            path = root / "generations" / condition / f"shard-{k}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(
                pa.table({"prompt_id": [f"{condition}-{k}-{i}" for i in range(n)]}), path
            )
            out.append(path)
    return out


def test_generated_rows_adds_the_shards_of_each_condition(tmp_path: Path) -> None:
    shards = _shards(tmp_path, {"b": [7, 5], "a": [3]})
    assert generated_rows(shards) == {"a": 3, "b": 12}
    assert list(generated_rows(shards)) == ["a", "b"]  # sorted: the same bytes in any order


def test_a_study_without_the_protocol_reports_its_shortfall(tmp_path: Path) -> None:
    study = load(REPO_ROOT / "preregistrations" / "perturbation-energy-example.yaml")
    assert not study.has_protocol
    registered = {c["name"]: int(c["prompts"]) for c in study.conditions()}
    short, full = sorted(registered)[:2]
    generated = dict(registered)
    generated[short] = registered[short] - 7
    generated[full] = registered[full] + 3  # rows beyond the registered prompts: no deviation
    realised = realised_design(study, [], generated)
    assert realised["conditions"][short]["generated_rows"] == registered[short] - 7
    deviations = design_deviations(realised)
    assert [d["what"].split(":")[0] for d in deviations] == [f"condition {short}"]
    got, want = registered[short] - 7, registered[short]
    assert f"{got:,} rows analysed, {want:,} registered" in deviations[0]["what"]
    # without generation shards (a verdict of an older layout) nothing is claimed about rows
    assert design_deviations(realised_design(study, [], None)) == []


def test_registered_plan_criteria_re_derive_only_what_the_statistics_serve() -> None:
    """Each analysis criterion under entry 0 beside the amended one: re-derived from the stored
    statistics when the amendment touched only criteria; otherwise read from the registered-plan
    branch's statistics, and the row names what changed them (the analysis's own fields, or a
    protocol default the kind falls back on)."""
    import copy

    from tailgate.stages.registered_plan import registered_plan_criteria

    study = load(REPO_ROOT / "preregistrations" / "perturbation-energy-example.yaml")
    name = "composite-null"
    first = copy.deepcopy(study.data)
    crit = first["analyses"][name]["criteria"][-1]
    crit["threshold"] = float(crit["threshold"]) / 2  # only a criterion differs
    chain = [{"prereg": first, "canonical_hash": "0"}, {"prereg": study.data}]
    rows = {r["criterion"]: r for r in registered_plan_criteria(study, chain, [])}
    assert set(rows) == {c["name"] for c in study.data["analyses"][name]["criteria"]}
    assert rows[crit["name"]]["reason"] == "changed by an amendment"
    assert all(r["registered"] is not None for r in rows.values())
    other = next(n for n in rows if n != crit["name"])
    assert rows[other]["reason"] == "" and rows[other]["registered"] == rows[other]["amended"]
    first = copy.deepcopy(study.data)
    first["analyses"][name]["budget"] = 4000  # the design, hence the statistics, differ
    chain = [{"prereg": first, "canonical_hash": "0"}, {"prereg": study.data}]
    rows = registered_plan_criteria(study, chain, [])
    assert all(r["registered"] is None for r in rows)  # the branch's statistics not given
    assert all(f"analyses.{name}" in r["reason"] and "not computed" in r["reason"] for r in rows)
    # the branch's statistics, computed under entry 0, give the registered outcome
    from tailgate.analyses.registry import kind_of

    spec = first["analyses"][name]
    stats = {"statistics": {}, "analysis": name}
    rows = registered_plan_criteria(study, chain, [], [stats])
    want = {o.name: o.outcome for o in kind_of(spec).criteria(spec, {})}
    assert {r["criterion"]: r["registered"] for r in rows} == want
    assert all("computed under entry 0 from its own statistics" in r["reason"] for r in rows)
    # the protocol's alpha is a default this kind falls back on; the seed feeds its data
    for field, value in (("alpha", 0.01), ("seed", 1)):
        first = copy.deepcopy(study.data)
        if field == "seed":
            first["seed"] = value
        else:
            first["protocol"] = {**first["protocol"], "enabled": True, "alpha": value}
        chain = [{"prereg": first, "canonical_hash": "0"}, {"prereg": study.data}]
        rows = registered_plan_criteria(study, chain, [])
        assert all(r["registered"] is None for r in rows), field
    assert registered_plan_criteria(study, chain[:1], []) == []
