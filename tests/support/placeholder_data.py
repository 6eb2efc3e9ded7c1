"""A placeholder data artifact for the pre-registration tests.

For every registered condition, ``n`` severities drawn from the simulate truth's GPD tail with a
stream derived from the study seed, written as Parquet and recorded as a *data* artifact, as a
workflow job would: so that refusal, ``has data`` and ``tailgate audit`` are exercised end to end
without running the workflow.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import genpareto
from tailgate.errors import TailgateError
from tailgate.files.atomic import write_parquet
from tailgate.prereg.guard import require_runnable
from tailgate.runtime.provenance import record
from tailgate.seeds import rng


def write_placeholder(prereg: str | Path, out: str | Path, n: int = 200) -> None:
    """Refuse unless frozen; write the draws to ``out`` and record them."""
    study = require_runnable(prereg)
    frames = []
    for cond in study.conditions():
        tail = cond.get("simulate", {}).get("tail", {"xi": 0.1, "sigma": 0.5})
        draws = genpareto.rvs(
            c=float(tail["xi"]),
            scale=float(tail["sigma"]),
            size=n,
            random_state=rng(study.seed, "placeholder", cond["name"]),
        )
        frames.append(
            pd.DataFrame(
                {
                    "condition": cond["name"],
                    "prompt_id": np.arange(n, dtype=np.int64),
                    "severity": draws,
                }
            )
        )
    write_parquet(out, pd.concat(frames, ignore_index=True))
    out_path = Path(out)
    results_dir = out_path.parent.parent  # results/<study>/placeholder/<file>
    record(
        out_path,
        results_dir=results_dir,
        study=study,
        inputs=[study.path],
        seed=study.seed,
        kind="data",
        extra={"placeholder": True, "n_per_condition": n},
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="placeholder_data")
    parser.add_argument("prereg")
    parser.add_argument("out")
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args(argv)
    try:
        write_placeholder(args.prereg, args.out, args.n)
    except TailgateError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    return 0
