"""Bulk stage: bootstrap replicates of mean and TVaR for G1/G2 (Section 3 of Zhou (2026)).

``bulk[scorer, condition]`` bootstraps one condition's mean and TVaR on every scale of the scorer
from the same prompt resamples (registered B; :func:`tailgate.stats.risk.bulk_bootstrap_scales`)
and writes ``bulk/<scorer>/<condition>.parquet`` (one row per replicate, columns
``mean_<scale>`` and ``tvar_<scale>``). With ``bootstrap.resampling: independent`` each
condition has its own stream (and, from 100,000 prompts, its bottom block's sum is drawn from its
law: methods note P12); with ``paired`` all conditions share one, so conditions aligned by prompt
are resampled together. The gates stage turns the replicates into the CIs of G1/G2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from tailgate.files.atomic import write_parquet
from tailgate.plans.reads import scales_for
from tailgate.seeds import seed_sequence
from tailgate.stats.risk import bulk_bootstrap_scales

from .common import open_stage, read_severities

__all__ = ["bulk_stage"]


def bulk_stage(
    prereg: str | os.PathLike[str],
    results: str | os.PathLike[str],
    scorer: str,
    condition: str,
    severities: Mapping[str, str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    plan: str = "head",
) -> None:
    """Bootstrap replicates of mean and TVaR of ``condition`` on every scale of ``scorer``."""
    ctx = open_stage(prereg, results, plan)
    scales = scales_for(ctx.study, scorer)
    arrays = {s: read_severities(severities[s])[1] for s in scales}
    keys = ("bulk", scorer) if ctx.study.bootstrap.paired else ("bulk", scorer, condition)
    n_boot = ctx.study.bootstrap.resamples
    reps = bulk_bootstrap_scales(
        arrays,
        n_boot,
        seed_sequence(ctx.study.seed, *keys),
        tvar_level=ctx.study.rules.tvar_level,
        paired=ctx.study.bootstrap.paired,
    )
    cols: dict[str, Any] = {"replicate": pa.array(np.arange(n_boot))}
    for s in scales:
        cols[f"mean_{s}"] = pa.array(reps[s].mean, pa.float64())
        cols[f"tvar_{s}"] = pa.array(reps[s].tvar, pa.float64())
    write_parquet(out, pa.table(cols))
    ctx.record(out, inputs=[severities[s] for s in scales], extra={"keys": list(keys)})
