# Pre-registration stage: the registered prompt selection (transformers backend only; the
# simulate and import backends carry their own prompts), under each plan that registers it.

for plan in PLANS:
    if plan.study.data["data"]["backend"] == "transformers":

        rule:
            name:
                plan.rule("select_prompts")
            output:
                prompts=plan.pattern("prompts"),
                digest=plan.pattern("prompts_digest"),
                record=provenance_of(plan.pattern("prompts")),
                digest_record=provenance_of(plan.pattern("prompts_digest")),
            log:
                log_for(plan.rule("select_prompts")),
            conda:
                "../../envs/llm.yaml"
            params:
                **COMMON,
                **plan.params,
                registered=plan.fingerprint("select_prompts"),
                options=options("generation"),
            script:
                "../scripts/stage.py"
