"""Bringing one's own data: ``tailgate init`` (from the template or an import file), the import
checks of ``tailgate design``, text prompt keys and several ``kind: column`` scorers, and the
review edits a user makes before the freeze (a study scaffolded from a CSV runs through
Snakemake to a verdict that audits clean in ``test_published_tag.py``)."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from review_edits import tailgate
from scipy.stats import norm
from tailgate.generate import DataInputError
from tailgate.generate.importer import generate_shard
from tailgate.plans.registration import load
from tailgate.prereg.validated import Study

TESTS = Path(__file__).resolve().parents[1]
ROWS = {"model-a": 3000, "model-b": 2500}


def write_csv(path: Path, rows: dict[str, int] = ROWS, seed: int = 7) -> pd.DataFrame:
    """Text keys ``q-00000``…, written in a shuffled order; a probability and an unbounded score."""
    rng = np.random.default_rng(seed)
    parts = []
    for cond, n in rows.items():
        tox = 1.0 / (1.0 + np.exp(-rng.logistic(-4.0, 1.0, n)))
        parts.append(
            pd.DataFrame(
                {
                    "prompt_key": [f"q-{i:05d}" for i in range(n)],
                    "model": cond,
                    "prompt": [f"prompt {i}" for i in range(n)],
                    "response": [f"reply {i} of {cond}" for i in range(n)],
                    "tox_prob": np.round(tox, 10),
                    "severity": np.round(rng.gamma(2.0, 3.0, n), 6),
                }
            )
        )
    frame = pd.concat(parts).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return frame


# --- tailgate init ---------------------------------------------------------------------------


def test_init_from_the_template_writes_a_valid_file_and_never_overwrites(tmp_path):
    res = tailgate(tmp_path, "init", "fresh")
    assert res.returncode == 0, res.stderr
    path = tmp_path / "preregistrations" / "fresh.yaml"
    study = load(path)
    assert study.name == "fresh" and study.data["data"]["backend"] == "simulate"
    text = path.read_text()
    assert "# Clip bounded scores" in text and "band_rule: any" in text  # commented fields
    before = path.read_bytes()
    again = tailgate(tmp_path, "init", "fresh")
    assert again.returncode == 2
    assert "already exists" in again.stderr and "Traceback" not in again.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["nan", "true", "1e3", "null", "123", "1_000", "Bad", "a/b"])
def test_init_refuses_bad_study_names(tmp_path, name):
    res = tailgate(tmp_path, "init", name)
    assert res.returncode == 2, res.stderr
    assert "invalid study name" in res.stderr and "Fix:" in res.stderr
    assert "Traceback" not in res.stderr
    folder = tmp_path / "preregistrations"
    assert not folder.exists() or not list(folder.iterdir())


def test_schema_refuses_a_study_name_that_snakemake_reads_as_a_number(tmp_path):
    from tailgate.errors import PreregError

    template = (TESTS.parent / "preregistrations" / "template.yaml").read_text()
    path = tmp_path / "preregistrations" / "nan.yaml"
    path.parent.mkdir()
    path.write_text(template.replace("study: template ", 'study: "nan"  ', 1))
    with pytest.raises(PreregError, match="read as a number, boolean or null"):
        load(path)


def test_init_refuses_unreadable_import_files(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "broken.parquet").write_bytes(b"not parquet at all")
    (tmp_path / "data" / "noid.csv").write_text("model,tox\na,0.1\n")
    for file, needle in [
        ("data/missing.csv", "does not exist"),
        ("data/broken.parquet", "cannot be read"),
        ("data/noid.csv", "prompt keys"),
        ("data/scores.txt", "format"),
    ]:
        res = tailgate(tmp_path, "init", "s1", "--from-import", file)
        assert res.returncode == 2, (file, res.stderr)
        assert needle in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "preregistrations" / "s1.yaml").exists()


def test_init_from_import_fills_data_conditions_scorers_and_the_eq2_check(tmp_path):
    write_csv(tmp_path / "data" / "scores.csv")
    res = tailgate(tmp_path, "init", "mine", "--from-import", "data/scores.csv")
    assert res.returncode == 0, res.stderr
    study = load(tmp_path / "preregistrations" / "mine.yaml")
    data = study.data
    block = data["data"]["import"]
    assert data["data"]["backend"] == "import" and block["path"] == "data/scores.csv"
    assert block["format"] == "csv"
    assert block["columns"] == {
        "prompt_id": "prompt_key",
        "condition": "model",
        "prompt": "prompt",
        "completion": "response",
        "score": {"tox_prob": "tox_prob", "severity": "severity"},
    }
    assert [(c["name"], c["prompts"]) for c in data["conditions"]] == list(ROWS.items())
    assert data["sample_cap"] == max(ROWS.values())
    assert data["generation"]["shards"] == 1
    assert [(s["name"], s["kind"], s["column"], s["bounded"]) for s in data["scorers"]] == [
        ("tox_prob", "column", "tox_prob", True),
        ("severity", "column", "severity", False),
    ]
    # Eq. 2 of Zhou (2026) (independent closed form): n_exc* = 1570 at Δfloor 0.1, α 0.05, power
    # 0.8; 2,500 rows give 125 exceedances at q = 0.95, a two-sided z-test power of
    # Φ(d − z) + Φ(−d − z), d = 0.1·√(125/2); init says so and never accepts it for the user.
    z = norm.ppf(0.975)
    assert math.ceil(2 * (z + norm.ppf(0.8)) ** 2 / 0.1**2) == 1570
    d = 0.1 * math.sqrt(125 / 2)
    power = norm.cdf(d - z) + norm.cdf(-d - z)
    assert data["accepted_power"] is None
    assert power > 0.1  # the z-test's power: not what the registered procedure achieves
    assert "accepted_power may record at most 0 " in res.stdout  # H1 cannot PASS at this size
    assert "BELOW the Eq. 2 bound" in res.stdout and "REVIEW" in res.stdout
    assert "What a few hundred documents per condition can tell" in res.stdout
    assert "REVIEW" in (tmp_path / "preregistrations" / "mine.yaml").read_text()
    # design says freeze would refuse (exit 2): the size cannot PASS, the power is not accepted
    design = tailgate(tmp_path, "design", "preregistrations/mine.yaml")
    assert design.returncode == 2 and "Traceback" not in design.stderr
    assert "freeze would refuse" in design.stderr and "H1 cannot PASS" in design.stderr


def test_init_from_import_without_a_condition_column_registers_one_condition(tmp_path, monkeypatch):
    src = tmp_path / "data" / "one.jsonl"
    src.parent.mkdir()
    rows = 32_000  # 1,600 exceedances at q = 0.95: just above Eq. 2's 1,570
    src.write_text("".join(json.dumps({"id": i, "score": i / rows}) + "\n" for i in range(rows)))
    res = tailgate(tmp_path, "init", "single", "--from-import", str(src))  # an absolute path
    assert res.returncode == 0, res.stderr
    data = load(tmp_path / "preregistrations" / "single.yaml").data
    assert data["data"]["import"]["path"] == "data/one.jsonl"  # relative to the project root
    assert data["data"]["import"]["columns"]["condition"] is None
    assert data["data"]["import"]["columns"]["score"] == "score"  # the one-scorer form
    assert [c["name"] for c in data["conditions"]] == ["imported"]
    assert data["accepted_power"] is None  # 32,000 rows give 1,600 >= 1,570 exceedances
    assert "meets the Eq. 2 bound" in res.stdout
    # one condition: nothing for the protocol to compare, said by init, refused by design
    assert "one condition (imported)" in res.stdout
    import tailgate.protocol.design as simulation

    def not_simulated(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("design simulated a study that freeze refuses")

    monkeypatch.setattr(simulation, "operating_characteristics", not_simulated)
    design = tailgate(tmp_path, "design", "preregistrations/single.yaml")
    assert design.returncode == 2 and "Traceback" not in design.stderr, design.stderr
    assert "field 'protocol.pairs'" in design.stderr and "1 condition is registered" in (
        design.stderr
    )
    assert "not simulated until what freeze would refuse" in design.stdout


# --- prompt keys and column scorers ----------------------------------------------------------


def import_study(path: Path, score: Any, scorers: list[dict], **columns: Any) -> Study:
    """A loaded pre-registration that imports ``path`` (relative paths resolve against the
    working folder)."""
    cols = {"prompt_id": "id", "condition": "model", "completion": None, "score": score}
    cols.update(columns)
    doc = {
        "study": "unit",
        "sample_cap": 100,
        "conditions": [{"name": "clean", "prompts": 100}, {"name": "heavy", "prompts": 100}],
        "data": {"backend": "import", "import": {"path": str(path), "columns": cols}},
        "generation": {"shards": 1},
        "scorers": copy.deepcopy(scorers),
    }
    return Study(Path("preregistrations/unit.yaml"), doc, "0" * 64, "0" * 64)


TWO = [
    {"name": "tox", "kind": "column", "column": "tox_col", "bounded": True},
    {"name": "sev", "kind": "column", "column": "sev_col", "bounded": False},
]


def test_text_keys_map_to_their_rank_among_all_keys_and_pair_across_conditions(tmp_path):
    rows = [
        {"id": "zeta", "model": "clean", "t": 0.1, "s": 5.0},
        {"id": "alpha", "model": "heavy", "t": 0.2, "s": 6.0},
        {"id": 10, "model": "clean", "t": 0.3, "s": 7.0},  # an integer among text keys
        {"id": "beta", "model": "clean", "t": 0.4, "s": 8.0},
        {"id": "zeta", "model": "heavy", "t": 0.5, "s": 9.0},
    ]
    src = tmp_path / "keys.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = import_study(src, {"tox": "t", "sev": "s"}, TWO)
    tables = {}
    for cond in ("clean", "heavy"):
        out = tmp_path / f"{cond}.parquet"
        generate_shard(study, cond, 0, out, options={})
        tables[cond] = pq.read_table(out).to_pandas()
    order = sorted({str(r["id"]) for r in rows})  # "10" < "alpha" < "beta" < "zeta"
    for cond, frame in tables.items():
        mine = sorted(
            (r for r in rows if r["model"] == cond), key=lambda r: order.index(str(r["id"]))
        )
        assert frame["prompt_key"].tolist() == [str(r["id"]) for r in mine]
        assert frame["prompt_id"].tolist() == [order.index(str(r["id"])) for r in mine]
        assert frame["tox_col"].tolist() == [r["t"] for r in mine]
        assert frame["sev_col"].tolist() == [r["s"] for r in mine]
    zeta = order.index("zeta")
    assert zeta in tables["clean"]["prompt_id"].tolist()
    assert zeta in tables["heavy"]["prompt_id"].tolist()


def test_integer_keys_stay_themselves(tmp_path):
    src = tmp_path / "ints.csv"
    src.write_text("id,model,t\n007,clean,0.1\n3,clean,0.2\n12,heavy,0.3\n")
    study = import_study(
        src, "t", [{"name": "tox", "kind": "column", "column": "tox", "bounded": True}]
    )
    out = tmp_path / "c.parquet"
    generate_shard(study, "clean", 0, out, options={})
    frame = pq.read_table(out).to_pandas()
    assert frame["prompt_id"].tolist() == [3, 7]
    assert frame["prompt_key"].tolist() == ["3", "007"]
    src.write_text("id,model,t\n007,clean,0.1\n7,clean,0.2\n12,heavy,0.3\n")
    with pytest.raises(DataInputError, match=r"row 2, column 'id'.*appears again"):
        generate_shard(study, "clean", 0, out, options={})


@pytest.mark.parametrize(
    ("score", "needle"),
    [
        ("t", "single column"),
        ({"tox": "t"}, "maps no file column to scorer(s) 'sev'"),
        ({"tox": "t", "sev": "s", "tox_col": "t"}, "names no registered scorer"),
        (None, "is null, but scorer(s)"),
    ],
)
def test_the_score_mapping_is_keyed_by_scorer_name(tmp_path, score, needle):
    src = tmp_path / "in.csv"
    src.write_text("id,model,t,s,text\na,clean,0.1,3,x\nb,heavy,0.2,4,y\n")
    study = import_study(src, score, TWO, completion="text")
    with pytest.raises(DataInputError, match=re.escape(needle)):
        generate_shard(study, "clean", 0, tmp_path / "o.parquet", options={})


# --- tailgate design checks the file before anything is frozen ------------------------------


def scaffolded(tmp_path: Path, name: str = "chk") -> Path:
    write_csv(tmp_path / "data" / "scores.csv", rows={"model-a": 400, "model-b": 300})
    res = tailgate(tmp_path, "init", name, "--from-import", "data/scores.csv")
    assert res.returncode == 0, res.stderr
    return tmp_path / "preregistrations" / f"{name}.yaml"


def test_design_prints_the_import_findings(tmp_path):
    from tailgate.authoring.importcheck import import_findings

    prereg = scaffolded(tmp_path)
    text = prereg.read_text().replace("    prompts: 300 ", "    prompts: 350 ", 1)
    prereg.write_text(text)
    lines = import_findings(load(prereg))
    joined = "\n".join(lines)
    assert "700 rows, every row valid" in joined
    assert "text; prompt id = rank of the key among the 400 sorted keys" in joined
    assert "condition model-a: 400 rows (as registered); 20 exceedances" in joined
    assert "condition model-b: 300 rows (fewer than the 350 registered prompts" in joined
    assert "keys present in every condition: 300 of 400" in joined
    assert "scorer severity (file column 'severity' -> severity): range" in joined


@pytest.mark.parametrize(
    ("edit", "needles"),
    [
        (("      completion: response", "      completion: answer"), ["no column 'answer'"]),
        (
            ("  - name: model-b ", "  - name: model-c "),
            ["condition 'model-b' is not registered", "column 'model'"],
        ),
    ],
)
def test_design_refuses_what_the_file_already_shows(tmp_path, edit, needles):
    prereg = scaffolded(tmp_path)
    text = prereg.read_text()
    assert edit[0] in text
    prereg.write_text(text.replace(edit[0], edit[1], 1))
    res = tailgate(tmp_path, "design", prereg)
    assert res.returncode == 2, res.stdout + res.stderr
    assert str(tmp_path / "data" / "scores.csv") in res.stderr
    assert "Fix" in res.stderr or "use one of" in res.stderr
    for needle in needles:
        assert needle in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


def test_design_refuses_a_registered_condition_without_rows(tmp_path):
    prereg = scaffolded(tmp_path)
    text = prereg.read_text()
    extra = "  - name: model-z\n    prompts: 300\n"
    prereg.write_text(text.replace("\ndata:\n", "\n" + extra + "\ndata:\n", 1))
    res = tailgate(tmp_path, "design", prereg)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "no rows for registered condition(s) 'model-z'" in res.stderr


# --- the whole day, through Snakemake ----------------------------------------------------------


# The run itself (init, review, design, freeze, Snakemake, the verdict, the generations' keys
# and the audit) is test_published_tag.py's, where the frozen study is also tagged and cloned.


def test_design_of_an_analysis_only_import_study_ends_without_an_internal_error(tmp_path):
    """The design ``init`` advises for a few hundred imported rows: no protocol, an analysis.
    The import checks of ``design`` read no protocol thresholds then (it exited 1 on a missing
    ``thresholds`` block)."""
    prereg = scaffolded(tmp_path)
    text = prereg.read_text().replace("worse: null", "worse: higher")
    head, _, _ = text.partition("\nprotocol:")
    prereg.write_text(
        head
        + "\nprotocol: {enabled: false}\n"
        + "analyses:\n"
        + "  ranking:\n"
        + "    kind: dominance\n"
        + "    conditions: [model-a, model-b]\n"
        + "    scorers: [severity]\n"
        + "    scale: identity\n"
        + "    criteria:\n"
        + '      - {name: a-safer, statistic: "r_ssd(model-a, model-b)", comparison: "<=",'
        + " threshold: 0.0}\n"
    )
    res = tailgate(tmp_path, "design", prereg)
    assert res.returncode in (0, 2), res.stdout + res.stderr
    assert "internal error" not in res.stderr
    assert "Traceback" not in res.stderr
    assert "700 rows, every row valid" in res.stdout, res.stdout + res.stderr
