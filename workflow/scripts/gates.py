# Rule script: pairwise gates and the H1 verdict for one scorer and scale (tailgate.stages.gates).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.gates import gates_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
names = list(sm.params.conditions)
run(
    sm.log[0],
    gates_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    scorer=sm.wildcards.scorer,
    scale=sm.wildcards.scale,
    fits=dict(zip(names, sm.input.fits, strict=True)),
    bulk=dict(zip(names, sm.input.bulk, strict=True)),
    out=sm.output.gates,
)
