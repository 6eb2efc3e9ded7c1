"""The floor of ``protocol.thresholds.min_levels``: the fewest distinct exceedance values at which
the discretised G4 can reject (a small version of ``tests/benchmarks/g4_min_levels.py``)."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
from tailgate.stats import gof, gpd


def floor() -> int:
    text = resources.files("tailgate.schemas").joinpath("prereg.v1.schema.json").read_text()
    props = json.loads(text)["properties"]["protocol"]["properties"]["thresholds"]["properties"]
    return int(props["min_levels"]["minimum"])


def rejected(k: int, reps: int, seed: int = 20261129) -> int:
    """Hump-shaped grades (Binomial(k − 1, 0.35), 200 exceedances) that G4 rejects at 0.05."""
    rng = np.random.default_rng([seed, k])
    out = 0
    for _ in range(reps):
        y = rng.binomial(k - 1, 0.35, 200) + 0.5
        f = gpd.fit(y, 1.0)
        ad = gof.anderson_darling_lattice(y, 1.0, f, n_boot=99, seed=int(rng.integers(2**32)))
        out += bool(ad.pvalue <= 0.05)
    return out


def test_g4_cannot_reject_below_the_floor_and_can_from_it() -> None:
    k = floor()
    assert k == 4
    assert rejected(k - 1, 10) <= 1  # 3 values: the model reproduces the pattern
    assert rejected(k, 10) >= 4
    assert rejected(k + 2, 10) >= 8
