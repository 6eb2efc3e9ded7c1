"""The grading job of an analysis: ``statistics.json`` made from ``measures.json`` alone, and a
``measures.json`` computed under another spec refused."""

from __future__ import annotations

import json

import pytest
from tailgate.files.atomic import canonical_json_bytes
from tailgate.prereg.study import load
from tailgate.stages.analyses import analysis_document, graded, measures_document
from wf_project import REPO_ROOT

DEMO = REPO_ROOT / "preregistrations" / "protocol-demo.yaml"
NAME = "safety-ranking"
#: statistics of the shape the dominance kind stores (the criteria read the ratios)
STATS = {"ratios": {"r_fsd(qwen, nemo)": 0.0, "r_fsd(llama8b, nemo)": 0.25}, "n": [3, 4]}


def test_the_graded_document_is_the_one_the_statistics_give_through_their_file() -> None:
    study = load(DEMO)
    measures = json.loads(canonical_json_bytes(measures_document(study, NAME, STATS)))
    assert "criteria" not in measures["spec"] and "criteria" in study.analyses()[NAME]
    assert canonical_json_bytes(graded(study, NAME, measures)) == canonical_json_bytes(
        analysis_document(study, NAME, STATS)
    )


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m["spec"].update(resamples=m["spec"].get("resamples", 0) + 1),
        lambda m: m.update(kind="severity"),
        lambda m: m.update(analysis="other"),
        lambda m: m.update(statistics=[1, 2]),
    ],
)
def test_statistics_computed_under_another_spec_are_refused(edit) -> None:
    study = load(DEMO)
    measures = json.loads(canonical_json_bytes(measures_document(study, NAME, STATS)))
    edit(measures)
    with pytest.raises(ValueError, match=NAME):
        graded(study, NAME, measures)
