"""The outcome re-made: attacks on the files downstream of the stored statistics.

The honest study's answer is FAIL (H1 KILL, ``attack_project.ATTACK_STUDY``). A motivated
researcher rewrites what a reviewer reads — a figure, ``verdict.json``, the report, the run
ledger — and re-seals each file as the library would (its record's SHA-256 and size, and the
recorded input hashes of every record that read it). The plain audit re-makes the gates, the
sensitivity, ``verdict.json``, the run summary, the report and its figures from the lock and the
stored statistics with the rules' own code and compares each whole (:mod:`tailgate.audit.
outcome`), in the mode of the run that made it (:mod:`tailgate.audit.environment`): each attack
makes it exit 4 naming the file.
"""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

AUDIT_FAILED = 4
#: a matplotlib release other than the locked one, as an attacker would name it
OTHER_MATPLOTLIB = "3.8.0"


def _reseal(proj: Any, rel: str, **versions: str) -> None:
    """Make the record of ``rel`` match the file again, and every record that read it name its
    new hash (what an attacker with the library does); ``versions``: entries of the record's
    ``versions`` to rewrite as well."""
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import PROVENANCE_DIR, record_path

    f = proj.results / rel
    digest = sha256_file(f)
    rec_file = record_path(f, proj.results)
    rec = json.loads(rec_file.read_text())
    rec["sha256"], rec["bytes"] = digest, f.stat().st_size
    rec.setdefault("versions", {}).update(versions)
    rec_file.write_text(json.dumps(rec))
    for other in (proj.results / PROVENANCE_DIR).glob("*.json"):
        doc = json.loads(other.read_text())
        changed = False
        for inp in doc.get("inputs", []):
            if inp.get("artifact") == rel:
                inp["sha256"], changed = digest, True
        if changed:
            other.write_text(json.dumps(doc))


