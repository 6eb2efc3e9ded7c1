# Analyses stage: analysis[name] computes one registered analysis (analyses.<name> of the
# pre-registration, tailgate.analyses) from the study's artifacts and writes its statistics;
# grade[name] grades them against the registered criteria, so that an amendment of a criterion
# re-runs only the grading. An invalid analyses block never gets here: loading the
# pre-registration (design, freeze and the Snakefile's guard alike) refuses it.

ANALYSIS = MAIN_PLAN.pattern("analysis")


for plan in PLANS:

    rule:
        name:
            plan.rule("analysis")
        input:
            unpack(plan.analysis_files),
        output:
            measures=plan.pattern("measures"),
            record=provenance_of(plan.pattern("measures")),
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

    rule:
        name:
            plan.rule("grade")
        input:
            measures=plan.input("measures"),
        output:
            stats=plan.pattern("analysis"),
            record=provenance_of(plan.pattern("analysis")),
        log:
            log_for(plan.rule("grade"), "{analysis}"),
        wildcard_constraints:
            analysis="[a-z0-9][a-z0-9_-]*",
        priority: 30
        conda:
            "../../envs/stats.yaml"
        params:
            **COMMON,
            **plan.params,
            registered=plan.fingerprint_of("grade", "analysis"),
        script:
            "../scripts/stage.py"


ALL_TARGETS.extend(analysis_statistics())
