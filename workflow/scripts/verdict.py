# Rule script: verdict.json (tailgate.stages.verdict).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.rule import results_of, run
from tailgate.stages.verdict import verdict_stage

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    verdict_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    gates=list(sm.input.gates),
    sensitivity=list(sm.input.sensitivity),
    fits=list(sm.input.fits),
    analyses=list(sm.input.analyses),
    generations=list(sm.input.generations),
    registered_gates=list(sm.input.registered_gates),
    registered_analyses=list(sm.input.registered_analyses),
    out=sm.output.verdict,
)
