# Rule script: embed the responses of one generations shard (tailgate.score.embedding).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.data import embed_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    embed_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    model=sm.wildcards.embedder,
    condition=sm.wildcards.condition,
    generations=sm.input.generations,
    out=sm.output.embeddings,
    options=dict(sm.params.options),
)
