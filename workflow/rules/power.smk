# Power stage: the synthetic-recovery grid of App. E of Zhou (2026) for the registered design
# (P1 and P2 only), and the operating characteristics of the whole registered procedure.

POWER = MAIN_PLAN.pattern("power")
OPERATING = MAIN_PLAN.pattern("operating")


rule power:
    output:
        power=POWER,
        record=provenance_of(POWER),
    log:
        log_for("power"),
    conda:
        "../../envs/stats.yaml"
    threads: 1
    params:
        **COMMON,
        registered=registered("power"),
    script:
        "../scripts/stage.py"


rule operating:
    output:
        operating=OPERATING,
        record=provenance_of(OPERATING),
    log:
        log_for("operating"),
    priority: 10
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        **sized(
            "operating",
            lambda wc: max(
                (condition_rows(c) for c in protocol_conditions()), default=0
            ),
        ),
    params:
        **COMMON,
        registered=registered("operating"),
    script:
        "../scripts/stage.py"
