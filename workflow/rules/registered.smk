# The registered plan beside an amendment (tailgate.stages.branch): when the lock's head differs
# from entry 0 and the amendment changed what the statistics are, entry 0's plan is evaluated
# too. Each rule below is its stage's rule run with plan "registered" (the stage computes under
# the study as entry 0 registered it, guarded like every job) into results/<study>/registered/.
# A job of entry 0's plan whose registered inputs are unchanged is not run again: BRANCH.path()
# points its consumers at the main tree's file. The verdict rule requests the branch's gates and
# analysis documents (rules/report.smk); nothing else does.

if BRANCH is not None:
    # the package's layout of the branch is the rules' own
    for _kind, _pattern in {
        "generations": GENERATIONS,
        "scores": SCORES,
        "embeddings": EMBEDDINGS,
        "severities": SEVERITIES,
        "transform_summary": TRANSFORM_SUMMARY,
        "fits": FITS,
        "bulk": BULK,
        "gates": GATES,
        "analysis": ANALYSIS,
    }.items():
        assert BRANCH.main_pattern(_kind) == _pattern, (_kind, _pattern)

    REGISTERED = {**COMMON, "plan": "registered"}

    if BRANCH.registered.data["data"]["backend"] == "transformers":

        rule registered_select_prompts:
            output:
                prompts=BRANCH.pattern("prompts"),
                digest=BRANCH.pattern("prompts_digest"),
                record=provenance_of(BRANCH.pattern("prompts")),
                digest_record=provenance_of(BRANCH.pattern("prompts_digest")),
            log:
                registered_log("select_prompts"),
            conda:
                "../../envs/llm.yaml"
            params:
                **REGISTERED,
                registered=BRANCH.fingerprint("select_prompts"),
                options=options("generation"),
            script:
                "../scripts/stage.py"

    use rule generate as registered_generate with:
        input:
            unpack(lambda wc: BRANCH.generate_inputs(wc.condition)),
        output:
            generations=BRANCH.pattern("generations"),
            record=provenance_of(BRANCH.pattern("generations")),
        log:
            registered_log("generate", "{condition}", "{shard}"),
        params:
            **REGISTERED,
            registered=lambda wc: BRANCH.fingerprint("generate", condition=wc.condition),
            options=options("generation"),

    use rule score as registered_score with:
        input:
            generations=lambda wc: BRANCH.path(
                "generations", condition=wc.condition, shard=wc.shard
            ),
        output:
            scores=BRANCH.pattern("scores"),
            record=provenance_of(BRANCH.pattern("scores")),
        log:
            registered_log("score", "{scorer}", "{condition}", "{shard}"),
        params:
            **REGISTERED,
            registered=lambda wc: BRANCH.fingerprint("score", scorer=wc.scorer),
            options=options("scoring"),

    use rule embed as registered_embed with:
        input:
            generations=lambda wc: BRANCH.path(
                "generations", condition=wc.condition, shard=wc.shard
            ),
        output:
            embeddings=BRANCH.pattern("embeddings"),
            record=provenance_of(BRANCH.pattern("embeddings")),
        log:
            registered_log("embed", "{embedder}", "{condition}", "{shard}"),
        params:
            **REGISTERED,
            registered=lambda wc: BRANCH.fingerprint("embed", embedder=wc.embedder),
            options=options("scoring"),

    use rule transform as registered_transform with:
        input:
            scores=lambda wc: [
                BRANCH.path("scores", scorer=wc.scorer, condition=c, shard=str(k))
                for c in BRANCH.conditions()
                for k in BRANCH.shards()
            ],
        output:
            severities=expand(
                BRANCH.pattern("severities"),
                condition=BRANCH.conditions(),
                allow_missing=True,
            ),
            records=expand(
                provenance_of(BRANCH.pattern("severities")),
                condition=BRANCH.conditions(),
                allow_missing=True,
            ),
            summary=BRANCH.pattern("transform_summary"),
            summary_record=provenance_of(BRANCH.pattern("transform_summary")),
        log:
            registered_log("transform", "{scorer}", "{scale}"),
        params:
            **REGISTERED,
            conditions=BRANCH.conditions(),
            shards=len(BRANCH.shards()),
            registered=lambda wc: BRANCH.fingerprint("transform", scorer=wc.scorer),

    use rule fit as registered_fit with:
        input:
            severities=lambda wc: BRANCH.path(
                "severities", scorer=wc.scorer, scale=wc.scale, condition=wc.condition
            ),
            summary=lambda wc: BRANCH.path(
                "transform_summary", scorer=wc.scorer, scale=wc.scale
            ),
        output:
            fits=BRANCH.pattern("fits"),
            record=provenance_of(BRANCH.pattern("fits")),
        log:
            registered_log("fit", "{scorer}", "{scale}", "{condition}"),
        params:
            **REGISTERED,
            registered=lambda wc: BRANCH.fingerprint("fit", condition=wc.condition),

    use rule bulk as registered_bulk with:
        input:
            severities=lambda wc: [
                BRANCH.path(
                    "severities", scorer=wc.scorer, scale=s, condition=wc.condition
                )
                for s in BRANCH.scales(wc.scorer)
            ],
        output:
            bulk=BRANCH.pattern("bulk"),
            record=provenance_of(BRANCH.pattern("bulk")),
        log:
            registered_log("bulk", "{scorer}", "{condition}"),
        params:
            **REGISTERED,
            scales=lambda wc: BRANCH.scales(wc.scorer),
            registered=BRANCH.fingerprint("bulk"),

    use rule gates as registered_gates with:
        input:
            fits=lambda wc: [
                BRANCH.path("fits", scorer=wc.scorer, scale=wc.scale, condition=c)
                for c in BRANCH.protocol_conditions()
            ],
            bulk=lambda wc: [
                BRANCH.path("bulk", scorer=wc.scorer, condition=c)
                for c in BRANCH.protocol_conditions()
            ],
        output:
            gates=BRANCH.pattern("gates"),
            record=provenance_of(BRANCH.pattern("gates")),
        log:
            registered_log("gates", "{scorer}", "{scale}"),
        params:
            **REGISTERED,
            conditions=BRANCH.protocol_conditions(),
            registered=BRANCH.fingerprint("gates"),

    use rule analysis as registered_analysis with:
        input:
            unpack(lambda wc: BRANCH.analysis_inputs(wc.analysis)),
        output:
            stats=BRANCH.pattern("analysis"),
            record=provenance_of(BRANCH.pattern("analysis")),
        log:
            registered_log("analysis", "{analysis}"),
        params:
            **REGISTERED,
            inputs=lambda wc: list(BRANCH.analysis_inputs(wc.analysis)),
            registered=lambda wc: BRANCH.fingerprint("analysis", analysis=wc.analysis),
