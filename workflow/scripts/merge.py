# Rule script: merge a condition's score shards (tailgate.stages.data.merge_stage).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.data import merge_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    merge_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    scorer=sm.wildcards.scorer,
    condition=sm.wildcards.condition,
    shards=list(sm.input.shards),
    out=sm.output.merged,
)
