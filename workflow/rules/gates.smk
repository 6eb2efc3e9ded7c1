# Gates stage (only when the protocol is registered, for the conditions its pairs name):
# bulk[scorer, condition] bootstraps mean and TVaR (G1, G2) on every scale from
# the same prompt resamples; gates[scorer, scale] evaluates G1–G5, P1, P2 for every registered
# pair at every band threshold and the H1 verdict under the registered band rule.

BULK = f"{RESULTS}/bulk/{{scorer}}/{{condition}}.parquet"
GATES = f"{RESULTS}/gates/{{scorer}}/{{scale}}.json"


rule bulk:
    input:
        severities=lambda wc: [
            SEVERITIES.format(scorer=wc.scorer, scale=s, condition=wc.condition)
            for s in scorer_scales(wc.scorer)
        ],
    output:
        bulk=BULK,
        record=provenance_of(BULK),
    log:
        log_for("bulk", "{scorer}", "{condition}"),
    conda:
        "../../envs/stats.yaml"
    resources:
        **sized(
            "bulk",
            lambda wc: condition_rows(wc.condition) * len(scorer_scales(wc.scorer)),
        ),
    params:
        **COMMON,
        scales=lambda wc: scorer_scales(wc.scorer),
        registered=registered("bulk"),
    script:
        "../scripts/stage.py"


rule gates:
    input:
        fits=lambda wc: fits_of(wc.scorer, wc.scale),
        bulk=lambda wc: [
            BULK.format(scorer=wc.scorer, condition=c) for c in protocol_conditions()
        ],
    output:
        gates=GATES,
        record=provenance_of(GATES),
    log:
        log_for("gates", "{scorer}", "{scale}"),
    conda:
        "../../envs/stats.yaml"
    params:
        **COMMON,
        conditions=protocol_conditions(),
        registered=registered("gates"),
    script:
        "../scripts/stage.py"
