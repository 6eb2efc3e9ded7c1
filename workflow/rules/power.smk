# Power stage: the synthetic-recovery grid of App. E of seed 000 for the registered design.

POWER = f"{RESULTS}/power.json"


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
        registered=registered("seed", "protocol", "conditions", "sample_cap"),
    script:
        "../scripts/power.py"
