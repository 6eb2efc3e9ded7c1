# Generation stage: generate[condition, shard] with the registered backend (simulate, import,
# transformers); every shard is a recorded data artifact.
#
# Every rule that computes under a plan is defined once, for each plan of PLANS (rules/common.smk,
# tailgate.plans.branch): the chain head's rule `<stage>` writes the main tree,
# results/<study>/<layout>; beside an amendment that changed what the statistics are, entry 0's
# rule `registered_<stage>` writes results/<study>/registered/<layout> and reads the main tree's
# file of every job it shares (same inputs and fingerprint under both plans).

GENERATIONS = MAIN_PLAN.pattern("generations")


for plan in PLANS:

    rule:
        name:
            plan.rule("generate")
        input:
            unpack(plan.generate_inputs),
        output:
            generations=plan.pattern("generations"),
            record=provenance_of(plan.pattern("generations")),
        log:
            log_for(plan.rule("generate"), "{condition}", "{shard}"),
        priority: 40
        conda:
            "../../envs/llm.yaml"
        resources:
            gpu=gpus("generation"),
            models=models_of("generate"),
        params:
            **COMMON,
            **plan.params,
            registered=plan.fingerprint_of("generate", "condition"),
            options=options("generation"),
        script:
            "../scripts/stage.py"
