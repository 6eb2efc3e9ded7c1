"""Speed of the design-time simulations, each against its peer in the same run.

Run by path: ``python tests/benchmarks/bench_operating.py`` (not collected by pytest).

1. App. E P1∧P2 cell (n_exc = 1,500, 80 trials × 80 resamples, P1 at the demo's 0.995):
   vectorised across trials and replicates (``simulate_pass_rate``) vs one
   ``gpd.bootstrap`` per trial and condition (the per-trial loop it replaced).
2. Operating characteristics of the demo's whole registered procedure
   (``operating_characteristics``: 4 truths × 200 trials, 30,000 prompts per condition, one
   thread). No peer simulates a registered procedure, so this one prints its wall time only.
3. The same procedure under the lattice rule (``simulate_procedure(lattice_step=...)``: GPD
   tails of 6,000 prompts, band 0.90/0.92/0.94, 4 truths × 200 trials, on the lattices that
   leave 30 and 60 distinct exceedance values at the headline threshold) vs its continuous peer
   on the same registration: the rates side by side, and the cost of fitting and testing every
   trial by the discretised likelihood.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from tailgate.plans.registration import load
from tailgate.protocol.design import operating_characteristics
from tailgate.protocol.gates import GateSettings
from tailgate.protocol.recovery import simulate_pass_rate
from tailgate.stats import gpd
from tailgate.stats.gof import sample_gpd

DEMO = Path(__file__).resolve().parents[2] / "preregistrations" / "protocol-demo.yaml"


def per_trial_loop(delta_xi: float, n: int, trials: int, resamples: int, level: float) -> float:
    rng = np.random.default_rng(0)
    passes = 0
    for m in range(trials):
        cis, xis = [], []
        for xi in (0.0, delta_xi):
            y = sample_gpd(rng, xi, 1.0, n)
            b = gpd.bootstrap(y, resamples, seed=m, workers=1)
            cis.append(b.ci(level))
            xis.append(b.fit.xi)
        passes += (cis[0][1] < cis[1][0] or cis[1][1] < cis[0][0]) and abs(xis[0] - xis[1]) > 0.1
    return passes / trials


def bench_pass_rate() -> None:
    args = (0.15, 1500)
    t = time.perf_counter()
    settings = GateSettings(alpha=0.005)  # P1 at 0.995
    fast = simulate_pass_rate(*args, settings, trials=80, resamples=80, seed=1, workers=1)
    ours = time.perf_counter() - t
    t = time.perf_counter()
    slow = per_trial_loop(*args, 80, 80, 0.995)
    peer = time.perf_counter() - t
    print(
        f"App. E cell: vectorised {ours:.2f} s (rate {fast.rate:.3f}) vs per-trial bootstraps "
        f"{peer:.2f} s (rate {slow:.3f}): {peer / ours:.1f}x"
    )


def bench_operating_characteristics() -> None:
    study = load(DEMO)
    t = time.perf_counter()
    oc = operating_characteristics(study, workers=1)
    ours = time.perf_counter() - t
    print(f"operating characteristics of the demo (1 thread): {ours:.1f} s")
    for line in oc.describe():
        print(line)


def bench_lattice() -> None:
    from tailgate.protocol.operating import simulate_procedure
    from tailgate.protocol.operating_lattice import reference_step

    settings = GateSettings(
        delta_mu=1.0, delta_tvar=5.0, n_star=150, stability_delta=0.02, stability_tolerance=0.1
    )
    band, n = (0.90, 0.92, 0.94), 6000

    def sample(rng: np.random.Generator, dxi: float, shape: tuple[int, int]) -> np.ndarray:
        xi = 0.1 + dxi
        return sample_gpd(rng, xi, 1.0 - xi, shape)

    for levels in (None, 60, 30):
        step = None
        if levels is not None:
            step = reference_step(sample, n, band[1], levels, np.random.SeedSequence(5))
        t = time.perf_counter()
        oc = simulate_procedure(
            settings, band=band, headline_q=band[1], band_rule="any", n_prompts=n,
            sample=sample, delta_xis=[0.0, 0.05, 0.1, 0.2], trials=200, resamples=None,
            min_side_exceedances=100, seed=20260615, lattice_step=step,
        )  # fmt: skip
        rates = ", ".join(
            f"Δξ {s.delta_xi:g}: {s.rate('any'):.3f} ± {s.mc_se('any'):.3f}" for s in oc.scenarios
        )
        where = "continuous" if step is None else f"lattice of {levels} levels (h = {step:.3g})"
        print(f"operating characteristics, {where}: {time.perf_counter() - t:.1f} s; {rates}")


if __name__ == "__main__":
    bench_pass_rate()
    bench_operating_characteristics()
    bench_lattice()
