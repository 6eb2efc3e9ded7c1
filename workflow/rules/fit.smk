# Fit stage: fit[scorer, scale, condition], the POT-GPD fits at every band threshold (ξ̂, σ̂,
# bootstrap CIs with the registered B, AD p-value, n_exc, mean, TVaR) and the stability scan.

FITS = MAIN_PLAN.pattern("fits")
FITTED = PLAN.own("fits/{scorer}/{scale}/{condition}.json")


rule fit:
    input:
        severities=PLAN.input("severities"),
        summary=PLAN.input("transform_summary"),
    output:
        fits=FITTED,
        record=provenance_of(FITTED),
    log:
        log_for("{plan}fit", "{scorer}", "{scale}", "{condition}"),
    priority: 20
    conda:
        "../../envs/stats.yaml"
    resources:
        **sized("fit", lambda wc: condition_rows(wc.condition)),
    params:
        **COMMON,
        plan=PLAN.name,
        registered=PLAN.fingerprint("fit", "condition"),
    script:
        "../scripts/stage.py"


ALL_TARGETS.extend(f for s, sc in analyses() for f in fits_of(s, sc))
