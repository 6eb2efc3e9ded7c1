"""The transform runs a condition at a time and its summary in a job of its own: the summary's
clip counts of each condition are the ones that condition's transform recorded with its
severities (two jobs, one transform of the same scores)."""

from __future__ import annotations

import json

from tailgate.plans.layout import Layout
from tailgate.runtime.provenance import record_path


def test_the_summary_counts_what_each_condition_s_transform_recorded(small_run) -> None:
    results = small_run.results
    layout = Layout(results)
    summaries = layout.every("transform_summary")
    assert len(summaries) == 2  # one scorer on two scales
    for summary in summaries:
        doc = json.loads(summary.read_text())
        scorer, scale = doc["scorer"], doc["scale"]
        assert sorted(doc["conditions"]) == ["base", "heavy", "twin"]
        for condition, counted in doc["conditions"].items():
            severities = layout.file("severities", scorer=scorer, scale=scale, condition=condition)
            recorded = json.loads(record_path(severities, results).read_text())["extra"]
            assert counted == recorded and counted["n"] > 0, (summary, condition)
