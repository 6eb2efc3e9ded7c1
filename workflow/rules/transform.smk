# Transform stage: transform[scorer, scale] puts every condition's merged scores on one scale
# (identity, probability, or logit with the registered clipping ε) and records the clip counts.

SEVERITIES = f"{RESULTS}/severities/{{scorer}}/{{scale}}/{{condition}}.parquet"
TRANSFORM_SUMMARY = f"{RESULTS}/severities/{{scorer}}/{{scale}}/transform.json"


rule transform:
    input:
        merged=lambda wc: [
            MERGED.format(scorer=wc.scorer, condition=c) for c in conditions()
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
    params:
        **COMMON,
        conditions=conditions(),
        registered=lambda wc: registered("transform", scorer=wc.scorer),
    script:
        "../scripts/transform.py"
