# Rule script: merged scores -> severities on one scale (tailgate.stages.transform).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.rule import results_of, run
from tailgate.stages.transform import transform_stage

sm = snakemake  # noqa: F821 - injected by Snakemake
names = list(sm.params.conditions)
run(
    sm.log[0],
    transform_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    scorer=sm.wildcards.scorer,
    scale=sm.wildcards.scale,
    merged=dict(zip(names, sm.input.merged, strict=True)),
    out=dict(zip(names, sm.output.severities, strict=True)),
    summary=sm.output.summary,
)
