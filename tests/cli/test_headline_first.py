"""The headline scorer and scale come first wherever several are listed: the run's ledger line,
``tailgate status`` and ``tailgate multiverse`` (the run summary: ``verdict_lines``)."""

from __future__ import annotations

import json

from tailgate.cli.status import _event_line
from tailgate.runs.ledger import _verdict, _verdicts
from tailgate.runs.summary import headline_first, verdict_lines


def _gates(scorer: str, scale: str, verdict: str) -> dict:
    return {"scorer": scorer, "scale": scale, "headline_q": 0.95, "pairs": [],
            "h1": {"verdict": verdict, "passing_pairs": []}}  # fmt: skip


VERDICT = {
    "headline": {"scorer": "tox", "scale": "logit", "q": 0.95},
    "gates": [
        _gates("grade", "identity", "PASS"),
        _gates("tox", "probability", "KILL"),
        _gates("tox", "logit", "KILL"),
    ],
}


def test_headline_first_keeps_the_others_in_order() -> None:
    got = headline_first(VERDICT["gates"], VERDICT["headline"])
    assert [(g["scorer"], g["scale"]) for g in got] == [
        ("tox", "logit"), ("grade", "identity"), ("tox", "probability")
    ]  # fmt: skip
    assert headline_first(VERDICT["gates"], None) == VERDICT["gates"]
    assert verdict_lines(VERDICT)[0].startswith("H1 tox / logit (headline): KILL")


def test_the_ledger_and_status_lead_with_the_headline(tmp_path) -> None:
    (tmp_path / "verdict.json").write_text(json.dumps(VERDICT))
    verdicts = _verdicts(_verdict(tmp_path))
    assert verdicts[0] == {"scorer": "tox", "scale": "logit", "verdict": "KILL", "headline": True}
    assert all("headline" not in v for v in verdicts[1:])
    event = {"event": "run", "time": "2026-11-20T09:40:02Z", "run": 1, "outcome": "success",
             "jobs_total": 9, "lock_seq": 0, "git": None, "code_digest": "abc",
             "verdicts": list(reversed(verdicts))}  # fmt: skip
    line = _event_line(event)[1]
    assert line.strip().startswith("H1: tox/logit (headline) KILL, ")
