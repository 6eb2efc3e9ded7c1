"""Speed of the demo analysis's heavy stages, each against its peer measured in the same run.

Run by path: ``python tests/benchmarks/bench_demo.py`` (not collected by pytest). Prints ratios.
Data: the demo study's simulated conditions (``preregistrations/protocol-demo.yaml``), B = 10,000.

1. Bulk bootstrap (G1/G2, one condition on both scales) at n = 30,000 and 60,000:
   :func:`tailgate.stats.risk.bulk_bootstrap_scales` against the previous implementation (the
   windowed counting of the former ``protocol/bulk.py``, reproduced below as the peer) and
   against plain resampling (``x[idx]`` per replicate with ``np.quantile``, timed on 640
   replicates and extrapolated). The replicates must equal the peer's to 10⁻¹² (the same
   resamples, summed in another order).
2. Fit stage (one condition, one scale): :func:`tailgate.stages.fit.fit_condition` with its
   G5 side fits read from the stability scan, against the previous order (side fits refitted),
   and its band bootstraps against a loop of ``scipy.stats.genpareto.fit`` (timed on 100
   resamples, extrapolated).
3. Job start-up: the import time of each stage module in a fresh interpreter, against the same
   import plus the report package that the rule adapter used to load.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.stats as st
from scipy.special import expit
from tailgate.plans.registration import load
from tailgate.seeds import seed_sequence
from tailgate.stats import gpd
from tailgate.stats.gpd import _block_rng, seed_sequence_of
from tailgate.stats.risk import BLOCK, BulkBootstrap, bulk_bootstrap_scales, exceedances, tvar

REPO = Path(__file__).resolve().parents[2]
B = 10_000


def demo_severities(condition: str) -> dict[str, np.ndarray]:
    """One demo condition's severities on both scales, as the workflow computes them."""
    from tailgate.data.transform import transform_scores
    from tailgate.generate.simulate import simulate_condition, truth_from_spec

    study = load(REPO / "preregistrations" / "protocol-demo.yaml")
    cond = study.condition(condition)
    latent = simulate_condition(
        study.seed, condition, truth_from_spec(cond["simulate"]), int(cond["prompts"])
    )
    scores = np.clip(expit(latent), np.nextafter(0.0, 1.0), np.nextafter(1.0, 0.0))
    eps = float(study.data["transform"]["epsilon"])
    return {s: transform_scores(scores, s, eps).values for s in ("probability", "logit")}


