# Transform stage: transform[scorer, scale] puts every condition's score shards on one scale
# (identity, probability, or logit with the registered clipping ε) and records the clip counts.

SEVERITIES = f"{RESULTS}/severities/{{scorer}}/{{scale}}/{{condition}}.parquet"
TRANSFORM_SUMMARY = f"{RESULTS}/severities/{{scorer}}/{{scale}}/transform.json"


rule transform:
    input:
        scores=lambda wc: [
            SCORES.format(scorer=wc.scorer, condition=c, shard=k)
            for c in conditions()
            for k in shards()
        ],
    output:
        severities=expand(SEVERITIES, condition=conditions(), allow_missing=True),
        records=expand(
            provenance_of(SEVERITIES), condition=conditions(), allow_missing=True
        ),
        summary=TRANSFORM_SUMMARY,
        summary_record=provenance_of(TRANSFORM_SUMMARY),
    log:
        log_for("transform", "{scorer}", "{scale}"),
    conda:
        "../../envs/stats.yaml"
    resources:
        **sized("transform", lambda wc: sum(condition_rows(c) for c in conditions())),
    params:
        **COMMON,
        conditions=conditions(),
        shards=len(shards()),
        registered=lambda wc: registered("transform", scorer=wc.scorer),
    script:
        "../scripts/stage.py"
