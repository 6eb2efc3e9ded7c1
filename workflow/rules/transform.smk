# Transform stage: transform[scorer, scale, condition] puts a condition's score shards on one
# scale (identity, probability, or logit with the registered clipping ε);
# transform_summary[scorer, scale] records every condition's clip counts.

for plan in PLANS:

    rule:
        name:
            plan.rule("transform")
        input:
            scores=plan.each("scores", shard=plan.shards()),
        output:
            severities=plan.pattern("severities"),
            record=provenance_of(plan.pattern("severities")),
        log:
            log_for(plan.rule("transform"), "{scorer}", "{scale}", "{condition}"),
        priority: 40
        conda:
            "../../envs/stats.yaml"
        resources:
            **sized("transform", lambda wc: condition_rows(wc.condition)),
        params:
            **COMMON,
            **plan.params,
            registered=plan.fingerprint_of("transform", "scorer"),
        script:
            "../scripts/stage.py"

    rule:
        name:
            plan.rule("transform_summary")
        input:
            scores=plan.each("scores", condition=plan.conditions(), shard=plan.shards()),
        output:
            summary=plan.pattern("transform_summary"),
            record=provenance_of(plan.pattern("transform_summary")),
        log:
            log_for(plan.rule("transform_summary"), "{scorer}", "{scale}"),
        priority: 40
        conda:
            "../../envs/stats.yaml"
        resources:
            **sized(
                "transform", lambda wc: max(condition_rows(c) for c in conditions())
            ),
        params:
            **COMMON,
            **plan.params,
            conditions=plan.conditions(),
            shards=len(plan.shards()),
            registered=plan.fingerprint_of("transform_summary", "scorer"),
        script:
            "../scripts/stage.py"


# the transform's summary of what the analyses read (a fit reads its own), as one transform job
# wrote it with the severities
ALL_TARGETS.extend(MAIN_PLAN.summaries(analysis_names()))
if BRANCH is not None and registered_plan_analyses():
    ALL_TARGETS.extend(
        BRANCH.summaries(
            [n for n in BRANCH.study.analyses() if BRANCH.analysis_reasons(n)]
        )
    )
