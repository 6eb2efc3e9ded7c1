# Gates stage (only when the protocol is registered, for the conditions its pairs name):
# bulk[scorer, condition] bootstraps mean and TVaR (G1, G2) on every scale from
# the same prompt resamples; gates[scorer, scale] evaluates G1–G5, P1, P2 for every registered
# pair at every band threshold and the H1 verdict under the registered band rule.

GATES = MAIN_PLAN.pattern("gates")
BULK = PLAN.own("bulk/{scorer}/{condition}.parquet")
GATED = PLAN.own("gates/{scorer}/{scale}.json")


rule bulk:
    input:
        severities=PLAN.each("severities", scale=Plan.scales_of),
    output:
        bulk=BULK,
        record=provenance_of(BULK),
    log:
        log_for("{plan}bulk", "{scorer}", "{condition}"),
    priority: 5
    conda:
        "../../envs/stats.yaml"
    resources:
        **sized(
            "bulk",
            lambda wc: condition_rows(wc.condition) * len(scorer_scales(wc.scorer)),
        ),
    params:
        **COMMON,
        plan=PLAN.name,
        scales=PLAN.job(Plan.scales_of),
        registered=PLAN.fingerprint("bulk"),
    script:
        "../scripts/stage.py"


rule gates:
    input:
        fits=PLAN.each("fits", condition=Plan.protocol_conditions),
        bulk=PLAN.each("bulk", condition=Plan.protocol_conditions),
    output:
        gates=GATED,
        record=provenance_of(GATED),
    log:
        log_for("{plan}gates", "{scorer}", "{scale}"),
    conda:
        "../../envs/stats.yaml"
    params:
        **COMMON,
        plan=PLAN.name,
        conditions=PLAN.job(Plan.protocol_conditions),
        registered=PLAN.fingerprint("gates"),
    script:
        "../scripts/stage.py"
