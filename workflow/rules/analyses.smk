# Analyses stage: analysis[name] computes one registered analysis (analyses.<name> of the
# pre-registration, tailgate.analyses) from the study's artifacts and writes its statistics;
# grade[name] grades them against the registered criteria, so that an amendment of a criterion
# re-runs only the grading. An invalid analyses block never gets here: loading the
# pre-registration (design, freeze and the Snakefile's guard alike) refuses it.

ANALYSIS = MAIN_PLAN.pattern("analysis")
MEASURES = PLAN.own("analyses/{analysis}/measures.json")
GRADED = PLAN.own("analyses/{analysis}/statistics.json")


rule analysis:
    input:
        unpack(PLAN.job(Plan.analysis_files)),
    output:
        measures=MEASURES,
        record=provenance_of(MEASURES),
    log:
        log_for("{plan}analysis", "{analysis}"),
    wildcard_constraints:
        analysis="[a-z0-9][a-z0-9_-]*",
    priority: 30
    conda:
        "../../envs/stats.yaml"
    threads: config.get("threads", 2)
    params:
        **COMMON,
        plan=PLAN.name,
        inputs=PLAN.job(Plan.analysis_input_names),
        registered=PLAN.fingerprint("analysis", "analysis"),
    script:
        "../scripts/stage.py"


rule grade:
    input:
        measures=PLAN.input("measures"),
    output:
        stats=GRADED,
        record=provenance_of(GRADED),
    log:
        log_for("{plan}grade", "{analysis}"),
    wildcard_constraints:
        analysis="[a-z0-9][a-z0-9_-]*",
    priority: 30
    conda:
        "../../envs/stats.yaml"
    params:
        **COMMON,
        plan=PLAN.name,
        registered=PLAN.fingerprint("grade", "analysis"),
    script:
        "../scripts/stage.py"


ALL_TARGETS.extend(analysis_statistics())
