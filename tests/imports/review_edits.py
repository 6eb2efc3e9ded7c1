"""The review edits a user may make to what ``tailgate init --from-import`` writes, each an
(old, new) text replacement; they keep a test's run small (the stability scan's display
intervals are already Wald ones, with no resamples)."""

from __future__ import annotations

FASTER = [
    ("    resamples: 10000 ", "    resamples: 200   "),
    ("    trials: 80\n", "    trials: 4\n"),
    ("  min_exceedances: 500 ", "  min_exceedances: 100 "),
    ("  band: [0.95, 0.96, 0.97, 0.98, 0.99]", "  band: [0.95, 0.97]"),
    (
        "  # operating_characteristics:",
        "  operating_characteristics: {trials: 20, resamples: 20}\n  #",
    ),
]
