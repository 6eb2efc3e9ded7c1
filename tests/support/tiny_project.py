"""A throw-away tailgate project whose studies run real LLM code paths on tiny local models.

:func:`build_assets` saves a tiny causal LM, a tiny BERT with a Detoxify-format checkpoint and a
RealToxicityPrompts-schema JSONL under one directory; :func:`transformers_study` and
:func:`import_study` write pre-registrations that use them (every scorer kind: ``detoxify``,
``profanity``, ``token_nll``, ``column``); :func:`make_project` lays out ``config/`` and
``preregistrations/`` and :func:`freeze` locks a study, so that
``snakemake -s <repo>/Snakefile -d <project>`` runs it like a user's project.

Used by tests/workflow/test_workflow_llm.py, tests/slurm/ and, as a script, by
tests/slurm/run_slurm_check.sh::

    python tests/support/tiny_project.py PROJECT_DIR [--study NAME] [--prompts N] [--shards K]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import wf_project
from study_texts import protocol_block

REPO_ROOT = Path(__file__).resolve().parents[2]

#: The decision rules of a small study (the fit/gates stages are not the target of these runs).
PROTOCOL = protocol_block(bootstrap_resamples=200)


@dataclass(frozen=True)
class TinyAssets:
    """Locally built models and data that a tiny study registers by path."""

    lm: Path
    bert: Path
    detoxify_checkpoint: Path
    prompts: Path


def build_assets(root: Path, *, prompts: int = 40) -> TinyAssets:
    """Build the tiny LM, BERT, Detoxify checkpoint and prompts JSONL under ``root``."""
    from tiny_models import (
        build_detoxify_checkpoint,
        build_tiny_bert,
        build_tiny_lm,
        write_rtp_jsonl,
    )

    root.mkdir(parents=True, exist_ok=True)
    lm = build_tiny_lm(root / "tiny-lm", early_stop=False)  # no empty completions
    bert = root / "tiny-bert"
    build_tiny_bert(bert)
    ckpt = build_detoxify_checkpoint(bert, root / "toxic_tiny.ckpt")
    data = write_rtp_jsonl(root / "rtp.jsonl", prompts)
    return TinyAssets(lm=lm, bert=bert, detoxify_checkpoint=ckpt, prompts=data)


def transformers_study(
    name: str,
    assets: TinyAssets,
    *,
    prompts: int = 8,
    shards: int = 2,
    max_new_tokens: int = 6,
    seed: int = 12,
    noise: float = 0.25,
    extra_models: str = "",
    extra_conditions: str = "",
    extra_scorers: str = "",
    scorers: str | None = None,
) -> str:
    """A study on the ``transformers`` backend: a clean and an embedding-noise condition of the
    tiny LM, scored by all four scorer kinds (``column`` reads ``completion_tokens``), or by
    ``scorers`` (YAML lines) instead.

    ``extra_*`` are YAML lines appended to ``models``, ``conditions`` and ``scorers``.
    """
    ckpt, config = json.dumps(str(assets.detoxify_checkpoint)), json.dumps(str(assets.bert))
    if scorers is None:
        scorers = (
            f"  - {{name: toxicity, kind: detoxify, checkpoint: {ckpt}, config_path: {config}}}\n"
            "  - {name: profanity, kind: profanity}\n"
            "  - {name: nll, kind: token_nll, judge: tiny}\n"
            "  - {name: length, kind: column, column: completion_tokens, bounded: false}\n"
        )
    scorers += extra_scorers
    return f"""\
# a tiny study on locally built models
schema_version: 1
study: {name}
title: "tiny transformers study"
seed: {seed}
hypotheses: {{H1: "embedding noise changes the tail"}}
sample_cap: 40000
accepted_power: 0
models:
  tiny: {{id: {json.dumps(str(assets.lm))}, dtype: float32, prompt_format: plain}}
{extra_models}data:
  backend: transformers
  prompts: {{source: {json.dumps(str(assets.prompts))}, split: train, order: dataset}}
