# Pre-registration stage: the registered prompt selection (transformers backend only; the
# simulate and import backends carry their own prompts).

PROMPTS = f"{RESULTS}/prompts.parquet"
PROMPTS_DIGEST = f"{RESULTS}/prompts.digest.json"


if STUDY.data["data"]["backend"] == "transformers":

    rule select_prompts:
        output:
            prompts=PROMPTS,
            digest=PROMPTS_DIGEST,
            record=provenance_of(PROMPTS),
            digest_record=provenance_of(PROMPTS_DIGEST),
        log:
            log_for("select_prompts"),
        conda:
            "../../envs/llm.yaml"
        params:
            **COMMON,
            registered=registered("select_prompts"),
            options=options("generation"),
        script:
            "../scripts/stage.py"
