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


# Response embeddings (Acharyya et al. (2025), methods note A8): embed[model], the mean-pooled
# last hidden state of a registered model (tailgate.score.embedding), read by the perturbation
# analysis's energy test. One job a model embeds every shard a plan's analyses read, loading the
# model once; a plan that reads none keeps the rule's template of one shard, which nothing
# requests.


def embed_shards(plan):
    """(condition, shard) of each embedding file the plan's analyses read that the plan writes
    itself (entry 0's plan shares the others with the main tree), of any model, in order.
    """
    own = f"{plan.root}/embeddings/"
    files = {
        f
        for name in plan.study.analyses()
        for f in plan.analysis_inputs(name).get("embeddings", [])
    }
    jobs = [f[len(own) :].split("/") for f in files if f.startswith(own)]
    return sorted(
        {(c, k.removeprefix("shard-").removesuffix(".parquet")) for _, c, k in jobs}
    )


for plan in PLANS:
    embedded = embed_shards(plan)
    embedding_files = [
        plan.pattern("embeddings").format(embedder="{embedder}", condition=c, shard=k)
        for c, k in embedded
    ] or [plan.pattern("embeddings")]

    rule:
        name:
            plan.rule("embed")
        input:
            generations=[
                plan.path("generations", condition=c, shard=k) for c, k in embedded
            ]
            or plan.input("generations"),
        output:
            embeddings=embedding_files,
            records=[provenance_of(f) for f in embedding_files],
        log:
            log_for(
                plan.rule("embed"),
                "{embedder}",
                *([] if embedded else ["{condition}", "{shard}"]),
            ),
        wildcard_constraints:
            embedder="[A-Za-z0-9][A-Za-z0-9_.-]*",
        priority: 40
        conda:
            "../../envs/llm.yaml"
        resources:
            gpu=gpus("scoring"),
            models=models_of("embed"),
        params:
            **COMMON,
            **plan.params,
            conditions=lambda wc, s=embedded: [c for c, _ in s] or [wc.condition],
            registered=plan.fingerprint_of("embed", "embedder"),
            options=options("scoring"),
        script:
            "../scripts/stage.py"
