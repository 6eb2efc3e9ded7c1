"""Scores in from the harnesses researchers run: lm-evaluation-harness (``--log_samples``) and
Inspect, each run for real on tiny local models and local tasks, imported with ``tailgate init
--from-import``, frozen, run through Snakemake and audited; a changed harness output file is
refused at run time like any pinned file."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from git_repo import git_commit
from harness_runs import (
    InspectRuns,
    LmEvalRuns,
    run_harnesses,
    write_inspect_task,
    write_lm_eval_tasks,
)
from review_edits import project, review, tailgate
from tailgate.plans.registration import load
from tiny_models import build_tiny_lm

DOCS = 400  # documents per lm-eval task: 20 exceedances at q = 0.95
SAMPLES = 200  # samples per Inspect run (generation is the slow part)
FEW_DOCS = 40  # documents per lm-eval task where only the conditions and metrics are read


@pytest.fixture(scope="module")
def tiny_pair(tmp_path_factory) -> tuple[Path, Path]:
    """Two random-init tiny GPT-2 models with locally trained tokenizers (``save_pretrained``)."""
    root = tmp_path_factory.mktemp("harness-models")
    return (
        build_tiny_lm(root / "tiny-a", chat=True, seed=0),
        build_tiny_lm(root / "tiny-b", chat=True, seed=1),
    )


@dataclass(frozen=True)
class HarnessOutputs:
    """What the harnesses wrote: lm-eval's samples of the first two tasks for both models
    (:data:`DOCS` documents), for two runs of one model (:data:`FEW_DOCS` documents), of the
    rolling and the filtered task for both models (:data:`FEW_DOCS` documents); Inspect's logs
    of two runs of one model (:data:`SAMPLES` samples) and of a second task (:data:`FEW_DOCS`)."""

    lm_eval: Path
    lm_eval_twice: Path
    lm_eval_more: Path
    inspect: Path
    inspect_other: Path


@pytest.fixture(scope="module")
def harness_outputs(tmp_path_factory, tiny_pair) -> HarnessOutputs:
    """lm-evaluation-harness and Inspect run once for the module, in one process; each test
    copies the outputs it imports into its own project."""
    root = tmp_path_factory.mktemp("harness-outputs")
    out = HarnessOutputs(
        root / "lm-eval",
        root / "lm-eval-twice",
        root / "lm-eval-more",
        root / "inspect",
        root / "inspect-other",
    )
    run_harnesses(
        lm_eval=[
            LmEvalRuns(  # two tasks, two models
                list(tiny_pair), "tiny_ll,tiny_mc", write_lm_eval_tasks(root / "tasks", DOCS),
                out.lm_eval,
            ),
            LmEvalRuns(  # two tasks, two runs of one model
                [tiny_pair[0]] * 2, "tiny_ll,tiny_mc",
                write_lm_eval_tasks(root / "few-tasks", FEW_DOCS), out.lm_eval_twice,
            ),
            LmEvalRuns(  # a rolling log-likelihood and answers read through two filters
                list(tiny_pair), "tiny_roll,tiny_filters", root / "few-tasks", out.lm_eval_more,
            ),
        ],
        inspect=[  # two runs of one model, and a second task
            InspectRuns(
                tiny_pair[0], write_inspect_task(root / "task", SAMPLES), out.inspect, [1, 2]
            ),
            InspectRuns(
                tiny_pair[0],
                write_inspect_task(root / "other-task", FEW_DOCS, name="tiny_other"),
                out.inspect_other, [1],
            ),
        ],
    )  # fmt: skip
    return out


def samples_of(folder: Path, task: str) -> dict[str, dict[int, dict]]:
    """Each lm-eval samples file of ``task``: its lines by ``doc_id``, keyed by the model
    folder's name (read with ``json``: an independent look at what the harness wrote)."""
    out: dict[str, dict[int, dict]] = {}
    for path in sorted(folder.rglob(f"samples_{task}_*.jsonl")):
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        out[path.parent.name] = {d["doc_id"]: d for d in lines}
    return out


def run_study(proj, source: str, *init_args: str) -> tuple[str, str]:
    """init from ``source``, the review edits, design, freeze, commit, Snakemake, audit."""
    res = tailgate(proj.root, "init", proj.name, "--from-import", source, *init_args)
    assert res.returncode == 0, res.stdout + res.stderr
    review(proj, worse=None)  # the harness records every direction: nothing left to decide
    design = tailgate(proj.root, "design", proj.prereg)
    assert design.returncode == 0, design.stdout + design.stderr
    froze = tailgate(proj.root, "freeze", proj.prereg)
    assert froze.returncode == 0, froze.stdout + froze.stderr
    git_commit(proj.root, "Pre-register", "preregistrations", "harness", "config")
    run = proj.snakemake()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    audit = tailgate(proj.root, "audit", proj.results)
    assert audit.returncode == 0, audit.stdout[-3000:] + audit.stderr[-2000:]
    return res.stdout, design.stdout