def _picture_reading_pass(png: bytes) -> bytes:
    """A picture of ``png``'s size that reads "H1 PASS"."""
    from PIL import Image, ImageDraw, ImageFont

    with Image.open(io.BytesIO(png)) as img:
        size = img.size
    out = Image.new("RGB", size, "white")
    font = ImageFont.load_default(size=max(size[1] // 4, 10))
    ImageDraw.Draw(out).text((size[0] // 4, size[1] // 3), "H1 PASS", fill="green", font=font)
    buf = io.BytesIO()
    out.save(buf, format="PNG")
    return buf.getvalue()


def _forest_plot_replaced(proj: Any) -> str:
    """Replace the forest plot embedded in ``report.html``; the file's path."""
    html = proj.results / "report.html"
    text = html.read_text()
    # the forest plot: the report's picture titled by the headline scorer and scale
    pictures = re.findall(r"base64,([A-Za-z0-9+/=]+)'", text)
    forest = pictures[1]
    fake = base64.b64encode(_picture_reading_pass(base64.b64decode(forest))).decode("ascii")
    html.write_text(text.replace(forest, fake, 1))
    return "report.html"


def _stability_replaced(proj: Any) -> str:
    png = proj.results / "figures" / "stability.png"
    png.write_bytes(_picture_reading_pass(png.read_bytes()))
    return "figures/stability.png"


def _rerender(proj: Any, verdict: dict[str, Any], fits: list[Path] | None = None) -> None:
    """Write ``verdict`` as verdict.json and re-render the report and figures from it with the
    library, re-sealing every file (the attacker's honest-looking report)."""
    from tailgate.prereg.study import load
    from tailgate.report.stage import render_report, report_inputs
    from tailgate.stages.verdict import verdict_bytes

    study = load(proj.prereg)
    (proj.results / "verdict.json").write_bytes(verdict_bytes(verdict))
    _reseal(proj, "verdict.json")
    inputs = report_inputs(proj.results, study)
    written = render_report(
        proj.results / "verdict.json",
        fits if fits is not None else inputs["fits"],
        inputs["power"],
        proj.results / "report.html",
        proj.results / "report.md",
        {k: proj.results / "figures" / f"{k}.png" for k in ("power", "stability")},
        inputs["analyses"],
        study=study,
    )
    for path, _ in written:
        _reseal(proj, Path(path).relative_to(proj.results).as_posix())


def _as_other_matplotlib(proj: Any) -> None:
    """Every record and the run's ledger line rewritten to name another matplotlib: the run is
    compared in the tolerant mode."""
    from tailgate.runs.ledger import LEDGER
    from tailgate.runtime.provenance import PROVENANCE_DIR

    for rec_file in (proj.results / PROVENANCE_DIR).glob("*.json"):
        rec = json.loads(rec_file.read_text())
        rec["versions"]["matplotlib"] = OTHER_MATPLOTLIB
        rec_file.write_text(json.dumps(rec))
    ledger = proj.results / LEDGER
    line = json.loads(ledger.read_text())
    for env in line["environments"]:
        env["matplotlib"] = OTHER_MATPLOTLIB
    ledger.write_text(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
    _reseal(proj, LEDGER)


def _one_clean_run(proj: Any, verdict: dict[str, Any]) -> None:
    """Rewrite the ledger to one successful run that shows ``verdict``'s answer."""
    from tailgate.runs.ledger import LEDGER, run_summary

    path = proj.results / LEDGER
    line = json.loads(path.read_text().splitlines()[-1])
    line.update(run=1, previous=None, **run_summary(verdict))
    path.write_text(
        json.dumps(line, sort_keys=True, ensure_ascii=True, separators=(",", ":")) + "\n"
    )
    _reseal(proj, LEDGER)


def test_the_honest_run_is_re_made_exactly(honest_audit):
    code, out = honest_audit
    assert code == 0, out
    lines = out.splitlines()
    assert lines[1].startswith("[ok] environment: exact: the run's versions"), lines[:3]
    assert "[ok] outcome: 3 document(s) (gates, sensitivity, analyses, verdict.json) and the" in out
    assert "[ok] report: re-rendered from the re-made verdict" in out
    assert out.count("'tailgate audit --reproduce''s job") == 1  # said once


@pytest.mark.parametrize("doctor", [_forest_plot_replaced, _stability_replaced])
def test_a_doctored_figure_with_its_record_resealed_and_another_matplotlib_fails(proj, doctor):
    """The record of the doctored file names another matplotlib: the run that made it did not
    run with it, and the file is still compared in the run's (exact) mode."""
    rel = doctor(proj)
    _reseal(proj, rel, matplotlib=OTHER_MATPLOTLIB)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    path = f"results/attack/{rel}"
    assert f"{path}: its record names another environment than run 1" in out
    run = json.loads((proj.results / "runs.jsonl").read_text())
    assert f"matplotlib {run['environments'][0]['matplotlib']} → {OTHER_MATPLOTLIB}" in out
    assert f"{path}: differs from the report re-rendered" in out


@pytest.mark.parametrize("doctor", [_forest_plot_replaced, _stability_replaced])
def test_a_doctored_figure_fails_in_the_tolerant_mode_too(proj, doctor):
    """Every record and the run's ledger line rewritten to another matplotlib: the run is then
    compared in the tolerant mode, and the doctored picture still fails on its pixels while the
    honest pictures pass within the drift between matplotlib releases."""
    rel = doctor(proj)
    _reseal(proj, rel)
    _as_other_matplotlib(proj)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert out.splitlines()[1].startswith("[ok] environment: tolerant"), out
    assert "its record names another environment" not in out
    assert "differs from the re-made picture by up to" in out
    failed = [line for line in out.splitlines() if line.startswith("    FAILED")]
    assert failed and all(f"results/attack/{rel}:" in line for line in failed), failed


def test_a_secondary_result_made_the_headline_with_the_report_and_ledger_rewritten_fails(proj):
    """verdict.json names another scale's passing gates as the headline, the report is
    re-rendered from it (with fits copied for that scale), the ledger shows one clean PASS run."""
    from tailgate.prereg.study import load
    from tailgate.runtime.provenance import record

    verdict = proj.verdict()
    study = load(proj.prereg)
    copied = []
    for cond in ("base", "heavy"):
        src = proj.results / "fits" / "tox" / "logit" / f"{cond}.json"
        doc = json.loads(src.read_text())
        doc["scale"] = "identity"
        dst = proj.results / "fits" / "tox" / "identity" / f"{cond}.json"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(json.dumps(doc))
        record(dst, results_dir=proj.results, study=study, kind="derived")
        copied.append(dst)
    second = json.loads(json.dumps(verdict["gates"][0]))
    second["scale"] = "identity"
    second["h1"]["verdict"] = "PASS"
    verdict["gates"].append(second)
    verdict["headline"]["scale"] = "identity"
    verdict["h1"]["verdict"] = "PASS"
    verdict["answer"].update(outcome="PASS", summary="H1 PASS")
    for row in verdict["criteria"]:
        if row.get("analysis") == "protocol":
            row["outcome"] = "PASS"
    _rerender(proj, verdict, fits=[*copied, *(proj.results / "fits" / "tox" / "logit").glob("*")])
    _one_clean_run(proj, verdict)
    code, status = proj.cli("status", proj.prereg)
    assert "PASS" in status  # what the reviewer's status shows
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert "results/attack/verdict.json: differs from the one re-made" in out
    assert "$.headline.scale: 'identity' recorded, 'logit' reproduced" in out
    assert "results/attack/runs.jsonl: run 1 records answer" in out
    assert "results/attack/report.html: differs from the report re-rendered" in out


def test_edited_gate_values_delta_xi_and_band_rule_with_the_report_re_rendered_fail(proj):
    verdict = proj.verdict()
    verdict["band_rule"] = "any"
    for pair in verdict["gates"][0]["pairs"]:
        for at in pair["thresholds"]:
            at["delta_xi"] = 0.01
            for outcome in at["gates"].values():
                if isinstance(outcome.get("value"), float):
                    outcome["value"] *= 0.5
    _rerender(proj, verdict)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert "results/attack/verdict.json: differs from the one re-made" in out
    assert "$.band_rule: 'any' recorded, 'all' reproduced" in out
    assert "delta_xi: 0.01 recorded" in out
    assert "results/attack/report.md: differs from the report re-rendered" in out


def test_report_html_deleted_with_its_record_and_report_md_saying_pass_fails(proj):
    from tailgate.runtime.provenance import record_path

    html = proj.results / "report.html"
    html.unlink()
    record_path(html, proj.results).unlink()
    md = proj.results / "report.md"
    md.write_text(md.read_text().replace("KILL", "PASS").replace("FAIL", "PASS"))
    _reseal(proj, "report.md")
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert "results/attack/report.html: missing (rule 'report' makes it)" in out
    assert "results/attack/report.md: differs from the report re-rendered" in out


def test_a_gates_file_is_re_made_whole_from_the_fits_and_bulk_replicates(proj):
    """A gate value changed in a gates file (its outcome kept) is found: the file is re-made
    from the stored fits and bulk replicates, not only its outcomes re-derived."""
    rel = "gates/tox/logit.json"
    doc = json.loads((proj.results / rel).read_text())
    doc["bulk"][0]["mean"]["ci_low"] = doc["bulk"][0]["mean"]["ci_low"] * 0.9
    (proj.results / rel).write_text(json.dumps(doc))
    _reseal(proj, rel)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert f"results/attack/{rel}: differs from the one re-made" in out
    assert "$.bulk[0].mean.ci_low" in out
