# Rule script: select the registered prompts (tailgate.stages.data.prompts_stage).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.data import prompts_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    prompts_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    out=sm.output.prompts,
    options=dict(sm.params.options),
)
