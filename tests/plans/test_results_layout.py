"""The rules write where the results layout says (:mod:`tailgate.plans.layout`): every file of
the small study's DAG (the shared run), as Snakemake's own summary lists it, that a rule writing
an artifact kind of the layout produces is that kind's pattern under ``results/<study>/``, and
the layout names that rule as the file's writer, so that a rule and the layout the stages, the
report and the audit read cannot drift apart."""

from __future__ import annotations

import re

from tailgate.plans.layout import LAYOUT, WRITER, writer_of
from tailgate.runtime.provenance import PROVENANCE_DIR


def _regex(pattern: str) -> str:
    """A layout pattern as a regular expression, each wildcard one path part."""
    parts = re.split(r"\{\w+\}", pattern)
    return "[^/]+".join(re.escape(p) for p in parts)


def test_the_rules_write_the_layouts_files(small_run):
    res = small_run.snakemake("--summary", cores=1, commit=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    rows = [line.split("\t") for line in res.stdout.splitlines() if "\t" in line][1:]
    assert rows, res.stdout[-2000:]
    root = "results/small"
    seen: set[str] = set()
    for path, rule in ((r[0], r[2]) for r in rows):
        kinds = [k for k, writer in WRITER.items() if writer == rule]
        if not kinds or path.startswith(f"{root}/{PROVENANCE_DIR}/"):
            continue
        match = [k for k in kinds if re.fullmatch(_regex(f"{root}/{LAYOUT[k]}"), path)]
        assert match, f"{path}: rule {rule} writes outside the layout of {kinds}"
        assert writer_of(path.removeprefix(f"{root}/")) == rule, path
        seen.update(match)
    # a simulated study without analyses selects no prompts and embeds nothing
    assert seen == set(LAYOUT) - {"prompts", "prompts_digest", "embeddings", "measures", "analysis"}
