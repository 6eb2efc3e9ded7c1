# Rule script: one generation shard (tailgate.stages.data.generate_stage).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.data import generate_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    generate_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    condition=sm.wildcards.condition,
    shard=int(sm.wildcards.shard),
    out=sm.output.generations,
    options=dict(sm.params.options),
    prompts=sm.input.get("prompts"),
)
