# Transform stage: transform[scorer, scale, condition] puts a condition's score shards on one
# scale (identity, probability, or logit with the registered clipping ε);
# transform_summary[scorer, scale] records every condition's clip counts.

SEVERITIES = PLAN.own("severities/{scorer}/{scale}/{condition}.parquet")
TRANSFORM_SUMMARY = PLAN.own("severities/{scorer}/{scale}/transform.json")


rule transform:
    input:
        scores=PLAN.each("scores", shard=Plan.shards),
    output:
        severities=SEVERITIES,
        record=provenance_of(SEVERITIES),
    log:
        log_for("{plan}transform", "{scorer}", "{scale}", "{condition}"),
    priority: 40
    conda:
        "../../envs/stats.yaml"
    resources:
        **sized("transform", lambda wc: condition_rows(wc.condition)),
    params:
        **COMMON,
        plan=PLAN.name,
        registered=PLAN.fingerprint("transform", "scorer"),
    script:
        "../scripts/stage.py"


rule transform_summary:
    input:
        scores=PLAN.each("scores", condition=Plan.conditions, shard=Plan.shards),
    output:
        summary=TRANSFORM_SUMMARY,
        record=provenance_of(TRANSFORM_SUMMARY),
    log:
        log_for("{plan}transform_summary", "{scorer}", "{scale}"),
    priority: 40
    conda:
        "../../envs/stats.yaml"
    resources:
        **sized("transform", lambda wc: max(condition_rows(c) for c in conditions())),
    params:
        **COMMON,
        plan=PLAN.name,
        conditions=PLAN.job(Plan.conditions),
        shards=PLAN.job(lambda plan, wc: len(plan.shards())),
        registered=PLAN.fingerprint("transform_summary", "scorer"),
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
