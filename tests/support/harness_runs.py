"""lm-evaluation-harness and Inspect run for real, offline, on tiny local models and local tasks
written here (a JSON dataset and a task definition), for the harness-import tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "TQDM_DISABLE": "1",
}
os.environ.update(OFFLINE)

WORDS = " ".join(
    [
        "the quick brown fox jumps over the lazy dog",
        "hello world this is a small test of the tokenizer",
        "what a nice day it is today in the park",
        "she said that the movie was boring and far too long",
        "they walked home together after the game last night",
        "the weather forecast says it will rain tomorrow",
    ]
).split()

#: the head of every task definition: a local JSON dataset, its one split
DATASET = """\
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
"""

LL_TASK = (
    DATASET
    + """\
output_type: loglikelihood
doc_to_text: "{{{{context}}}}"
doc_to_target: "{{{{continuation}}}}"
metric_list:
  - metric: perplexity
    aggregation: perplexity
    higher_is_better: false
"""
)

MC_TASK = (
    DATASET
    + """\
output_type: multiple_choice
doc_to_text: "{{{{context}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{gold}}}}"
metric_list:
  - metric: acc
  - metric: brier_score
"""
)


ROLLING_TASK = (
    DATASET
    + """\
output_type: loglikelihood_rolling
doc_to_text: ""
doc_to_target: "{{{{context}}}}{{{{continuation}}}}"
metric_list:
  - metric: word_perplexity
  - metric: byte_perplexity
  - metric: bits_per_byte
"""
)

FILTERED_TASK = (
    DATASET
    + """\
output_type: generate_until
doc_to_text: "{{{{context}}}}"
doc_to_target: "{{{{continuation}}}}"
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 4
  do_sample: false
filter_list:
  - name: whole
    filter:
      - function: take_first
  - name: first-word
    filter:
      - function: regex
        regex_pattern: '(\\w+)'
      - function: take_first
metric_list:
  - metric: exact_match
