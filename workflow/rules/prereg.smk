# Pre-registration stage. Placeholder until the protocol workflow provides the real DAG: one
# recorded data artifact, so that refusal, "has data" and `tailgate audit` work end to end.

PLACEHOLDER = f"{RESULTS}/placeholder/draws.parquet"
ALL_TARGETS.append(PLACEHOLDER)


rule placeholder_draws:
    input:
        prereg=PREREG,
    output:
        draws=PLACEHOLDER,
        record=provenance_of(PLACEHOLDER),
    log:
        log_for("placeholder_draws"),
    conda:
        "../../envs/stats.yaml"
    params:
        n=200,
    shell:
        "python -m tailgate.prereg.placeholder {input.prereg} {output.draws} "
        "--n {params.n} > {log} 2>&1"
