# Rule script: tolerance sensitivity of the H1 verdict (tailgate.stages.sensitivity).
from tailgate.stages.rule import run
from tailgate.stages.sensitivity import sensitivity_stage

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    sensitivity_stage,
    prereg=sm.params.prereg,
    results=sm.params.results,
    gates=sm.input.gates,
    out=sm.output.sensitivity,
)
