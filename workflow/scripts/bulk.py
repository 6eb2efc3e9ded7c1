# Rule script: bootstrap replicates of mean and TVaR of one condition (tailgate.stages.bulk).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.bulk import bulk_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    bulk_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    scorer=sm.wildcards.scorer,
    condition=sm.wildcards.condition,
    severities=dict(zip(sm.params.scales, sm.input.severities, strict=True)),
    out=sm.output.bulk,
)
