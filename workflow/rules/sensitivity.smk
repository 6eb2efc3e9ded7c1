# Sensitivity stage: sensitivity[scorer, scale], the H1 verdict under the registered tolerance
# multipliers (App. B, Table 5 of Zhou (2026)) at every band threshold.

SENSITIVITY = MAIN_PLAN.pattern("sensitivity")


rule sensitivity:
    input:
        gates=GATES,
    output:
        sensitivity=SENSITIVITY,
        record=provenance_of(SENSITIVITY),
    log:
        log_for("sensitivity", "{scorer}", "{scale}"),
    conda:
        "../../envs/stats.yaml"
    params:
        **COMMON,
        registered=registered("sensitivity"),
    script:
        "../scripts/stage.py"
