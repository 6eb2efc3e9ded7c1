# Rule script: report.html, report.md and the standalone figures (tailgate.stages.report).
import _tailgate  # noqa: F401 - the repository's tailgate first (conda environments)
from tailgate.stages.report import report_stage
from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
run(
    sm.log[0],
    report_stage,
    prereg=sm.params.prereg,
    results=results_of(sm.params.prereg),
    verdict=sm.input.verdict,
    fits=list(sm.input.fits),
    power=sm.input.power,
    analyses=list(sm.input.analyses),
    out_html=sm.output.html,
    out_md=sm.output.md,
    figure_paths={"power": sm.output.power_png, "stability": sm.output.stability_png},
)