def previous_bulk(
    scales: dict[str, np.ndarray], n_boot: int, seed: np.random.SeedSequence, level: float = 0.9
) -> dict[str, BulkBootstrap]:
    """The previous implementation (former ``protocol/bulk.py``): whole-block counting."""
    names = list(scales)
    arrays = [np.asarray(scales[k], dtype=np.float64) for k in names]
    n = arrays[0].size
    order = np.argsort(arrays[0], kind="stable")
    sorted_ = [a[order] for a in arrays]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    h = (n - 1) * level
    k0 = math.floor(h)
    frac = h - k0
    k1 = min(k0 + 1, n - 1)
    lo = max(0, int(k0 - 8.0 * (math.sqrt(n * level * (1.0 - level)) + 1.0)))

    def tvar_rows(counts, xs, base, lo):
        part = xs[lo:]
        cum = np.cumsum(counts, axis=1) + base[:, None]
        ok = base <= k0
        j0 = np.minimum(lo + (cum <= k0).sum(axis=1), n - 1)
        j1 = np.minimum(lo + (cum <= k1).sum(axis=1), n - 1)
        u = xs[j0] + frac * (xs[j1] - xs[j0])
        wa = counts * (part[None, :] > u[:, None])
        cnt = wa.sum(axis=1)
        tot = wa @ part
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(cnt > 0, tot / cnt, u), ok

    means = [np.empty(n_boot) for _ in names]
    tvars = [np.empty(n_boot) for _ in names]
    for b in range(-(-n_boot // BLOCK)):
        first, last = b * BLOCK, min((b + 1) * BLOCK, n_boot)
        rows = last - first
        r = rank[_block_rng(seed, b).integers(0, n, size=(BLOCK, n))[:rows]]
        r += np.arange(rows)[:, None] * n
        counts = np.bincount(r.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        base = counts[:, :lo].sum(axis=1)
        for i, xs in enumerate(sorted_):
            means[i][first:last] = (counts @ xs) / n
            tv, ok = tvar_rows(counts[:, lo:], xs, base, lo)
            if not ok.all():
                tv, _ = tvar_rows(counts, xs, np.zeros(rows), 0)
            tvars[i][first:last] = tv
    return {
        k: BulkBootstrap(means[i], tvars[i], level, float(arrays[i].mean()), tvar(arrays[i]))
        for i, k in enumerate(names)
    }


def best_of(k: int, fn) -> tuple[float, object]:
    times, out = [], None
    for _ in range(k):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def bench_bulk() -> None:
    for condition in ("qwen", "effect-a"):
        x = demo_severities(condition)
        seed = seed_sequence(20260615, "bulk", "toxicity", condition)
        ours, new = best_of(2, lambda x=x, seed=seed: bulk_bootstrap_scales(x, B, seed))
        peer, old = best_of(2, lambda x=x, seed=seed: previous_bulk(x, B, seed))
        # the same resamples; the sums in another order (methods note P11): equal to 1e-12
        same = all(
            np.allclose(new[s].mean, old[s].mean, rtol=0, atol=1e-12)
            and np.allclose(new[s].tvar, old[s].tvar, rtol=0, atol=1e-12)
            for s in x
        )
        n = x["logit"].size
        m = 640
        ss = seed_sequence_of(seed)
        t = time.perf_counter()
        for b in range(m // BLOCK):
            idx = _block_rng(ss, b).integers(0, n, size=(BLOCK, n))
            for s in x.values():
                xr = s[idx]
                xr.mean(axis=1)
                u = np.quantile(xr, 0.9, axis=1)
                np.array([row[row > q].mean() for row, q in zip(xr, u, strict=True)])
        naive = (time.perf_counter() - t) * B / m
        print(
            f"bulk bootstrap n={n:,} B={B:,}, 2 scales: {ours:.2f} s; previous {peer:.2f} s "
            f"(ratio {peer / ours:.2f}x, replicates equal to 1e-12: {same}); plain resampling "
            f"~{naive:.0f} s (ratio {naive / ours:.0f}x, {m} replicates extrapolated)"
        )


def bench_fit() -> None:
    from tailgate.stages.common import scan_quantiles
    from tailgate.stages.fit import fit_condition, fit_threshold
    from tailgate.stats.stability import stability_scan

    study = load(REPO / "preregistrations" / "protocol-demo.yaml")
    p = study.protocol
    x = demo_severities("qwen")["logit"]
    keys = ("toxicity", "logit", "qwen")

    def current():
        return fit_condition(
            x, study=study, scorer="toxicity", scale="logit", condition="qwen", progress=False
        )

    def previous():  # band fits with their side fits refitted, then the scan
        out = [
            fit_threshold(x, q, study=study, keys=keys, probability=False)
            for q in study.thresholds.band
        ]
        stability_scan(
            x,
            scan_quantiles(study),
            min_exceedances=int(p["stability"]["min_exceedances"]),
            n_boot=int(p["stability"]["resamples"]),
            seed=seed_sequence(study.seed, "scan", *keys),
        )
        return out

    ours, doc = best_of(2, current)
    peer, old = best_of(2, previous)
    same = [t for t, _ in old] == doc["thresholds"]
    print(
        f"fit stage (qwen, logit; 5 thresholds x B={B:,} + 58-point scan x 200): {ours:.2f} s; "
        f"previous order {peer:.2f} s (ratio {peer / ours:.2f}x, same thresholds: {same})"
    )
    ex = exceedances(x, 0.95)
    f = gpd.fit(ex.y)
    boot, _ = best_of(2, lambda: gpd.bootstrap(ex.y, B, 1, full_fit=f, workers=1))
    idx = _block_rng(seed_sequence_of(1), 0).integers(0, ex.n_exc, size=(100, ex.n_exc))
    t = time.perf_counter()
    for row in idx:
        st.genpareto.fit(ex.y[row], floc=0)
    scipy_total = (time.perf_counter() - t) / idx.shape[0] * B
    print(
        f"  band bootstrap at q=0.95 (n_exc={ex.n_exc:,}, B={B:,}, 1 thread): {boot:.2f} s; "
        f"scipy genpareto.fit loop ~{scipy_total:.0f} s (ratio {scipy_total / boot:.0f}x, "
        "100 resamples extrapolated)"
    )


def import_seconds(code: str, repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - t)
    return best


def bench_imports() -> None:
    base = import_seconds("pass")
    print(f"job start-up (fresh interpreter, best of 3; bare interpreter {base:.2f} s):")
    for stage in ("data", "transform", "fit", "bulk", "gates", "power"):
        mod = f"import tailgate.stages.rule, tailgate.stages.{stage}"
        ours = import_seconds(mod)
        peer = import_seconds(mod + ", tailgate.report.model")
        print(f"  {stage:10s} {ours:.2f} s; with the report package {peer:.2f} s "
              f"(ratio {peer / ours:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    bench_bulk()
    bench_fit()
    bench_imports()
