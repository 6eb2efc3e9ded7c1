# Rule script: tolerance sensitivity of the H1 verdict (tailgate.stages.sensitivity).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.rule import results_of, run
from tailgate.stages.sensitivity import sensitivity_stage

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    sensitivity_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    gates=sm.input.gates,
    out=sm.output.sensitivity,
)
