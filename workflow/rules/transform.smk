# Transform stage: transform[scorer, scale] puts every condition's score shards on one scale
# (identity, probability, or logit with the registered clipping ε) and records the clip counts.

for plan in PLANS:

    rule:
        name:
            plan.rule("transform")
        input:
            scores=plan.each("scores", condition=plan.conditions(), shard=plan.shards()),
        output:
            severities=expand(
                plan.pattern("severities"),
                condition=plan.conditions(),
                allow_missing=True,
            ),
            records=expand(
                provenance_of(plan.pattern("severities")),
                condition=plan.conditions(),
                allow_missing=True,
            ),
            summary=plan.pattern("transform_summary"),
            summary_record=provenance_of(plan.pattern("transform_summary")),
        log:
            log_for(plan.rule("transform"), "{scorer}", "{scale}"),
        priority: 40
        conda:
            "../../envs/stats.yaml"
        resources:
            **sized(
                "transform", lambda wc: sum(condition_rows(c) for c in conditions())
            ),
        params:
            **COMMON,
            **plan.params,
            conditions=plan.conditions(),
            shards=len(plan.shards()),
            registered=plan.fingerprint_of("transform", "scorer"),
        script:
            "../scripts/stage.py"
