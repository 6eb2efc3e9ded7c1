# Fit stage: fit[scorer, scale, condition], the POT-GPD fits at every band threshold (ξ̂, σ̂,
# bootstrap CIs with the registered B, AD p-value, n_exc, mean, TVaR) and the stability scan.

FITS = MAIN_PLAN.pattern("fits")


for plan in PLANS:

    rule:
        name:
            plan.rule("fit")
        input:
            severities=plan.input("severities"),
            summary=plan.input("transform_summary"),
        output:
            fits=plan.pattern("fits"),
            record=provenance_of(plan.pattern("fits")),
        log:
            log_for(plan.rule("fit"), "{scorer}", "{scale}", "{condition}"),
        priority: 20
        conda:
            "../../envs/stats.yaml"
        resources:
            **sized("fit", lambda wc: condition_rows(wc.condition)),
        params:
            **COMMON,
            **plan.params,
            registered=plan.fingerprint_of("fit", "condition"),
        script:
            "../scripts/stage.py"


ALL_TARGETS.extend(f for s, sc in analyses() for f in fits_of(s, sc))
