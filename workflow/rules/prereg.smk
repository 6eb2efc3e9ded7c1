# Pre-registration stage: the registered prompt selection (transformers backend only; the
# simulate and import backends carry their own prompts), under each plan that registers it.

PROMPTS = PLAN.own("prompts.parquet")
PROMPTS_DIGEST = PLAN.own("prompts.digest.json")


if any(p.study.data["data"]["backend"] == "transformers" for p in PLANS):

    rule select_prompts:
        output:
            prompts=PROMPTS,
            digest=PROMPTS_DIGEST,
            record=provenance_of(PROMPTS),
            digest_record=provenance_of(PROMPTS_DIGEST),
        log:
            log_for("{plan}select_prompts"),
        conda:
            "../../envs/llm.yaml"
        params:
            **COMMON,
            plan=PLAN.name,
            registered=PLAN.fingerprint("select_prompts"),
            options=options("generation"),
        script:
            "../scripts/stage.py"
