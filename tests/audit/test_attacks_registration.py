"""The contract, registration and time: every change after the registration is a deviation, a
criterion is compared one by one, and an amendment cannot describe its own changes.

Each attack starts from the honest ``band_rule: all`` study (verdict KILL) of
:mod:`attack_project` and is flagged as a deviation or fails the audit."""

from __future__ import annotations

import json
import shutil

import pytest

LOOSER = ("band_rule: all", "band_rule: any")


def test_peek_then_amend_before_data_is_still_a_deviation(proj):
    """Run, read the KILL, delete the (never committed) results, amend: no data is found, yet
    the amendment is a deviation from the registered plan, shown in verdict.json and the
    report; ``data_existed`` stays as information."""
    assert proj.verdict()["h1"]["verdict"] == "KILL"
    shutil.rmtree(proj.results)
    proj.replace(*LOOSER)
    code, out = proj.cli("amend", proj.prereg, "--reason", "any is the paper's rule")
    assert code == 0 and "no data existed yet" in out, out
    assert json.loads(proj.lock.read_text())["chain"][-1]["data_existed"] is False
    proj.commit("Amend the band rule")
    res = proj.snakemake()
    assert res.returncode == 0, res.stderr[-2000:]
    verdict = proj.verdict()
    assert verdict["h1"]["verdict"] == "PASS"  # the PASS the researcher was after...
    (dev,) = [d for d in verdict["deviations"] if d["amendment"] == 1]
    assert "protocol.band_rule" in dev["what"] and "loosening" in dev["what"]  # ...flagged
    assert "no data was found then" in dev["what"]
    html = (proj.results / "report.html").read_text()
    assert "Deviation: the results below follow amendment(s) 1" in html
    code, out = proj.audit()
    assert code == 0, out  # an honest amendment: audits clean, listed as a deviation
    assert "before any data was found" in out and "a deviation from the registered plan" in out
    code, out = proj.cli("status", proj.name)
    assert code == 0 and "DEVIATION, before data" in out, out


def test_an_amendment_cannot_describe_its_own_changes(proj):
    """An amendment whose own ``changes`` list was emptied (hashes recomputed, as a forger with
    the library would) still deviates: the changes come from the snapshots."""
    from tailgate.prereg.deviations import amendment_log
    from tailgate.prereg.lock import entry_hash, read_lock, write_lock

    proj.replace(*LOOSER)
    assert proj.cli("amend", proj.prereg, "--reason", "r")[0] == 0
    lock = read_lock(proj.lock)
    amendment = lock.chain[1]
    amendment["changes"] = []
    amendment["entry_hash"] = entry_hash(amendment)
    from tailgate.prereg.lock import new_lock

    forged = new_lock(proj.lock, lock.study, [lock.chain[0], amendment])
    write_lock(forged)
    forged.verify()  # the forged chain is internally consistent
    amendments, deviations = amendment_log(read_lock(proj.lock))
    assert [f["path"] for f in amendments[0]["fields"]] == ["protocol.band_rule"]
    assert len(deviations) == 1 and "protocol.band_rule" in deviations[0]["what"]
    _, out = proj.audit()
    assert "decision fields changed: protocol.band_rule" in out, out


def _criterion(**kw) -> dict:
    return {"name": "win", "statistic": "r_fsd(a, b)", "comparison": "<=", "threshold": 0.0, **kw}


def _with(criteria: list[dict]) -> dict:
    return {"analyses": {"rank": {"kind": "dominance", "criteria": criteria}}}


@pytest.mark.parametrize(
    ("new", "field", "cls"),
    [
        (_criterion(threshold=0.05), "threshold", "loosening"),  # statistic ≤ a larger bound
        (_criterion(threshold=-0.05), "threshold", "tightening"),
        (_criterion(comparison=">=", threshold=0.0), "comparison", "unclassified"),
        (_criterion(comparison="<"), "comparison", "tightening"),
        (_criterion(statistic="r_ssd(a, b)"), "statistic", "unclassified"),
        (_criterion(borderline=0.01), "borderline", "unclassified"),
    ],
)
def test_a_criterion_is_compared_field_by_field_with_its_direction(new, field, cls):
    from tailgate.prereg.diff import diff

    other = _criterion(name="other", comparison=">=", threshold=0.5)
    (change,) = diff(_with([_criterion(), other]), _with([other, new]))  # order is no change
    assert change.field == f"analyses.rank.criteria[win].{field}"
    assert (change.direction, change.decision) == (cls, True)


@pytest.mark.parametrize(
    ("comparison", "old", "new", "cls"),
    [
        (">=", 0.5, 0.4, "loosening"),
        (">", 0.5, 0.6, "tightening"),
        ("==", 0.5, 0.6, "unclassified"),
    ],
)
def test_a_threshold_direction_follows_the_comparison(comparison, old, new, cls):
    from tailgate.prereg.diff import diff

    (change,) = diff(
        _with([_criterion(comparison=comparison, threshold=old)]),
        _with([_criterion(comparison=comparison, threshold=new)]),
    )
    assert change.direction == cls


def test_a_removed_criterion_loosens_and_a_renamed_one_is_named():
    from tailgate.prereg.diff import diff

    two = [_criterion(), _criterion(name="guard", threshold=1.0)]
    (removed,) = diff(_with(two), _with(two[:1]))
    assert (removed.field, removed.kind, removed.direction) == (
        "analyses.rank.criteria[guard]", "removed", "loosening",
    )  # fmt: skip
    (renamed,) = diff(_with(two), _with([two[0], {**two[1], "name": "guard2"}]))
    assert (renamed.kind, renamed.old, renamed.new) == ("renamed", "guard", "guard2")
