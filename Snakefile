# tailgate: pre-registered, auditable tail-shape claims for LLM evaluation.
# Entry point: `snakemake --cores all` runs the study named in config/config.yaml (default: demo).
# Before any job — for a run, `-n`, `--report` or `--lint` alike — the pre-registration is
# hashed against its lock's chain head; a missing lock or any change of meaning refuses to start.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.json")

from tailgate.prereg.guard import workflow_guard

STUDY = workflow_guard(config["study"])


include: "workflow/rules/common.smk"
include: "workflow/rules/prereg.smk"


rule all:
    default_target: True
    input:
        all_targets(),
