# Rule script: operating characteristics of the whole registered procedure
# (tailgate.stages.power).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.power import operating_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    operating_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    out=sm.output.operating,
    workers=int(sm.threads),
)
