# Rule script: report.html, report.md and the standalone figures (tailgate.stages.report).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.report import report_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
# a study without the protocol has no fits, power statistics or protocol figures (rules/report.smk)
protocol = "power_png" in sm.output.keys()
run(
    sm.log[0],
    report_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    verdict=sm.input.verdict,
    fits=list(sm.input.fits) if protocol else [],
    power=sm.input.power if protocol else None,
    analyses=list(sm.input.analyses),
    out_html=sm.output.html,
    out_md=sm.output.md,
    figure_paths=(
        {"power": sm.output.power_png, "stability": sm.output.stability_png} if protocol else {}
    ),
)
