# Outcome: verdict.json (H1, per-pair per-threshold gates, sensitivity, hash, amendments) and the
# report (self-contained HTML + Markdown, with standalone figures for `snakemake --report`).

from tailgate.plans.layout import FIGURES as STANDALONE_FIGURES

VERDICT = MAIN_PLAN.pattern("verdict")
REPORT_HTML = MAIN_PLAN.pattern("report")
REPORT_MD = MAIN_PLAN.pattern("report_md")
# The report job runs last and alone: it draws its figures with the run's cores (processes
# forked from the job, the same bytes: tailgate/report/raster.py), one where they are unknown.
DRAW = workflow.resource_settings.cores or 1


rule verdict:
    input:
        gates=[GATES.format(scorer=s, scale=sc) for s, sc in analyses()],
        sensitivity=[SENSITIVITY.format(scorer=s, scale=sc) for s, sc in analyses()],
        fits=[f for s, sc in analyses() for f in fits_of(s, sc)],
        lock=str(STUDY.lock_path),
        analyses=analysis_statistics(),
        generations=expand(GENERATIONS, condition=conditions(), shard=shards()),
        registered_gates=registered_plan_gates(),
        registered_analyses=registered_plan_analyses(),
    output:
        verdict=report(VERDICT, caption="../report/verdict.rst", category="Verdict"),
        record=provenance_of(VERDICT),
    log:
        log_for("verdict"),
    conda:
        "../../envs/stats.yaml"
    params:
        **COMMON,
        registered=registered("verdict"),
    script:
        "../scripts/stage.py"


# A study that registers the protocol gets its figures (power, stability), what each plots
# (tailgate.report.content: the audit compares these, not the pixels) and the power statistics;
# one that registers only analyses gets the report of its answer and analyses alone.
PROTOCOL = STUDY.has_protocol
FIGURE_NAMES = STANDALONE_FIGURES if PROTOCOL else ()
FIGURES = [MAIN_PLAN.path("figure", figure=f) for f in FIGURE_NAMES]
CONTENTS = [MAIN_PLAN.path("figure_content", figure=f) for f in FIGURE_NAMES]


rule report:
    input:
        verdict=VERDICT,
        gates=[GATES.format(scorer=s, scale=sc) for s, sc in analyses()],
        lock=str(STUDY.lock_path),
        fits=[f for s, sc in analyses() for f in fits_of(s, sc)],
        power=[POWER] if PROTOCOL else [],
        operating=[OPERATING] if PROTOCOL else [],
        analyses=analysis_statistics(),
    output:
        html=report(REPORT_HTML, caption="../report/report.rst", category="Report"),
        md=REPORT_MD,
        figures=[
            report(f, caption=f"../report/{name}.rst", category="Figures")
            for name, f in zip(FIGURE_NAMES, FIGURES)
        ],
        contents=CONTENTS,
        records=[
            provenance_of(p) for p in (REPORT_HTML, REPORT_MD, *FIGURES, *CONTENTS)
        ],
    log:
        log_for("report"),
    conda:
        "../../envs/stats.yaml"
    resources:
        draw=DRAW,
    params:
        **COMMON,
    script:
        "../scripts/stage.py"


ALL_TARGETS.extend([VERDICT, REPORT_HTML, REPORT_MD, *FIGURES, *CONTENTS])
