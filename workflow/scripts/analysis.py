# Rule script: one registered analysis (tailgate.stages.analyses).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.analyses import analysis_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    analysis_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    analysis=sm.wildcards.analysis,
    inputs={name: list(getattr(sm.input, name)) for name in sm.params.inputs},
    out=sm.output.stats,
    threads=int(sm.threads),
)
