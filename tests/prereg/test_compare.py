"""Comparison by content (tailgate.audit.compare), figure content records, the environment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tailgate.audit.compare import (
    ULP_TOLERANCE,
    compare_files,
    compare_tables,
    compare_values,
    report_text,
    ulps,
)
from tailgate.report.content import content_of, digest
from tailgate.report.figures import power_figure, sidecar_path, write_power
from tailgate.runtime.environment import numeric_differences, requirements, same_numerics


def _steps(x: float, k: int) -> float:
    """``x`` moved ``k`` floats up (np.nextafter, independent of the ULP arithmetic)."""
    for _ in range(k):
        x = float(np.nextafter(x, np.inf))
    return x


def test_ulps_count_the_floats_between_two_values() -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(-1e3, 1e3, 200)
    k = rng.integers(0, 50, 200)
    b = np.array([_steps(float(x), int(n)) for x, n in zip(a, k, strict=True)])
    assert np.array_equal(ulps(a, b), k.astype(np.uint64))
    assert np.array_equal(ulps(b, a), k.astype(np.uint64))
    # within one binade the distance is the difference over the spacing
    x = 1.5
    assert int(ulps(x, x + 1000 * np.spacing(x))) == 1000
    # float32 columns are counted in float32 units
    one = np.float32(1.0)
    assert int(ulps(np.array([one]), np.array([np.nextafter(one, np.float32(2))]))[0]) == 1
    assert int(ulps(0.0, -0.0)) == 0 and int(ulps(np.nan, np.nan)) == 0
    assert int(ulps(np.nan, 1.0)) == np.iinfo(np.uint64).max


def _parquet(path: Path, **columns: pa.Array) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def test_tables_within_the_ulp_tolerance_agree_and_the_largest_difference_is_reported(
    tmp_path: Path,
) -> None:
    x = np.linspace(0.1, 5.0, 100)
    moved = x.copy()
    moved[17] = _steps(float(x[17]), 3)
    a = _parquet(tmp_path / "a.parquet", id=pa.array(range(100)), x=pa.array(x))
    b = _parquet(tmp_path / "b.parquet", id=pa.array(range(100)), x=pa.array(moved))
    tolerant = compare_tables(a, b, exact=False)
    assert tolerant.same and tolerant.largest_ulps == 3
    assert tolerant.largest_where == "column 'x', row 17"
    exact = compare_tables(a, b, exact=True)
    assert exact.differences == [
        f"column 'x', row 17: {float(x[17])!r} recorded, {float(moved[17])!r} reproduced "
        "(3 ULP); 1 row(s) differ"
    ]


def test_a_changed_float_beyond_the_tolerance_is_named(tmp_path: Path) -> None:
    x = np.linspace(0.1, 5.0, 100)
    changed = x.copy()
    changed[42] = x[42] * (1 + 1e-6)  # ~4.5e9 ULP
    a = _parquet(tmp_path / "a.parquet", x=pa.array(x))
    b = _parquet(tmp_path / "b.parquet", x=pa.array(changed))
    (diff,) = compare_tables(a, b, exact=False).differences
    assert diff.startswith(
        f"column 'x', row 42: {float(x[42])!r} recorded, {float(changed[42])!r} reproduced"
    )
    assert f"beyond the tolerance of {ULP_TOLERANCE} ULP" in diff and "1 row(s) differ" in diff


def test_integers_and_strings_must_be_equal(tmp_path: Path) -> None:
    a = _parquet(tmp_path / "a.parquet", n=pa.array([1, 2, 3]), s=pa.array(["a", "b", "c"]))
    b = _parquet(tmp_path / "b.parquet", n=pa.array([1, 2, 4]), s=pa.array(["a", "x", "c"]))
    diffs = compare_tables(a, b, exact=False).differences
    assert diffs == [
        "column 'n', row 2: 3 recorded, 4 reproduced; 1 row(s) differ",
        "column 's', row 1: 'a' recorded, 'x' reproduced; 1 row(s) differ".replace("'a'", "'b'"),
    ]


def test_a_schema_mismatch_fails_but_string_offsets_do_not(tmp_path: Path) -> None:
    a = _parquet(tmp_path / "a.parquet", n=pa.array([1, 2, 3], pa.int64()))
    b = _parquet(tmp_path / "b.parquet", n=pa.array([1.0, 2.0, 3.0], pa.float64()))
    (diff,) = compare_tables(a, b, exact=False).differences
    assert diff == "schema: [('n', 'int64')] recorded, [('n', 'double')] reproduced"
    c = _parquet(tmp_path / "c.parquet", s=pa.array(["x", "y"], pa.string()))
    d = _parquet(tmp_path / "d.parquet", s=pa.array(["x", "y"], pa.large_string()))
    assert compare_tables(c, d, exact=False).same


def test_json_values_compare_by_path() -> None:
    rec = {"fits": [{"xi": 0.25, "n": 500, "passed": True}], "verdict": "KILL"}
    near = {"fits": [{"xi": _steps(0.25, 9), "n": 500, "passed": True}], "verdict": "KILL"}
    cmp = compare_values(rec, near, exact=False)
    assert cmp.same and cmp.largest_ulps == 9 and cmp.largest_where == "$.fits[0].xi"
    assert compare_values(rec, near, exact=True).differences == [
        f"$.fits[0].xi: 0.25 recorded, {_steps(0.25, 9)!r} reproduced (9 ULP)"
    ]
    edited = {"fits": [{"xi": 0.25, "n": 501, "passed": True}], "verdict": "PASS"}
    assert compare_values(rec, edited, exact=False).differences == [
        "$.fits[0].n: 500 recorded, 501 reproduced",
        "$.verdict: 'KILL' recorded, 'PASS' reproduced",
    ]
    assert not compare_values({"a": 1}, {"b": 1}, exact=False).same


def _png(shift: int = 0, text: str = "") -> str:
    """A small plot-like picture (base64): a line, moved ``shift`` pixels, and ``text``."""
    import base64
    import io

    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (200, 100), "white")
    draw = ImageDraw.Draw(img)
    draw.line([(10 + shift, 90), (190 + shift, 10)], fill="black", width=2)
    if text:
        draw.text((40, 30), text, fill="green", font=ImageFont.load_default(size=30))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def test_the_report_is_compared_by_text_what_its_figures_plot_and_their_pixels(
    tmp_path: Path,
) -> None:
    """Under other versions an embedded picture drawn a pixel apart passes, one that reads
    something else fails; under the same versions it must be the same bytes."""
    page = "<p>KILL</p><img alt='power' data-content='{d}' src='data:image/png;base64,{b}'/>"
    a = tmp_path / "a.html"
    b = tmp_path / "b.html"
    a.write_text(page.format(d="1" * 64, b=_png()))
    b.write_text(page.format(d="1" * 64, b=_png(shift=1)))
    assert report_text(a.read_text()) == report_text(b.read_text())
    assert compare_files(a, b, exact=False).same
    (diff,) = compare_files(a, b, exact=True).differences  # same versions: the pixels too
    assert diff == "same values, different embedded images under the same versions"
    b.write_text(page.format(d="1" * 64, b=_png(text="H1 PASS")))
    (diff,) = compare_files(a, b, exact=False).differences
    assert diff.startswith("embedded picture 1: ") and "levels of 255 after smoothing" in diff
    b.write_text(page.format(d="2" * 64, b=_png()))
    (diff,) = compare_files(a, b, exact=False).differences
    assert diff.startswith("text line 1:") and "1111" in diff and "2222" in diff


def test_a_rerun_under_other_versions_compares_plotted_floats_not_their_digests(
    tmp_path: Path,
) -> None:
    picture = _png()
    page = "<p>KILL</p><img alt='xi' data-content='{d}' src='data:image/png;base64,{b}'/>"
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    a.write_text(page.format(d="1" * 64, b=picture))
    b.write_text(page.format(d="2" * 64, b=picture))
    assert compare_files(a, b, exact=False, rerun=True).same
    assert not compare_files(a, b, exact=False).same  # re-rendered from the same statistics
    xi = 0.3109078980568384
    side = {"content": {"plots": {"xi": [xi]}}, "content_sha256": "1" * 64}
    near = {"content": {"plots": {"xi": [_steps(xi, 276)]}}, "content_sha256": "2" * 64}
    c, d = tmp_path / "c.json", tmp_path / "d.json"
    c.write_text(json.dumps(side))
    d.write_text(json.dumps(near))
    assert compare_files(c, d, exact=False, rerun=True).same
    assert not compare_files(c, d, exact=True, rerun=True).same
    d.write_text(json.dumps({**near, "content": {"plots": {"xi": [xi + 0.05]}}}))
    (diff,) = compare_files(c, d, exact=False, rerun=True).differences
    assert diff.startswith("$.content.plots.xi[0]: 0.3109078980568384 recorded")


POWER = {
    "n_exc": [100, 200],
    "delta_xi": [0.0, 0.2],
    "pass_rate": [[0.05, 0.04], [0.3, 0.7]],
    "frontier": [{"delta_xi": 0.2, "n_exc_star": 180.0}],
    "power": 0.8,
    "design_n_exc": 150,
    "operating": {"not": "plotted"},
}


def test_a_figure_records_what_it_plots_in_a_sidecar(tmp_path: Path) -> None:
    content = content_of(power_figure(POWER))
    shown = {k: v for k, v in POWER.items() if k != "operating"}
    assert content == {"figure": "power", "plots": {"power": shown}}
    png = tmp_path / "power.png"
    write_power(png, POWER)
    side = json.loads(sidecar_path(png).read_text())
    assert side["image"] == "power.png" and side["content"] == content
    assert side["content_sha256"] == digest(content)
    changed = {**POWER, "pass_rate": [[0.05, 0.04], [0.3, 0.71]]}
    assert digest(content_of(power_figure(changed))) != digest(content)


def test_environment_modes() -> None:
    mine = {"python": "3.11.7", "numpy": "2.4.6", "snakemake": "9.27.1"}
    assert same_numerics(mine, mine)
    assert same_numerics({**mine, "snakemake": "9.0.0"}, mine)  # no number depends on it
    older = {**mine, "numpy": "1.26.0"}
    assert not same_numerics(older, mine)
    assert ("numpy", "1.26.0", "2.4.6") in numeric_differences(older, mine)
    # torch counts only where the record names it (the process that made the file used it)
    auditor = {**mine, "torch": "2.13.0+cpu"}
    assert same_numerics(mine, auditor)
    assert not same_numerics({**mine, "torch": "2.2.0"}, auditor)
    assert not same_numerics({**mine, "torch": "2.13.0+cpu"}, mine)  # not installed here
    text = requirements({**older, "torch": "2.13.0+cpu", "profanity_check": "1.9.1"})
    assert "numpy==1.26.0" in text.splitlines() and "torch==2.13.0" in text.splitlines()
    assert "alt-profanity-check==1.9.1" in text.splitlines()


def _env_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "tailgate.cli", "env", *(str(a) for a in args)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def test_tailgate_env_writes_the_recorded_requirements(tmp_path: Path) -> None:
    rd = tmp_path / "results" / "study"
    (rd / "provenance").mkdir(parents=True)
    versions = {"python": "3.11.7", "numpy": "1.26.0", "pyarrow": "14.0.0"}
    for i in range(3):
        (rd / "provenance" / f"f{i}.json").write_text(json.dumps({"versions": versions}))
    out = tmp_path / "req.txt"
    res = _env_cli(rd, "-o", out)
    assert res.returncode == 0, res.stderr
    lines = out.read_text().splitlines()
    assert "numpy==1.26.0" in lines and "pyarrow==14.0.0" in lines
    empty = tmp_path / "results" / "none"
    empty.mkdir()
    res = _env_cli(empty)
    assert res.returncode == 2 and str(empty) in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("exact", [True, False])
def test_other_files_compare_byte_for_byte(tmp_path: Path, exact: bool) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("x")
    b.write_text("y")
    assert compare_files(a, b, exact=exact).differences == ["the bytes differ"]
