# Rule script: score one generations shard (tailgate.stages.data.score_stage).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.data import score_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    score_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    scorer=sm.wildcards.scorer,
    condition=sm.wildcards.condition,
    generations=sm.input.generations,
    out=sm.output.scores,
    options=dict(sm.params.options),
)
