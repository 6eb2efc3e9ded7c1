# Rule script: POT-GPD fits of one condition on one scale (tailgate.stages.fit).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.fit import fit_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    fit_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    plan=sm.params.get("plan", "head"),  # the registered plan's branch: "registered"
    scorer=sm.wildcards.scorer,
    scale=sm.wildcards.scale,
    condition=sm.wildcards.condition,
    severities=sm.input.severities,
    transform_summary=sm.input.summary,
    out=sm.output.fits,
    workers=int(sm.threads),
)
