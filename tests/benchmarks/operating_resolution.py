"""P1's stand-in interval in the operating characteristics against the registered bootstrap.

Run by path: ``python tests/benchmarks/operating_resolution.py [TRIALS] [RESAMPLES]`` (not
collected by pytest). Simulates the demo's whole registered procedure at Δξ = Δfloor and
1.5 × Δfloor on common data three ways — P1's percentile bootstrap at ``RESAMPLES`` per fit
(default: the registered 10,000), at 100 per fit (the former default), and the
observed-information stand-in ``tailgate design`` uses — and prints each PASS rate with its
Monte Carlo s.e. and the paired disagreements with the registered bootstrap.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from tailgate.plans.registration import load
from tailgate.protocol.design import OC_FACTORS, operating_characteristics

DEMO = Path(__file__).resolve().parents[2] / "preregistrations" / "protocol-demo.yaml"


def run(trials: int, resamples: int | None, factors: tuple[float, ...]) -> tuple[object, float]:
    t = time.perf_counter()
    oc = operating_characteristics(
        load(DEMO), workers=2, trials=trials, resamples=resamples, factors=factors
    )
    return oc, time.perf_counter() - t


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    registered = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    factors = tuple(f for f in OC_FACTORS if f >= 1.0)
    ref, secs = run(trials, registered, factors)
    print(f"percentile bootstrap, {registered} resamples: {secs:.0f} s")
    for label, resamples in (("100 resamples", 100), ("observed-information stand-in", None)):
        oc, secs = run(trials, resamples, factors)
        print(f"{label}: {secs:.0f} s")
        for s, r in zip(oc.scenarios, ref.scenarios, strict=True):
            a, b = set(s.passed_trials["any"]), set(r.passed_trials["any"])
            diff = len(a - b) - len(b - a)
            se = math.sqrt(len(a ^ b) - diff**2 / trials) / trials
            print(
                f"  Δξ = {s.delta_xi:g}: {s.rate('any'):.3f} ± {s.mc_se('any'):.3f} vs "
                f"registered {r.rate('any'):.3f} ± {r.mc_se('any'):.3f}; paired difference "
                f"{diff / trials:+.3f} ± {se:.3f} ({len(a - b)} pass only here, "
                f"{len(b - a)} only with the registered bootstrap)"
            )


if __name__ == "__main__":
    main()
