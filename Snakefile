# tailgate: pre-registered, auditable tail-shape claims for LLM evaluation.
# Entry point: `snakemake --cores all` runs the study named in config/config.yaml (default: demo).
# Before any job — for a run, `-n`, `--report` or `--lint` alike — the pre-registration is
# hashed against its lock's chain head; a missing lock or any change of meaning refuses to start,
# and so does a registration that is not committed as it is on disk (unless the run is
# explicitly exploratory: `--config exploratory=true`, labelled so in every result).

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


from tailgate.operational import operational_guard

operational_guard(config)
validate(config, "workflow/tailgate/schemas/config.schema.json")

from tailgate.plans.registration import workflow_guard

STUDY = workflow_guard(config["study"], exploratory=config.get("exploratory", False))


report: "workflow/report/workflow.rst"


wildcard_constraints:
    condition="[a-z0-9][a-z0-9_-]*",
    scorer="[a-z0-9][a-z0-9_-]*",
    scale="identity|probability|logit",
    shard="[0-9]+",


include: "workflow/rules/common.smk"
include: "workflow/rules/prereg.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/transform.smk"
include: "workflow/rules/fit.smk"
include: "workflow/rules/gates.smk"
include: "workflow/rules/sensitivity.smk"
include: "workflow/rules/power.smk"
include: "workflow/rules/analyses.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_targets(),


# When a run ends: append it to results/<study>/runs.jsonl (recorded like any artifact) and
# print the answer — verdict, failing gates, deviations, the report's path — or the failed jobs.
from tailgate.runs.interrupts import (
    discard_incomplete,
    exit_if_interrupted,
    run_outcome,
    watch_interrupts,
)
from tailgate.runs.ledger import answer_when_up_to_date, finish_run
from tailgate.runtime import forkserver
from tailgate.user_cache import use_kernel_cache
from tailgate.stages.model_jobs import study_loads_models

# Local runs fork their jobs from one process that has imported the numerical stack
# (tailgate/runtime/forkserver.py): same results, a fraction of the start-up cost per job.
FORKSERVER = []
FORKSERVER_WANTED = forkserver.claim()
# Snakemake runs no hook when nothing is to be done: the answer is printed all the same
answer_when_up_to_date(STUDY, RESULTS, dryrun=workflow.dryrun)


onstart:
    watch_interrupts(workflow)
    # numba's kernels compile into the user's kernel cache (tailgate/user_cache.py)
    use_kernel_cache(fallback=".snakemake")
    FORKSERVER.append(
        forkserver.start(
            workflow, FORKSERVER_WANTED, models=study_loads_models(STUDY)
        )
    )


onsuccess:
    outcome = run_outcome(succeeded=True)
    forkserver.stop(FORKSERVER.pop() if FORKSERVER else None)
    finish_run(STUDY, RESULTS, log, outcome, workflow)


onerror:
    outcome = run_outcome(succeeded=False)
    forkserver.stop(FORKSERVER.pop() if FORKSERVER else None)
    if outcome == "interrupted":
        discard_incomplete(workflow)
    finish_run(STUDY, RESULTS, log, outcome, workflow)
    # stopped by Ctrl-C: the run's line last, the signal's status (not Snakemake's exit 1)
    exit_if_interrupted()
