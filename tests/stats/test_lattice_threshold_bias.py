"""The lattice threshold's rounding and the bias of ξ̂ it leaves where the GPD holds only from q
(methods note P10; a small version of ``tests/benchmarks/lattice_threshold_bias.py``)."""

from __future__ import annotations

import numpy as np
from tailgate.stats import gpd, lattice
from tailgate.stats.gof import sample_gpd

Q, N, H, XI = 0.9, 2000, 1.0, 0.1


def grades(rng: np.random.Generator) -> np.ndarray:
    """A flat latent body on [0, 9] (density 0.1, the tail's at u = 9), GPD(0.1, 1) above u,
    on unit cells at a random offset."""
    tail = rng.random(N) >= Q
    z = rng.random(N) * 9.0
    z[tail] = 9.0 + sample_gpd(rng, XI, 1.0, (int(tail.sum()),))
    return np.floor(z / H + rng.random()) * H


def test_the_registered_rounding_takes_the_tied_cell_and_its_bias() -> None:
    rng = np.random.default_rng(20261129)
    bias, share = [], []
    for _ in range(40):
        x = grades(rng)
        ex = lattice.exceedances(x, Q, H)
        assert ex.u < ex.quantile_value <= ex.u + H  # half a step below x_q
        share.append(ex.n_exc / ((1 - Q) * N))
        bias.append(gpd.fit(ex.y, H).xi - XI)
    # the tied grades at x_q are exceedances: about half a cell of the body more
    assert 1.3 < np.mean(share) < 1.7
    # their part below q pulls ξ̂ down by more than half of Δfloor = 0.1 on h = σ
    assert np.mean(bias) < -0.04
