# Generation stage: generate[condition, shard] with the registered backend (simulate, import,
# transformers); every shard is a recorded data artifact.

GENERATIONS = f"{RESULTS}/generations/{{condition}}/shard-{{shard}}.parquet"


rule generate:
    input:
        unpack(generate_inputs),
    output:
        generations=GENERATIONS,
        record=provenance_of(GENERATIONS),
    log:
        log_for("generate", "{condition}", "{shard}"),
    conda:
        "../../envs/llm.yaml"
    resources:
        gpu=gpus("generation"),
        models=models_of("generate"),
    params:
        **COMMON,
        registered=lambda wc: registered("generate", condition=wc.condition),
        options=options("generation"),
    script:
        "../scripts/stage.py"
