# Scoring stage: score[scorer, condition, shard] with the registered scorer, then merge the
# shards of a condition into scores/<scorer>/<condition>.parquet (sorted by prompt_id).

SCORES = f"{RESULTS}/scores/{{scorer}}/{{condition}}/shard-{{shard}}.parquet"
MERGED = f"{RESULTS}/scores/{{scorer}}/{{condition}}.parquet"


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
    params:
        **COMMON,
        registered=lambda wc: registered("score", scorer=wc.scorer),
        options=options("scoring"),
    script:
        "../scripts/score.py"


rule merge_scores:
    input:
        shards=lambda wc: expand(
            SCORES, scorer=wc.scorer, condition=wc.condition, shard=shards()
        ),
    output:
        merged=MERGED,
        record=provenance_of(MERGED),
    log:
        log_for("merge_scores", "{scorer}", "{condition}"),
    conda:
        "../../envs/stats.yaml"
    params:
        **COMMON,
    script:
        "../scripts/merge.py"


# Response embeddings (seed 004, SPECS A8): embed[model, condition, shard], the mean-pooled last
# hidden state of a registered model (tailgate.score.embedding); read by the perturbation
# analysis's energy test.

from tailgate.score.embedding import embedding_fingerprint

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
    params:
        **COMMON,
        registered=lambda wc: embedding_fingerprint(STUDY, wc.embedder),
        options=options("scoring"),
    script:
        "../scripts/embed.py"
