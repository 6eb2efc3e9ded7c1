# Generation stage: generate[condition, shard] with the registered backend (simulate, import,
# transformers); every shard is a recorded data artifact.

GENERATIONS = f"{RESULTS}/generations/{{condition}}/shard-{{shard}}.parquet"


def generate_inputs(wildcards):
    if STUDY.data["data"]["backend"] == "transformers":
        return {"prompts": PROMPTS}
    if STUDY.data["data"]["backend"] == "import":
        return {"data": STUDY.data["data"]["import"]["path"]}
    return {}


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
    params:
        **COMMON,
        registered=lambda wc: registered(
            "seed",
            "data",
            "generation",
            "models",
            "sample_cap",
            f"conditions[{wc.condition}]",
        ),
        options=options("generation"),
    script:
        "../scripts/generate.py"
