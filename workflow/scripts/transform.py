# Rule script: score shards -> severities on one scale (tailgate.stages.transform).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.rule import results_of, run
from tailgate.stages.transform import transform_stage

sm = snakemake  # noqa: F821 - injected by Snakemake
names = list(sm.params.conditions)
n = int(sm.params.shards)  # the inputs are every condition's shards, condition-major
shard_paths = list(sm.input.scores)
run(
    sm.log[0],
    transform_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    scorer=sm.wildcards.scorer,
    scale=sm.wildcards.scale,
    scores={c: shard_paths[i * n : (i + 1) * n] for i, c in enumerate(names)},
    out=dict(zip(names, sm.output.severities, strict=True)),
    summary=sm.output.summary,
)
