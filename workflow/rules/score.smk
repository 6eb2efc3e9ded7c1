# Scoring stage: score[scorer, condition, shard] with the registered scorer. The shards are the
# only copy of the scores: the transform stage reads them all (no merged table is written).

for plan in PLANS:

    rule:
        name:
            plan.rule("score")
        input:
            generations=plan.input("generations"),
        output:
            scores=plan.pattern("scores"),
            record=provenance_of(plan.pattern("scores")),
        log:
            log_for(plan.rule("score"), "{scorer}", "{condition}", "{shard}"),
        priority: 40
        conda:
            "../../envs/llm.yaml"
        resources:
            gpu=gpus("scoring"),
            models=models_of("score"),
        params:
            **COMMON,
            **plan.params,
            registered=plan.fingerprint_of("score", "scorer"),
            options=options("scoring"),
        script:
            "../scripts/stage.py"


# Response embeddings (Acharyya et al. (2025), methods note A8): embed[model, condition, shard], the mean-pooled last
# hidden state of a registered model (tailgate.score.embedding); read by the perturbation
# analysis's energy test.

for plan in PLANS:

    rule:
        name:
            plan.rule("embed")
        input:
            generations=plan.input("generations"),
        output:
            embeddings=plan.pattern("embeddings"),
            record=provenance_of(plan.pattern("embeddings")),
        log:
            log_for(plan.rule("embed"), "{embedder}", "{condition}", "{shard}"),
        wildcard_constraints:
            embedder="[A-Za-z0-9][A-Za-z0-9_.-]*",
        conda:
            "../../envs/llm.yaml"
        resources:
            gpu=gpus("scoring"),
            models=models_of("embed"),
        params:
            **COMMON,
            **plan.params,
            registered=plan.fingerprint_of("embed", "embedder"),
            options=options("scoring"),
        script:
            "../scripts/stage.py"
