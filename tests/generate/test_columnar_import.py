"""The columnar check of csv and parquet import files equals the row-by-row one.

:func:`tailgate.generate.importer.checked_rows` checks a csv or parquet file column by column
(a few arrays, never a dict per row) and falls back to :func:`check_rows` where a row has a
problem to name or the keys are text. Here both are run on the same files and compared column
by column, every value and its type; a file with a problem goes the row-by-row way and is refused
with its message.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tailgate.generate import importer
from tailgate.generate.importer import (
    ImportDataError,
    ImportedRows,
    ImportSpec,
    ScoreColumn,
    check_rows,
    checked_rows,
    read_rows,
)

CONDITIONS = ["model-a", "model-b"]


def _spec(
    path: Path, *, condition: str | None = "model", prompt: str | None = "prompt"
) -> ImportSpec:
    return ImportSpec(
        path=path,
        format="csv" if path.suffix == ".csv" else "parquet",
        prompt_id="key",
        condition=condition,
        prompt=prompt,
        completion=None,
        scores=(
            ScoreColumn("tox", "score", "p", True),
            ScoreColumn("raw", "raw_score", "raw", False),
        ),
    )


def _frame(keys: list, n_cond: int = 2, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for cond in CONDITIONS[:n_cond]:
        n = len(keys)
        parts.append(
            pd.DataFrame(
                {
                    "key": keys,
                    "model": cond,
                    "prompt": [f"prompt {i}" for i in range(n)],
                    "p": rng.uniform(size=n),
                    "raw": rng.normal(size=n) * 1e3,
                    "extra": "ignored",
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _row_by_row(spec: ImportSpec, conditions: list[str]) -> tuple[ImportedRows, str]:
    records, unit = read_rows(spec)
    clean, mode = check_rows(spec, records, unit, conditions)
    return ImportedRows.of_records(clean, spec.score_columns), mode


def _same(a: ImportedRows, b: ImportedRows) -> None:
    assert a.prompt_id.dtype == b.prompt_id.dtype == np.int64
    assert a.prompt_id.tolist() == b.prompt_id.tolist()
    rows = np.arange(len(a))
    assert a.key_texts(rows) == b.key_texts(rows)
    for name in ("condition", "prompt", "completion"):
        left, right = getattr(a, name).tolist(), getattr(b, name).tolist()
        assert left == right and [type(v) for v in left] == [type(v) for v in right], name
    assert a.scores.keys() == b.scores.keys()
    for column in a.scores:
        assert a.scores[column].tobytes() == b.scores[column].tobytes(), column


@pytest.mark.parametrize(
    ("suffix", "keys"),
    [
        (".parquet", list(range(40, 0, -1))),  # integer keys, not in order
        (".parquet", [float(k) for k in range(40)]),  # whole numbers written as floats
        (".csv", [f"{k:03d}" for k in range(40)]),  # digits with leading zeros: the text kept
        (".csv", [f" {k} " for k in range(40)]),  # digits with spaces
    ],
)
def test_columnar_rows_equal_the_row_by_row_check(tmp_path, monkeypatch, suffix, keys):
    path = tmp_path / f"scores{suffix}"
    frame = _frame(keys)
    frame.to_parquet(path, index=False) if suffix == ".parquet" else frame.to_csv(path, index=False)
    monkeypatch.setattr(importer, "_CHUNK", 7)  # several chunks, one cut short
    for spec in (_spec(path), _spec(path, prompt=None)):
        calls = []
        monkeypatch.setattr(importer, "check_rows", lambda *a, c=calls: c.append(a) or 1 / 0)
        columnar, mode = checked_rows(spec, CONDITIONS)
        assert not calls and mode == "integer", "checked column by column"
        monkeypatch.undo()
        monkeypatch.setattr(importer, "_CHUNK", 7)
        _same(columnar, _row_by_row(spec, CONDITIONS)[0])


def test_without_a_condition_column_every_row_is_the_one_condition(tmp_path):
    path = tmp_path / "scores.parquet"
    _frame(list(range(30)), n_cond=1).drop(columns="model").to_parquet(path, index=False)
    spec = _spec(path, condition=None)
    columnar, _ = checked_rows(spec, ["model-a"])
    assert set(columnar.condition.tolist()) == {"model-a"}
    _same(columnar, _row_by_row(spec, ["model-a"])[0])


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda f: f.assign(p=f["p"].where(f.index != 5, 1.5)), "row 6, column 'p': score 1.5"),
        (lambda f: f.assign(raw=f["raw"].where(f.index != 3, np.inf)), "row 4, column 'raw'"),
        (lambda f: f.assign(model=f["model"].where(f.index != 2, "model-z")), "'model-z'"),
        (lambda f: f.assign(key=f["key"].where(f.index != 31, 0)), "appears again"),
        # a missing prompt in a text column, a key that is not a whole number (float column)
        (lambda f: f.assign(prompt=f["prompt"].where(f.index != 4, None)), "row 5"),
        (lambda f: f.assign(key=f["key"].astype(float).where(f.index != 7, 2.5)), "row 8"),
    ],
)
def test_a_row_with_a_problem_is_named_row_by_row(tmp_path, edit, needle):
    path = tmp_path / "scores.parquet"
    edit(_frame(list(range(30)))).to_parquet(path, index=False)
    with pytest.raises(ImportDataError, match="bad row") as err:
        checked_rows(_spec(path), CONDITIONS)
    assert needle in str(err.value)


def test_text_and_negative_keys_are_ranked_as_before(tmp_path):
    for keys in ([f"p-{k}" for k in range(30, 0, -1)], list(range(-5, 25))):
        path = tmp_path / "scores.parquet"
        _frame(keys).to_parquet(path, index=False)
        spec = _spec(path)
        rows, mode = checked_rows(spec, CONDITIONS)
        before, mode_before = _row_by_row(spec, CONDITIONS)
        assert mode == mode_before == "text"
        _same(rows, before)
