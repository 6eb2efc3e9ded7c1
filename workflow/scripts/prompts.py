# Rule script: select the registered prompts (tailgate.stages.data.prompts_stage).
from tailgate.stages.data import prompts_stage
from tailgate.stages.rule import run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    prompts_stage,
    prereg=sm.params.prereg,
    results=sm.params.results,
    out=sm.output.prompts,
    options=dict(sm.params.options),
)