@pytest.mark.slow
def test_lm_eval_samples_run_to_an_audited_verdict_and_a_changed_file_is_refused(
    tmp_path, harness_outputs
):
    proj = project(tmp_path / "proj", "from-lm-eval")
    out = proj.root / "harness" / "lm-eval"
    shutil.copytree(harness_outputs.lm_eval, out)  # two tasks, two models
    # a folder of two tasks: init names them and their metrics, and asks for one (exit 2)
    both = tailgate(proj.root, "init", proj.name, "--from-import", "harness/lm-eval")
    assert both.returncode == 2 and "Traceback" not in both.stderr, both.stderr
    assert "tiny_ll (metrics perplexity)" in both.stderr
    assert "tiny_mc (metrics acc, brier_score)" in both.stderr
    # the command that chooses, as it can be pasted
    assert f"run `tailgate init {proj.name} --from-import harness/lm-eval --task tiny_ll`" in (
        both.stderr
    )
    assert not proj.prereg.exists()
    init_out, design_out = run_study(proj, "harness/lm-eval", "--task", "tiny_ll")

    data = load(proj.prereg).data
    block = data["data"]["import"]
    assert block["format"] == "lm-eval" and block["path"] == "harness/lm-eval"
    assert block["task"] == "tiny_ll"
    assert block["columns"]["prompt_id"] == "doc_id"
    assert [(c["name"], c["prompts"]) for c in data["conditions"]] == [
        ("tiny-a", DOCS),
        ("tiny-b", DOCS),
    ]
    # the per-sample "perplexity" is a log-likelihood (negative; lm-eval's aggregate is
    # exp(-mean), higher_is_better false): a higher value is better, the bad tail is the low one
    assert [(s["name"], s["kind"], s["bounded"], s["worse"]) for s in data["scorers"]] == [
        ("perplexity", "column", False, "lower")
    ]
    assert "each sample's value is a log-likelihood, higher is better" in init_out
    assert "prompt keys (column 'doc_id'): integers" in design_out
    # the pin: the whole folder, with rows per condition
    lock = json.loads(proj.lock.read_text())
    pin = lock["chain"][0]["pins"]["data.import.path"]
    assert pin["type"] == "folder" and pin["rows"] == {"tiny-a": DOCS, "tiny-b": DOCS}

    # the generations hold each document's prompt, the continuation and the harness's number
    written = samples_of(out, "tiny_ll")
    by_model = {name.rsplit("__", 1)[-1]: lines for name, lines in written.items()}
    for cond in ("tiny-a", "tiny-b"):
        gen = pq.read_table(proj.results / "generations" / cond / "shard-0.parquet").to_pandas()
        assert gen["prompt_id"].tolist() == sorted(by_model[cond])
        for row in gen.sample(50, random_state=0).itertuples():
            sample = by_model[cond][row.prompt_id]
            request = sample["arguments"]["gen_args_0"]
            assert row.prompt == request["arg_0"] and row.completion == request["arg_1"]
            assert row.perplexity == sample["perplexity"]
    verdict = json.loads((proj.results / "verdict.json").read_text())
    assert {(g["scorer"], g["scale"]) for g in verdict["gates"]} == {("perplexity", "identity")}
    # the analysed tail is the low log-likelihoods: the severities are the values turned round,
    # so the exceedances over the 0.95 quantile are the documents the model scores worst
    for cond in ("tiny-a", "tiny-b"):
        sev = pq.read_table(
            proj.results / "severities" / "perplexity" / "identity" / f"{cond}.parquet"
        ).to_pandas()
        lls = {d: s["perplexity"] for d, s in by_model[cond].items()}
        assert sev["severity"].tolist() == [-lls[i] for i in sev["prompt_id"]]
        worst = sorted(lls, key=lambda d: lls[d])[: DOCS // 20]  # the 5 % lowest
        top = sev.nlargest(DOCS // 20, "severity")["prompt_id"].tolist()
        assert sorted(top) == sorted(worst)

    # a changed harness output file is refused before any job, naming the pinned field
    path = next(out.rglob("samples_tiny_ll_*.jsonl"))
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["perplexity"] = first["perplexity"] - 1.0
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    again = proj.snakemake("--forceall")
    assert again.returncode == 3, again.stdout[-2000:] + again.stderr[-2000:]
    assert "data.import.path" in again.stderr and "Traceback" not in again.stderr


@pytest.mark.slow
def test_lm_eval_conditions_per_task_and_run_and_skipped_metrics(tmp_path, harness_outputs):
    root = tmp_path / "proj"
    (root / "preregistrations").mkdir(parents=True)
    out = root / "harness"
    shutil.copytree(harness_outputs.lm_eval_twice, out)  # two tasks, two runs of one model
    res = tailgate(root, "init", "tasks", "--from-import", "harness", "--task", "tiny_mc")
    assert res.returncode == 0, res.stdout + res.stderr
    data = load(root / "preregistrations" / "tasks.yaml").data
    assert [c["name"] for c in data["conditions"]] == ["tiny-a-run1", "tiny-a-run2"]
    assert all(c["prompts"] == FEW_DOCS for c in data["conditions"])
    # brier_score's per-document value is a pair (gold, probabilities): listed and skipped;
    # acc is the task's own metric, taken over its samples, higher is better in results_*.json
    assert "metric 'brier_score' skipped: not a finite number in 80 of 80 samples" in res.stdout
    assert "perplexity" not in res.stdout
    assert [(s["name"], s["kind"], s["worse"]) for s in data["scorers"]] == [
        ("acc", "column", "lower")
    ]
    assert "higher_is_better true: worse: lower" in res.stdout
    # run1 is the earlier run: its samples file has the earlier date in its name
    files = sorted(out.rglob("samples_tiny_mc_*.jsonl"))
    assert len(files) == 2
    assert f"condition tiny-a-run1 <- harness/{files[0].relative_to(out)}" in res.stdout
    # a task the output does not hold is named with the ones it does (exit 2, nothing written)
    res = tailgate(root, "init", "other", "--from-import", "harness", "--task", "tiny_gen")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "holds no samples of task 'tiny_gen'" in res.stderr and "tiny_mc" in res.stderr


@pytest.mark.slow
def test_inspect_logs_run_to_an_audited_verdict(tmp_path, harness_outputs):
    proj = project(tmp_path / "proj", "from-inspect")
    logs = proj.root / "harness" / "inspect"
    shutil.copytree(harness_outputs.inspect, logs)  # two runs of one model
    init_out, _ = run_study(proj, "harness/inspect")

    from inspect_ai.log import read_eval_log

    data = load(proj.prereg).data
    assert data["data"]["import"]["format"] == "inspect"
    assert [(c["name"], c["prompts"]) for c in data["conditions"]] == [
        ("tiny-a-run1", SAMPLES),
        ("tiny-a-run2", SAMPLES),
    ]
    # the direction from the scorer's metadata in the log (@scorer(..., worse="lower"))
    assert [(s["name"], s["bounded"], s["worse"]) for s in data["scorers"]] == [
        ("mean_logprob", False, "lower")
    ]
    assert "scorer metadata worse='lower'" in init_out
    assert "metric 'length_label' skipped: not a finite number" in init_out
    files = sorted(logs.rglob("*.eval"), key=lambda p: read_eval_log(str(p)).eval.created)
    for cond, file in zip(("tiny-a-run1", "tiny-a-run2"), files, strict=True):
        log = read_eval_log(str(file))
        want = {int(s.id): s for s in log.samples}
        gen = pq.read_table(proj.results / "generations" / cond / "shard-0.parquet").to_pandas()
        assert gen["prompt_id"].tolist() == sorted(want)
        for row in gen.sample(50, random_state=0).itertuples():
            sample = want[row.prompt_id]
            assert row.prompt == sample.input
            assert row.completion == sample.output.completion
            assert row.mean_logprob == sample.scores["mean_logprob"].value
        sev = pq.read_table(
            proj.results / "severities" / "mean_logprob" / "identity" / f"{cond}.parquet"
        ).to_pandas()
        assert sev["severity"].tolist() == [
            -want[i].scores["mean_logprob"].value for i in sev["prompt_id"]
        ]

    # one log of one model: one condition, nothing to compare; init says so, design refuses
    # (exit 2, what to do) before anything is frozen, instead of a KeyError at the report
    single = tmp_path / "single"
    (single / "preregistrations").mkdir(parents=True)
    (single / "logs").mkdir()
    (single / "logs" / files[0].name).write_bytes(files[0].read_bytes())
    one = tailgate(single, "init", "one", "--from-import", "logs")
    assert one.returncode == 0, one.stdout + one.stderr
    assert "one condition (tiny-a)" in one.stdout
    for verb in ("design", "freeze"):
        res = tailgate(single, verb, "preregistrations/one.yaml")
        assert res.returncode == 2, res.stdout + res.stderr
        assert "field 'protocol.pairs'" in res.stderr and "Traceback" not in res.stderr
    assert not (single / "preregistrations" / "one.lock.json").exists()


def test_an_inspect_log_needs_the_extra(tmp_path, monkeypatch):
    """Without Inspect installed, the import says which extra to install (exit 2)."""
    import builtins

    from tailgate.errors import InputError
    from tailgate.generate.harness import read_harness

    real = builtins.__import__

    def no_inspect(name, *args, **kwargs):
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    with pytest.raises(InputError, match=r"-e '\.\[harness\]'") as info:
        read_harness(log, "inspect")
    assert info.value.exit_code == 2


def test_a_rolling_log_likelihood_is_imported_as_the_documents_log_likelihood(
    tmp_path, harness_outputs
):
    """lm-eval's ``loglikelihood_rolling`` task (wikitext's shape) writes each document's
    ``[log-likelihood, words or bytes]`` under three metrics; the log-likelihood is imported once,
    its low tail the bad one."""
    root = tmp_path / "proj"
    (root / "preregistrations").mkdir(parents=True)
    shutil.copytree(harness_outputs.lm_eval_more, root / "harness")
    res = tailgate(root, "init", "roll", "--from-import", "harness", "--task", "tiny_roll")
    assert res.returncode == 0, res.stdout + res.stderr
    data = load(root / "preregistrations" / "roll.yaml").data
    assert [(c["name"], c["prompts"]) for c in data["conditions"]] == [
        ("tiny-a", FEW_DOCS),
        ("tiny-b", FEW_DOCS),
    ]
    assert [(s["name"], s["worse"]) for s in data["scorers"]] == [("loglikelihood", "lower")]
    assert "imported once, as metric 'loglikelihood'" in res.stdout
    # the values are the harness's own: each document's first element, read here with json
    from tailgate.generate.harness import read_harness

    table = read_harness(root / "harness", "lm-eval", "tiny_roll")
    written = samples_of(root / "harness", "tiny_roll")
    for row in table.rows:
        model = next(m for m in written if m.endswith(row["condition"]))
        sample = written[model][row["doc_id"]]
        assert row["loglikelihood"] == sample["word_perplexity"][0] < 0
        assert sample["byte_perplexity"][0] == sample["bits_per_byte"][0] == row["loglikelihood"]


def test_several_filters_are_chosen_like_several_tasks(tmp_path, harness_outputs):
    """A task scored through two filters: refused with the filters and the command that
    chooses one; ``--filter`` registers it, and each condition is a model, not a filter."""
    root = tmp_path / "proj"
    (root / "preregistrations").mkdir(parents=True)
    shutil.copytree(harness_outputs.lm_eval_more, root / "harness")
    both = tailgate(root, "init", "gen", "--from-import", "harness", "--task", "tiny_filters")
    assert both.returncode == 2 and "Traceback" not in both.stderr, both.stderr
    assert "2 filters: whole (metrics exact_match); first-word (metrics exact_match)" in (
        both.stderr
    )
    pasted = "tailgate init gen --from-import harness --task tiny_filters --filter whole"
    assert f"run `{pasted}`" in both.stderr
    assert not (root / "preregistrations" / "gen.yaml").exists()
    res = tailgate(root, *pasted.split()[1:])
    assert res.returncode == 0, res.stdout + res.stderr
    data = load(root / "preregistrations" / "gen.yaml").data
    assert data["data"]["import"]["filter"] == "whole"
    assert [c["name"] for c in data["conditions"]] == ["tiny-a", "tiny-b"]
    wrong = tailgate(
        root, *pasted.replace("whole", "strict").replace(" gen ", " other ").split()[1:]
    )
    assert wrong.returncode == 2 and "holds no samples of filter 'strict'" in wrong.stderr


def test_an_inspect_folder_of_several_tasks_is_refused_until_one_is_chosen(
    tmp_path, harness_outputs
):
    root = tmp_path / "proj"
    (root / "preregistrations").mkdir(parents=True)
    shutil.copytree(harness_outputs.inspect, root / "logs")
    shutil.copytree(harness_outputs.inspect_other, root / "logs" / "other")
    both = tailgate(root, "init", "two", "--from-import", "logs")
    assert both.returncode == 2 and "Traceback" not in both.stderr, both.stderr
    assert "2 tasks: tiny_gen (metrics " in both.stderr and "tiny_other (metrics" in both.stderr
    assert "run `tailgate init two --from-import logs --task tiny_gen`" in both.stderr
    res = tailgate(root, "init", "two", "--from-import", "logs", "--task", "tiny_gen")
    assert res.returncode == 0, res.stdout + res.stderr
    data = load(root / "preregistrations" / "two.yaml").data
    assert [c["name"] for c in data["conditions"]] == ["tiny-a-run1", "tiny-a-run2"]
    assert data["data"]["import"]["task"] == "tiny_gen"