"""
)


def documents(n: int, seed: int) -> list[dict]:
    """``n`` documents of random word sequences: a context, a continuation and three choices."""
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(5, 10)))
        cut = int(rng.integers(2, len(words) - 1))
        choices = [" " + " ".join(rng.choice(WORDS, size=2)) for _ in range(3)]
        docs.append(
            {
                "context": " ".join(words[:cut]),
                "continuation": " " + " ".join(words[cut:]),
                "choices": choices,
                "gold": int(rng.integers(0, 3)),
            }
        )
    return docs


def write_lm_eval_tasks(folder: Path, n: int, seed: int = 11) -> Path:
    """A local JSON dataset and four task definitions (``tiny_ll``: the log-likelihood of a
    continuation, metric ``perplexity``; ``tiny_mc``: multiple choice, ``acc`` and
    ``brier_score``; ``tiny_roll``: the rolling log-likelihood of whole documents, as wikitext;
    ``tiny_filters``: generated answers read through two filters) under ``folder`` (the
    harness's ``include_path``)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "docs.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in documents(n, seed)))
    (folder / "tiny_ll.yaml").write_text(LL_TASK.format(name="tiny_ll", data=data))
    (folder / "tiny_mc.yaml").write_text(MC_TASK.format(name="tiny_mc", data=data))
    (folder / "tiny_roll.yaml").write_text(ROLLING_TASK.format(name="tiny_roll", data=data))
    (folder / "tiny_filters.yaml").write_text(FILTERED_TASK.format(name="tiny_filters", data=data))
    return folder


INSPECT_TASK = """\
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, mean, scorer
from inspect_ai.solver import generate

import json

DOCS = [json.loads(line) for line in open({data!r})]


@scorer(metrics=[mean()], worse="lower")
def mean_logprob():
    \"\"\"The mean log-probability of the generated tokens (a number; the low tail is the
    worse one, which the scorer's metadata records for the import).\"\"\"

    async def score(state, target):
        content = state.output.choices[0].logprobs.content
        return Score(value=sum(t.logprob for t in content) / max(len(content), 1))

    return score


@scorer(metrics=[])
def length_label():
    \"\"\"A text label: not a number, so the import skips it.\"\"\"

    async def score(state, target):
        return Score(value="long" if len(state.output.completion) > 12 else "short")

    return score


@task
def tiny_gen():
    samples = [Sample(id=i, input=d["context"], target=d["continuation"])
               for i, d in enumerate(DOCS)]
    return Task(
        dataset=MemoryDataset(samples),
        solver=generate(),
        scorer=[mean_logprob(), length_label()],
    )
"""


def write_inspect_task(folder: Path, n: int, seed: int = 12, name: str = "tiny_gen") -> Path:
    """A local dataset and an Inspect task file (task ``name``: generate, then score the mean
    token log-probability and a text label)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "docs.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in documents(n, seed)))
    task = folder / "tiny_task.py"
    task.write_text(
        INSPECT_TASK.format(data=str(data)).replace("def tiny_gen():", f"def {name}():")
    )
    return task


HARNESS_RUNS = """\
import json
import os
import sys

lm_eval_runs, inspect_runs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if lm_eval_runs:
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager
for run in lm_eval_runs:
    # the local tasks only: indexing the harness's thousands of built-in task files costs 25 s
    manager = TaskManager(include_path=run["include"], include_defaults=False)
    for model in run["models"]:  # what `lm_eval run ... --log_samples --seed 0` does, per model
        tracker = EvaluationTracker(output_path=run["out"])
        results = simple_evaluate(
            model="hf",
            model_args=f"pretrained={model},dtype=float32",
            tasks=run["tasks"].split(","),
            device="cpu",
            batch_size=64,
            log_samples=True,
            evaluation_tracker=tracker,
            task_manager=manager,
            bootstrap_iters=0,  # the aggregate's standard error (11 s a run) is not imported
            random_seed=0,
            numpy_random_seed=0,
            torch_random_seed=0,
            fewshot_random_seed=0,
        )
        samples = results.pop("samples")
        tracker.save_results_aggregated(results=results, samples=samples)
        for task in results["configs"]:
            tracker.save_results_samples(task_name=task, samples=samples[task])
if inspect_runs:
    from inspect_ai import eval as inspect_eval
for run in inspect_runs:
    os.chdir(run["folder"])  # Inspect takes the task file relative to the working folder
    for seed in run["seeds"]:  # what `inspect eval TASK --model hf/MODEL --seed SEED ...` does
        inspect_eval(
            run["task"],
            model=f"hf/{run['model']}",
            log_dir=run["logs"],
            max_tokens=6,
            temperature=1.0,
            logprobs=True,
            seed=seed,
            display="none",
            max_connections=512,  # the HF provider's batch size: a run's samples in one batch
            model_args={"device": "cpu"},
        )
"""


@dataclass(frozen=True)
class LmEvalRuns:
    """lm-evaluation-harness on local models (CPU), one run per entry of ``models``, on the
    comma-separated ``tasks`` found under ``include``, with the samples logged under ``out`` as
    its ``--log_samples`` writes them."""

    models: list[Path]
    tasks: str
    include: Path
    out: Path

    def spec(self) -> dict[str, Any]:
        return {
            "models": [str(m) for m in self.models],
            "tasks": self.tasks,
            "include": str(self.include),
            "out": str(self.out),
        }


@dataclass(frozen=True)
class InspectRuns:
    """Inspect on a local model through its Hugging Face provider: one run (one log under
    ``log_dir``) of the task file ``task`` per seed."""

    model: Path
    task: Path
    log_dir: Path
    seeds: list[int]

    def spec(self) -> dict[str, Any]:
        return {
            "model": str(self.model),
            "task": self.task.name,
            "folder": str(self.task.parent),
            "logs": str(self.log_dir),
            "seeds": list(self.seeds),
        }


def run_harnesses(
    lm_eval: list[LmEvalRuns], inspect: list[InspectRuns]
) -> subprocess.CompletedProcess:
    """The lm-evaluation-harness runs, then the Inspect runs, in one process: the harnesses'
    start-up (PyTorch, transformers, the harness itself) is paid once, and each harness's own
    evaluation and writers do the work."""
    cmd = [
        sys.executable, "-c", HARNESS_RUNS,
        json.dumps([r.spec() for r in lm_eval]), json.dumps([r.spec() for r in inspect]),
    ]  # fmt: skip
    res = subprocess.run(
        cmd, capture_output=True, text=True, check=False, env={**os.environ, **OFFLINE}
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    return res
