# Fit stage: fit[scorer, scale, condition], the POT-GPD fits at every band threshold (ξ̂, σ̂,
# bootstrap CIs with the registered B, AD p-value, n_exc, mean, TVaR) and the stability scan.

FITS = f"{RESULTS}/fits/{{scorer}}/{{scale}}/{{condition}}.json"


rule fit:
    input:
        severities=SEVERITIES,
        summary=TRANSFORM_SUMMARY,
    output:
        fits=FITS,
        record=provenance_of(FITS),
    log:
        log_for("fit", "{scorer}", "{scale}", "{condition}"),
    conda:
        "../../envs/stats.yaml"
    resources:
        **sized("fit", lambda wc: condition_rows(wc.condition)),
    params:
        **COMMON,
        registered=lambda wc: registered("fit", condition=wc.condition),
    script:
        "../scripts/stage.py"


ALL_TARGETS.extend(f for s, sc in analyses() for f in fits_of(s, sc))
