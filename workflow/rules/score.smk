# Scoring stage: score[scorer, condition, shard] with the registered scorer. The shards are the
# only copy of the scores: the transform stage reads them all (no merged table is written).

SCORES = f"{RESULTS}/scores/{{scorer}}/{{condition}}/shard-{{shard}}.parquet"


rule score:
    input:
        generations=GENERATIONS,
    output:
        scores=SCORES,
        record=provenance_of(SCORES),
    log:
        log_for("score", "{scorer}", "{condition}", "{shard}"),
    conda:
        "../../envs/llm.yaml"
    resources:
        gpu=gpus("scoring"),
        models=models_of("score"),
    params:
        **COMMON,
        registered=lambda wc: registered("score", scorer=wc.scorer),
        options=options("scoring"),
    script:
        "../scripts/stage.py"


# Response embeddings (Acharyya et al. (2025), methods note A8): embed[model, condition, shard], the mean-pooled last
# hidden state of a registered model (tailgate.score.embedding); read by the perturbation
# analysis's energy test.

EMBEDDINGS = f"{RESULTS}/embeddings/{{embedder}}/{{condition}}/shard-{{shard}}.parquet"


rule embed:
    input:
        generations=GENERATIONS,
    output:
        embeddings=EMBEDDINGS,
        record=provenance_of(EMBEDDINGS),
    log:
        log_for("embed", "{embedder}", "{condition}", "{shard}"),
    wildcard_constraints:
        embedder="[A-Za-z0-9][A-Za-z0-9_.-]*",
    conda:
        "../../envs/llm.yaml"
    resources:
        gpu=gpus("scoring"),
        models=models_of("embed"),
    params:
        **COMMON,
        registered=lambda wc: registered("embed", embedder=wc.embedder),
        options=options("scoring"),
    script:
        "../scripts/stage.py"