generation: {{temperature: 1.0, top_p: 0.9, max_new_tokens: {max_new_tokens}, shards: {shards}}}
conditions:
  - {{name: clean, model: tiny, prompts: {prompts}, perturbation: {{kind: none}}}}
  - name: noisy
    model: tiny
    prompts: {prompts}
    perturbation: {{kind: embedding_noise, sigma_rel: {noise}}}
{extra_conditions}scorers:
{scorers}{PROTOCOL}"""


def import_study(name: str, data: Path, *, shards: int = 2, seed: int = 5) -> str:
    """A study on the ``import`` backend: completions and scores from ``data`` (JSONL with
    prompt_id, condition, completion, score), scored by ``column`` and ``profanity``."""
    return f"""\
# a tiny study on imported completions and scores
schema_version: 1
study: {name}
title: "tiny import study"
seed: {seed}
hypotheses: {{H1: "the imported conditions' tails differ"}}
sample_cap: 40000
accepted_power: 0
data:
  backend: import
  import: {{path: {json.dumps(str(data))}, format: jsonl}}
generation: {{shards: {shards}}}
conditions:
  - {{name: base}}
  - {{name: tuned}}
scorers:
  - {{name: imported, kind: column, column: score, bounded: true}}
  - {{name: profanity, kind: profanity}}
{PROTOCOL}"""


def write_import_data(path: Path, *, per_condition: int = 10) -> Path:
    """Imported rows for conditions ``base`` and ``tuned`` (completions and probabilities)."""
    from tiny_models import SENTENCES

    rows = []
    for c, condition in enumerate(("base", "tuned")):
        for i in range(per_condition):
            rows.append(
                {
                    "prompt_id": i,
                    "condition": condition,
                    "completion": SENTENCES[(i + c) % len(SENTENCES)],
                    "score": round(((i * 7 + c * 3) % 10) / 10 + 0.05, 3),
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


#: Operational settings for CPU runs of tiny models (config/config.yaml; never hashed).
CPU_CONFIG = {
    "generation": {"batch_size": 4, "device": "cpu", "progress": False},
    "scoring": {"batch_size": 4, "device": "cpu", "progress": False},
    "threads": 1,
}


def make_project(root: Path, name: str, text: str, *, config: dict | None = None) -> Path:
    """Lay out ``root/config/config.yaml`` and ``root/preregistrations/<name>.yaml``."""
    import yaml

    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "preregistrations").mkdir(exist_ok=True)
    settings = {"study": name, **(CPU_CONFIG if config is None else config)}
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    prereg = root / "preregistrations" / f"{name}.yaml"
    prereg.write_text(text)
    return prereg


def freeze(prereg: Path) -> None:
    """``tailgate freeze PREREG`` (exit 0 expected)."""
    from tailgate.cli import main

    code = main(["freeze", str(prereg)])
    if code != 0:
        raise RuntimeError(f"tailgate freeze {prereg} exited {code}")


def workflow_project(root: Path, name: str):
    """The protocol-workflow tests' ``Project`` helper (tests/support/wf_project.py) for
    ``root``: ``.snakemake(*args, cores=N)`` runs ``snakemake -s <repo>/Snakefile -d root``."""
    return wf_project.Project(root, name)


def score_shards(name: str, scorers: list[str], conditions: list[str], shards: int) -> list[str]:
    """The score shards ``results/<study>/scores/<scorer>/<condition>/shard-<k>.parquet``."""
    return [
        f"results/{name}/scores/{s}/{c}/shard-{k}.parquet"
        for s in scorers
        for c in conditions
        for k in range(shards)
    ]


def scores_table(results: Path, scorer: str, condition: str):
    """Every score shard of ``condition`` under ``results`` (results/<study>), by prompt id."""
    import pandas as pd
    import pyarrow.parquet as pq

    folder = Path(results) / "scores" / scorer / condition
    paths = sorted(p for p in folder.glob("shard-*.parquet") if p.name.count(".") == 1)
    assert paths, f"no score shards of {scorer}/{condition} in {results}"
    table = pd.concat([pq.read_table(p).to_pandas() for p in paths])
    return table.sort_values("prompt_id").reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    """Build the assets and a frozen tiny transformers study in PROJECT_DIR."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--study", default="tiny")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--shards", type=int, default=2)
    args = parser.parse_args(argv)
    root = args.project.resolve()
    assets = build_assets(root / "assets")
    text = transformers_study(args.study, assets, prompts=args.prompts, shards=args.shards)
    freeze(make_project(root, args.study, text))
    print(f"frozen study {args.study!r} in {root}")
    return 0


if __name__ == "__main__":
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    sys.exit(main())
