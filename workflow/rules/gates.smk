# Gates stage (only when the protocol is registered, for the conditions its pairs name):
# bulk[scorer, condition] bootstraps mean and TVaR (G1, G2) on every scale from
# the same prompt resamples; gates[scorer, scale] evaluates G1–G5, P1, P2 for every registered
# pair at every band threshold and the H1 verdict under the registered band rule.

GATES = MAIN_PLAN.pattern("gates")


for plan in PLANS:

    rule:
        name:
            plan.rule("bulk")
        input:
            severities=plan.each("severities", scale=plan.scales_of),
        output:
            bulk=plan.pattern("bulk"),
            record=provenance_of(plan.pattern("bulk")),
        log:
            log_for(plan.rule("bulk"), "{scorer}", "{condition}"),
        priority: 5
        conda:
            "../../envs/stats.yaml"
        resources:
            **sized(
                "bulk",
                lambda wc: condition_rows(wc.condition)
                * len(scorer_scales(wc.scorer)),
            ),
        params:
            **COMMON,
            **plan.params,
            scales=plan.scales_of,
            registered=plan.fingerprint("bulk"),
        script:
            "../scripts/stage.py"

    rule:
        name:
            plan.rule("gates")
        input:
            fits=plan.each("fits", condition=plan.protocol_conditions()),
            bulk=plan.each("bulk", condition=plan.protocol_conditions()),
        output:
            gates=plan.pattern("gates"),
            record=provenance_of(plan.pattern("gates")),
        log:
            log_for(plan.rule("gates"), "{scorer}", "{scale}"),
        conda:
            "../../envs/stats.yaml"
        params:
            **COMMON,
            **plan.params,
            conditions=plan.protocol_conditions(),
            registered=plan.fingerprint("gates"),
        script:
            "../scripts/stage.py"
