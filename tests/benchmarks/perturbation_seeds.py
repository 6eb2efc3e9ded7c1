"""How often each criterion of the perturbation example passes over other seeds (prereg reference,
"Example" of the perturbation kind).

Run by path: ``python tests/benchmarks/perturbation_seeds.py [N]``. Seeds 1..N (default 20) of
``preregistrations/perturbation-energy-example.yaml`` as registered, at its sizes: each
condition's responses are the simulate backend's (its ``bernoulli`` model at that seed), each
response is embedded by the registered ``preregistrations/models/tiny-encoder`` (its text is
"Yes." or "No.", so two vectors serve every row), and the kind's own compute and criteria give
the outcomes. The embedding model is loaded once here, not once per condition as the embed jobs
do.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
PREREG = ROOT / "preregistrations" / "perturbation-energy-example.yaml"
LAYOUT = {
    "severities": "{root}/severities/{scorer}/{scale}/{condition}.parquet",
    "embeddings": "{root}/embeddings/{embedder}/{condition}/shard-{shard}.parquet",
}


def _vectors(study) -> np.ndarray:
    """The registered model's embeddings of "No." (row 0) and "Yes." (row 1)."""
    import torch
    from tailgate.generate.simulate import BERNOULLI_TEXTS
    from tailgate.models import load_model, model_spec
    from tailgate.score.embedding import embed_texts

    spec = model_spec(study, "tiny-encoder", condition="any")
    spec = type(spec)(**{**vars(spec), "source": str(ROOT / spec.source)})
    lm = load_model(spec, device=torch.device("cpu"), condition="any", head="base")
    return embed_texts(lm, [BERNOULLI_TEXTS[0], BERNOULLI_TEXTS[1]])


def outcomes(root: Path, seed: int, vectors: np.ndarray) -> dict[str, tuple[str, float]]:
    """Criterion → (outcome, value) of the example at ``seed``."""
    import copy

    from tailgate.analyses.perturbation.kind import PERTURBATION
    from tailgate.generate.simulate import DISCRETE_MODELS
    from tailgate.plans.registration import load
    from tailgate.prereg.study import Study
    from tailgate.seeds import rng

    registered = load(PREREG)
    data = copy.deepcopy(registered.data)
    data["seed"] = seed
    study = Study(registered.path, data, registered.canonical_hash, registered.raw_hash)
    spec = data["analyses"]["composite-null"]
    layout = {k: v.replace("{root}", str(root / str(seed))) for k, v in LAYOUT.items()}
    inputs = PERTURBATION.inputs(spec, study, layout)
    for cond in data["conditions"]:
        n = int(cond.get("prompts") or data["sample_cap"])
        u = rng(seed, "simulate", cond["name"]).random(n)
        yes = DISCRETE_MODELS["bernoulli"](cond["simulate"]["bernoulli"], u, "x")
        for path in inputs["severities"]:
            if Path(path).stem == cond["name"]:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(pa.table({"prompt_id": np.arange(n), "severity": yes}), path)
        for path in inputs["embeddings"]:
            if Path(path).parent.name == cond["name"]:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                blobs = [vectors[int(v)].astype("<f4").tobytes() for v in yes]
                width = 4 * vectors.shape[1]
                table = pa.table(
                    {"prompt_id": np.arange(n), "embedding": pa.array(blobs, pa.binary(width))}
                )
                pq.write_table(table, path)
    stats = PERTURBATION.compute(study, "composite-null", spec, inputs).statistics
    return {o.name: (o.outcome, o.value) for o in PERTURBATION.criteria(spec, stats)}


def main(n: int = 20) -> None:
    from tailgate.plans.registration import load

    vectors = _vectors(load(PREREG))
    tmp = Path(tempfile.mkdtemp())
    passes: Counter[str] = Counter()
    t0 = time.perf_counter()
    for seed in range(1, n + 1):
        out = outcomes(tmp, seed, vectors)
        passes.update(name for name, (outcome, _) in out.items() if outcome == "PASS")
        print(seed, {k: f"{o} {v:.4g}" for k, (o, v) in out.items()}, flush=True)
    print(f"{n} seeds in {time.perf_counter() - t0:.0f} s")
    for name in out:
        print(f"{name}: {passes[name]}/{n}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
