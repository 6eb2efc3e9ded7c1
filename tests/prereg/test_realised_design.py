"""The realised design of every condition, fitted or not: rows in the generation shards against
the registered prompts; a shortfall is a deviation whether or not the protocol is registered."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

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
    study = load(REPO_ROOT / "preregistrations" / "perturbation-demo.yaml")
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
