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

EMBEDDED = PLAN.embedded()
EMBEDDING = PLAN.own("embeddings/{embedder}/{condition}/shard-{shard}.parquet")
EMBEDDINGS = [
    EMBEDDING.replace("{plan}", p.prefix).format(
        embedder="{embedder}", condition=c, shard=k
    )
    for p, c, k in EMBEDDED
] or [EMBEDDING]


rule embed:
    input:
        generations=[
            p.path("generations", condition=c, shard=k) for p, c, k in EMBEDDED
        ]
        or PLAN.input("generations"),
    output:
        embeddings=EMBEDDINGS,
        records=[provenance_of(f) for f in EMBEDDINGS],
    log:
        log_for(
            "embed", "{embedder}", *([] if EMBEDDED else ["{plan}{condition}-{shard}"])
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
        plans=lambda wc: [p.name for p, _, _ in EMBEDDED] or [PLAN.name(wc)],
        conditions=lambda wc: [c for _, c, _ in EMBEDDED] or [wc.condition],
        registered=lambda wc: {
            p.name: p.fingerprint("embed", embedder=wc.embedder)
            for p in (dict.fromkeys(p for p, _, _ in EMBEDDED) or [PLAN.of(wc)])
        },
        options=options("scoring"),
    script:
        "../scripts/stage.py"
