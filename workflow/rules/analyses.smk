# Analyses stage: analysis[name] runs one registered analysis (analyses.<name> of the
# pre-registration, tailgate.analyses) from the study's artifacts and writes its statistics and
# criteria outcomes. An invalid analyses block never gets here: loading the pre-registration
# (design, freeze and the Snakefile's guard alike) refuses it.

ANALYSIS = MAIN_PLAN.pattern("analysis")


for plan in PLANS:

    rule:
        name:
            plan.rule("analysis")
        input:
            unpack(plan.analysis_files),
        output:
            stats=plan.pattern("analysis"),
            record=provenance_of(plan.pattern("analysis")),
        log:
            log_for(plan.rule("analysis"), "{analysis}"),
        wildcard_constraints:
            analysis="[a-z0-9][a-z0-9_-]*",
        priority: 30
        conda:
            "../../envs/stats.yaml"
        threads: config.get("threads", 2)
        params:
            **COMMON,
            **plan.params,
            inputs=plan.analysis_input_names,
            registered=plan.fingerprint_of("analysis", "analysis"),
        script:
            "../scripts/stage.py"


ALL_TARGETS.extend(analysis_statistics())
