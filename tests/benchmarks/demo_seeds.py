"""How often the demo's four demonstrations happen over other seeds (README, "The demo study").

Run by path: ``python tests/benchmarks/demo_seeds.py [N]``. Seeds 1..N (default 20) of the
registered demo truths, at the registered sizes, with 2,000 bootstrap resamples (the verdicts
depend on B only through CI endpoints at the 0.995 level).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from demo_scenarios import demo_outcome


def main(n: int = 20) -> None:
    tmp = Path(tempfile.mkdtemp())
    rows = []
    t0 = time.perf_counter()
    for seed in range(1, n + 1):
        out = demo_outcome(tmp, seed)
        rows.append(out)
        print(seed, out.h1, {k: v for k, v in vars(out).items() if isinstance(v, bool)}, flush=True)
    keys = [k for k, v in vars(rows[0]).items() if isinstance(v, bool)]
    print(f"{n} seeds in {time.perf_counter() - t0:.0f} s")
    for k in keys:
        print(f"{k}: {sum(getattr(r, k) for r in rows)}/{n}")
    print(f"H1 PASS: {sum(r.h1 == 'PASS' for r in rows)}/{n}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
