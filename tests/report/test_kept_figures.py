"""The figures an audit drew, kept in the user's figure folder (tailgate/report/kept_figures.py):
a later audit takes them instead of drawing them again, a kept figure that is not what drawing
gives fails the audit (never passes it), and a run never writes there."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tailgate.audit import audit
from tailgate.code import code_digest
from tailgate.report.content import Deferred
from wf_project import Project


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / "tailgate" / "figures" / code_digest()[:16]).glob("*.png"))


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


def test_a_later_audit_takes_the_kept_figures_and_a_wrong_one_fails_it(
    small_copy: Project, cache: Path
) -> None:
    first = audit(small_copy.results)
    assert first.ok, "\n".join(first.lines())
    kept = _kept(cache)
    assert len(kept) >= 3, kept  # the report's distinct figures, each filed once
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in kept)
    assert oct(kept[0].parent.stat().st_mode & 0o777) == "0o700"

    # a later audit builds no figure: each is taken by what it plots, before any is built
    def never_built(self: Deferred) -> None:
        raise AssertionError(f"built a figure the folder holds: {self.key[:80]}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Deferred, "figure", never_built)
        again = audit(small_copy.results)
    assert again.ok, "\n".join(again.lines())

    # a kept figure that is another figure's drawing is taken, so the audit fails: what the
    # folder holds can make an audit fail, never pass
    small, large = sorted(kept, key=lambda p: p.stat().st_size)[:: len(kept) - 1]
    small.write_bytes(large.read_bytes())
    wrong = audit(small_copy.results)
    assert not wrong.ok
    assert any("differs from the report re-rendered" in f for f in wrong.failures), wrong.failures

    # one that cannot be a drawing (not a PNG) is drawn again and filed again
    small.write_bytes(b"not a picture")
    redrawn = audit(small_copy.results)
    assert redrawn.ok, "\n".join(redrawn.lines())
    assert small.read_bytes().startswith(b"\x89PNG")


def test_with_the_figures_kept_a_forged_plotted_number_still_fails(
    small_copy: Project, cache: Path
) -> None:
    from tailgate.prereg.canonical import sha256_file
    from tailgate.runtime.provenance import record_path

    assert audit(small_copy.results).ok
    assert _kept(cache)
    fits = small_copy.results / "fits" / "tox" / "logit" / "base.json"
    doc = json.loads(fits.read_text())
    doc["stability"]["xi"][0] += 0.05
    fits.write_text(json.dumps(doc))
    rec = record_path(fits, small_copy.results)
    content = json.loads(rec.read_text())
    content["sha256"], content["bytes"] = sha256_file(fits), fits.stat().st_size
    rec.write_text(json.dumps(content))
    report = audit(small_copy.results)
    assert not report.ok
    assert any("figures/stability.json: differs from the report re-rendered" in f
               for f in report.failures), report.failures  # fmt: skip


def test_a_folder_others_may_write_is_not_used(small_copy: Project, cache: Path) -> None:
    figures = cache / "tailgate" / "figures"
    figures.mkdir(parents=True, mode=0o700)
    os.chmod(figures, 0o777)
    assert audit(small_copy.results).ok
    assert not any(figures.iterdir())


def test_a_run_never_files_a_figure(small_copy: Project, tmp_path: Path) -> None:
    cache = tmp_path / "run-cache"
    res = small_copy.snakemake("--forcerun", "report", env={"XDG_CACHE_HOME": str(cache)})
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "report" in res.stdout + res.stderr
    assert not (cache / "tailgate" / "figures").exists()


def test_a_figure_kept_under_other_matplotlib_settings_is_not_taken(tmp_path: Path) -> None:
    """The key reads the settings at each use: a change within the process is a new key."""
    import matplotlib
    from tailgate.report.kept_figures import keep, kept_in, taken

    png = b"\x89PNG\r\n\x1a\n" + b"drawn"
    with kept_in(tmp_path):
        keep({"figure": png})
        assert taken(["figure"]) == {"figure": png}
        with matplotlib.rc_context({"lines.linewidth": 7.5}):
            assert taken(["figure"]) == {}
