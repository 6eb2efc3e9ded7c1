# Scoring stage: score[scorer, condition, shard] with the registered scorer. The shards are the
# only copy of the scores: the transform stage reads them all (no merged table is written).

SCORED = PLAN.own("scores/{scorer}/{condition}/shard-{shard}.parquet")


rule score:
    input:
        generations=PLAN.input("generations"),
    output:
        scores=SCORED,
        record=provenance_of(SCORED),
    log:
        log_for("{plan}score", "{scorer}", "{condition}", "{shard}"),
    priority: 40
    conda:
        "../../envs/llm.yaml"
    resources:
        gpu=gpus("scoring"),
        models=models_of("score"),
    params:
        **COMMON,
        plan=PLAN.name,
        registered=PLAN.fingerprint("score", "scorer"),
        options=options("scoring"),
    script:
        "../scripts/stage.py"


# Response embeddings (Acharyya et al. (2025), methods note A8): embed[model], the mean-pooled
# last hidden state of a registered model (tailgate.score.embedding), read by the perturbation
# analysis's energy test. One job a model embeds every shard the plans' analyses read (entry
# 0's own beside the head's after an amendment), loading the model once; a study that reads
# none keeps the rule's template of one shard, which nothing requests.

EMBEDDINGS = PLAN.embed_outputs()


rule embed:
    input:
        generations=PLAN.embed_inputs(),
    output:
        embeddings=EMBEDDINGS,
        records=[provenance_of(f) for f in EMBEDDINGS],
    log:
        log_for("{plan}embed", "{embedder}", "{condition}-{shard}")
        if "{plan}" in EMBEDDINGS[0]
        else log_for("embed", "{embedder}"),
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
        shards=PLAN.embed_shards,
        registered=PLAN.embed_fingerprint,
        options=options("scoring"),
    script:
        "../scripts/stage.py"
