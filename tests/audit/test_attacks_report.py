"""What the reviewer reads is what the auditor made: attacks on the report itself.

The honest study's answer is FAIL (H1 KILL, ``attack_project.ATTACK_STUDY``). The plain audit
writes the report it re-made from the audited statistics on the reviewer's machine
(``--report``) and compares the researcher's pictures with no share of pixels allowed to differ
(:mod:`tailgate.audit.pictures`); a picture is read by its header before it is decoded; and the
registered free text is inert in either format and shown after the answer.
"""

from __future__ import annotations

import io
import json
import os
import resource
import struct
import zlib
from pathlib import Path
from typing import Any

from test_attacks_outcome import AUDIT_FAILED, _as_other_matplotlib, _reseal


def _repainted(png: bytes) -> tuple[bytes, float]:
    """``png`` with a 16-pixel square painted green (a gate-matrix cell or a forest plot's mark
    repainted as passing): the picture and the share of its pixels that changed."""
    import numpy as np
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(png)) as img:
        before = img.convert("RGB")
    after = before.copy()
    w, h = after.size
    ImageDraw.Draw(after).rectangle((w // 3, h // 2, w // 3 + 15, h // 2 + 15), fill=(44, 160, 44))
    changed = float((np.asarray(before) != np.asarray(after)).any(axis=2).mean())
    buf = io.BytesIO()
    after.save(buf, format="PNG")
    return buf.getvalue(), changed


def test_a_repainted_picture_with_a_tiny_share_of_pixels_changed_fails(proj):
    """Under another matplotlib (the tolerant mode) a small square painted over the stability
    figure — far fewer pixels than the 0.5 % the comparison once let differ — fails the report
    check: no pixel may differ beyond the drift between matplotlib releases."""
    png = proj.results / "figures" / "stability.png"
    data, share = _repainted(png.read_bytes())
    assert 0 < share < 0.005, share  # what a share allowance let pass
    png.write_bytes(data)
    _reseal(proj, "figures/stability.png")
    _as_other_matplotlib(proj)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert out.splitlines()[1].startswith("[ok] environment: tolerant"), out
    assert "results/attack/figures/stability.png: differs from the report re-rendered" in out
    assert "levels of 255 after smoothing, beyond the" in out


def _png_bomb(side: int) -> bytes:
    """A PNG of ``side`` × ``side`` grey pixels, all zero: a few hundred kilobytes of file that
    decode to ``side``² bytes (and to 12 × ``side``² as the float RGB a comparison takes)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    z = zlib.compressobj(9)
    row = bytes(side + 1)  # filter byte 0, then the pixels
    data = b"".join(z.compress(row) for _ in range(side)) + z.flush()
    head = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def _peak_rss_growth_kib(fn: Any) -> tuple[int, Any]:
    """Run ``fn`` in a forked copy of this process; how far its peak resident size rose above
    this process's size at the fork (KiB), and what it returned (pickled back)."""
    import pickle

    with open("/proc/self/statm") as fh:
        start = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, answer, leave without cleaning up
        os.close(r)
        try:
            os.write(w, pickle.dumps(fn()))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        answer = pickle.loads(fh.read())
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss - start, answer


def test_a_png_bomb_fails_from_its_header_with_little_memory(proj):
    """A 40,000 × 40,000 picture in a few hundred kilobytes in place of a figure: the tolerant
    comparison reads its size from the header and fails naming it, never decoding 1.6 GB."""
    from tailgate.audit.compare import compare_files

    bomb = _png_bomb(40_000)
    assert len(bomb) < 2_000_000
    png = proj.results / "figures" / "stability.png"
    honest = proj.root / "honest.png"
    honest.write_bytes(png.read_bytes())
    png.write_bytes(bomb)

    def compared() -> list[str]:
        return compare_files(png, honest, exact=False).differences

    grew, differences = _peak_rss_growth_kib(compared)
    assert len(differences) == 1, differences
    assert differences[0].startswith("a picture of 40000×40000 pixels recorded, "), differences
    assert grew < 100 * 1024, f"the comparison grew by {grew} KiB"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 2 * 1024 * 1024  # no 1.6 GB here

    _reseal(proj, "figures/stability.png")
    _as_other_matplotlib(proj)
    code, out = proj.audit()
    assert code == AUDIT_FAILED, out
    assert "results/attack/figures/stability.png: differs from the report re-rendered" in out
    assert "40000×40000" in out


INJECTED = "H1 PASS\n\n# PASS: every gate holds\n<!--"


def test_an_injected_title_amended_after_data_is_inert_after_the_answer_and_a_deviation(
    proj, tmp_path
):
    """The descriptive ``title`` amended once results exist into Markdown and HTML that would
    show PASS and hide the rest of the report in a comment: the report the audit writes shows it
    escaped, as one paragraph after the answer, and lists the amendment as a deviation."""
    text = proj.prereg.read_text()
    title = next(line for line in text.splitlines() if line.startswith("title:"))
    proj.prereg.write_text(text.replace(title, f"title: {json.dumps(INJECTED)}"))
    code, out = proj.cli("amend", proj.prereg, "--reason", "a <b>clearer</b> *title*")
    assert code == 0 and "data already existed" in out, out
    made = tmp_path / "read-this"
    code, out = proj.audit("--report", str(made))
    assert f"read the report this audit made: {made / 'report.html'}" in out
    md, html = (made / "report.md").read_text(), (made / "report.html").read_text()
    for doc in (md, html):
        assert "<!--" not in doc and "<b>clearer</b>" not in doc
    assert "\n# PASS" not in md and r"\# PASS: every gate holds &lt;!--" in md
    assert r"a &lt;b&gt;clearer&lt;/b&gt; \*title\*" in md  # the amendment's reason, inert
    answer = md.index("# Answer")
    assert answer < md.index("**Title**: H1 PASS \\# PASS")
    assert answer < html.index("<b>Title</b>: H1 PASS # PASS: every gate holds &lt;!--")
    assert "registered text the report shows (title) changed after data existed" in md
    assert md.index("registered text the report shows") < md.index("**Title**")


def test_the_report_the_audit_writes_is_the_stored_one_in_an_honest_study(proj, tmp_path):
    made = tmp_path / "read-this"
    code, out = proj.audit("--report", str(made))
    assert code == 0, out
    assert out.rstrip().endswith(f"read the report this audit made: {made / 'report.html'}")
    names = ["report.html", "report.md", "figures/power.png", "figures/stability.png"]
    names += ["figures/power.json", "figures/stability.json"]
    for rel in names:
        assert (made / rel).read_bytes() == (proj.results / rel).read_bytes(), rel
    # never inside the results folder (a file there would be a file without a record)
    code, out = proj.audit("--report", str(proj.results / "audited"))
    assert code == 2 and "is inside the results folder" in out, out
    assert not (proj.results / "audited").exists()


def test_the_default_report_folder_is_the_auditors_own(proj):
    code, out = proj.audit()
    assert code == 0, out
    read = out.rstrip().splitlines()[-1]
    path = Path(read.split(": ", 1)[1])
    assert path.name == "report.html" and path.is_file()
    assert not path.resolve().is_relative_to(proj.root.resolve())
    assert path.parent.parent.name == f"tailgate-audit-{os.getuid()}"


def test_audits_side_by_side_never_remove_one_anothers_report(tmp_path, monkeypatch):
    """The default folder keeps the newest reports and removes only folders untouched for hours:
    an audit beside this one (the suite's workers, a reviewer's two terminals) is never cut
    short, and a report is put in place whole, by a rename."""
    import time

    from tailgate.cli import audit as cli_audit

    monkeypatch.setattr(cli_audit.tempfile, "tempdir", str(tmp_path))
    mine = tmp_path / f"tailgate-audit-{os.getuid()}"
    mine.mkdir(mode=0o700)
    busy = [mine / f"study-{i:012d}" for i in range(40)]  # being written right now
    for folder in busy:
        folder.mkdir()
    stale = mine / "old-000000000000"
    stale.mkdir()
    hours_ago = time.time() - 7 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    dest = cli_audit._default_report_folder(str(tmp_path / "results" / "study"))
    assert all(folder.is_dir() for folder in busy) and not stale.exists()
    first, second = Path(cli_audit._staged(dest)), Path(cli_audit._staged(dest))
    (first / "report.html").write_text("first")
    (second / "report.html").write_text("second")
    cli_audit._publish(first, dest)
    cli_audit._publish(second, dest)  # replaces the first whole
    assert (dest / "report.html").read_text() == "second"
    assert sorted(p.name for p in mine.iterdir() if p.name.startswith(".")) == []
