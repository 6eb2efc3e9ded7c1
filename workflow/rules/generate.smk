# Generation stage: generate[condition, shard] with the registered backend (simulate, import,
# transformers); every shard is a recorded data artifact.
#
# Every rule that computes under a plan is defined once (rules/common.smk,
# tailgate.plans.branch): its {plan} wildcard is "" for the chain head's jobs, which write the
# main tree, results/<study>/<layout>, and beside an amendment that changed what the statistics
# are "registered/" for entry 0's, which write results/<study>/registered/<layout> and read the
# main tree's file of every job they share (same inputs and fingerprint under both plans).

GENERATIONS = MAIN_PLAN.pattern("generations")
GENERATED = PLAN.own("generations/{condition}/shard-{shard}.parquet")


rule generate:
    input:
        unpack(PLAN.job(Plan.generate_inputs)),
    output:
        generations=GENERATED,
        record=provenance_of(GENERATED),
    log:
        log_for("{plan}generate", "{condition}", "{shard}"),
    priority: 40
    conda:
        "../../envs/llm.yaml"
    resources:
        gpu=gpus("generation"),
        models=models_of("generate"),
    params:
        **COMMON,
        plan=PLAN.name,
        registered=PLAN.fingerprint("generate", "condition"),
        options=options("generation"),
    script:
        "../scripts/stage.py"
