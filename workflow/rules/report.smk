# Outcome: verdict.json (H1, per-pair per-threshold gates, sensitivity, hash, amendments) and the
# report (self-contained HTML + Markdown, with standalone figures for `snakemake --report`).

VERDICT = f"{RESULTS}/verdict.json"
REPORT_HTML = f"{RESULTS}/report.html"
REPORT_MD = f"{RESULTS}/report.md"
POWER_PNG = f"{RESULTS}/figures/power.png"
STABILITY_PNG = f"{RESULTS}/figures/stability.png"
# what each figure plots (tailgate.report.content): the audit compares these, not the pixels
POWER_CONTENT = f"{RESULTS}/figures/power.json"
STABILITY_CONTENT = f"{RESULTS}/figures/stability.json"
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


# A study that registers the protocol gets its figures (power, stability) and their statistics;
# one that registers only analyses gets the report of its answer and analyses alone.
if STUDY.has_protocol:

    rule report:
        input:
            verdict=VERDICT,
            gates=[GATES.format(scorer=s, scale=sc) for s, sc in analyses()],
            lock=str(STUDY.lock_path),
            fits=[f for s, sc in analyses() for f in fits_of(s, sc)],
            power=POWER,
            operating=OPERATING,
            analyses=analysis_statistics(),
        output:
            html=report(REPORT_HTML, caption="../report/report.rst", category="Report"),
            md=REPORT_MD,
            power_png=report(
                POWER_PNG, caption="../report/power.rst", category="Figures"
            ),
            stability_png=report(
                STABILITY_PNG, caption="../report/stability.rst", category="Figures"
            ),
            power_content=POWER_CONTENT,
            stability_content=STABILITY_CONTENT,
            records=[
                provenance_of(p)
                for p in (
                    REPORT_HTML,
                    REPORT_MD,
                    POWER_PNG,
                    STABILITY_PNG,
                    POWER_CONTENT,
                    STABILITY_CONTENT,
                )
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

    ALL_TARGETS.extend(
        [
            VERDICT,
            REPORT_HTML,
            REPORT_MD,
            POWER_PNG,
            STABILITY_PNG,
            POWER_CONTENT,
            STABILITY_CONTENT,
        ]
    )

else:

    rule report:
        input:
            verdict=VERDICT,
            lock=str(STUDY.lock_path),
            analyses=analysis_statistics(),
        output:
            html=report(REPORT_HTML, caption="../report/report.rst", category="Report"),
            md=REPORT_MD,
            records=[provenance_of(p) for p in (REPORT_HTML, REPORT_MD)],
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

    ALL_TARGETS.extend([VERDICT, REPORT_HTML, REPORT_MD])
