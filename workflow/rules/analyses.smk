# Analyses stage: analysis[name] runs one registered analysis (analyses.<name> of the
# pre-registration, tailgate.analyses) from the study's artifacts and writes its statistics and
# criteria outcomes. An invalid analyses block never gets here: loading the pre-registration
# (design, freeze and the Snakefile's guard alike) refuses it.

ANALYSIS = f"{RESULTS}/analyses/{{analysis}}/statistics.json"
LAYOUT = {"severities": SEVERITIES, "fits": FITS, "embeddings": EMBEDDINGS}


rule analysis:
    input:
        unpack(lambda wc: analysis_inputs(wc.analysis)),
    output:
        stats=ANALYSIS,
        record=provenance_of(ANALYSIS),
    log:
        log_for("analysis", "{analysis}"),
    wildcard_constraints:
        analysis="[a-z0-9][a-z0-9_-]*",
    conda:
        "../../envs/stats.yaml"
    threads: config.get("threads", 2)
    params:
        **COMMON,
        inputs=lambda wc: list(analysis_inputs(wc.analysis)),
        registered=lambda wc: registered("analysis", analysis=wc.analysis),
    script:
        "../scripts/stage.py"


ALL_TARGETS.extend(analysis_statistics())
