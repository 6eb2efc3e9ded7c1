"""The published runs: each run receipt a reviewer holds is a line of the run ledger.

Every workflow run ends by printing its **run receipt**, the SHA-256 of its line in
``results/<study>/runs.jsonl`` (:mod:`tailgate.runs.ledger`), to publish with the results. The
ledger is hash-chained (each line names the hash of the line before it), so a researcher who
removes an unwelcome run must rewrite every later line, and the chain check alone cannot tell a
rewritten ledger from an honest one. A receipt published before the rewrite can: ``tailgate audit
--expected-run HASH`` fails when no line of the ledger has that hash (a prefix of at least 12
hex digits is accepted), naming the receipt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tailgate.runs.ledger import LEDGER, find_run

from .findings import Check

__all__ = ["check_expected_runs"]


def check_expected_runs(rd: Path, receipts: Sequence[str]) -> Check:
    """The check of the published run receipts (module docstring)."""
    path = rd / LEDGER
    fails: list[str] = []
    notes: list[str] = []
    for receipt in receipts:
        run = find_run(rd, receipt)
        if run is None:
            fails.append(
                f"{path}: holds no run with the published receipt {receipt}: that run was removed "
                "from the ledger or its line rewritten after the receipt was published"
                + ("" if len(receipt.strip()) >= 12 else " (a receipt has at least 12 hex digits)")
            )
        else:
            notes.append(f"receipt {receipt[:12]}… is run {run} of the ledger")
    return Check("published runs", f"{len(receipts)} run receipt(s) in {path}", fails, notes)
