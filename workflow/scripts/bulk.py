# Rule script: bootstrap replicates of mean and TVaR of one condition (tailgate.stages.gates).
from tailgate.stages.gates import bulk_stage
from tailgate.stages.rule import run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    bulk_stage,
    prereg=sm.params.prereg,
    results=sm.params.results,
    scorer=sm.wildcards.scorer,
    condition=sm.wildcards.condition,
    severities=dict(zip(sm.params.scales, sm.input.severities, strict=True)),
    out=sm.output.bulk,
)
