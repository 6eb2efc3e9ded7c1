# Rule script of `power` (the App. E grid) and `operating` (the whole procedure's operating
# characteristics), tailgate.stages.power.
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.power import operating_stage, power_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    {"power": power_stage, "operating": operating_stage}[sm.rule],
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    out=sm.output[0],
    workers=int(sm.threads),
)
