# Helpers shared by every stage. The Snakefile has already verified STUDY (the frozen
# pre-registration, defaults applied) against its lock before this file is read. Every job
# repeats that check itself (tailgate.stages.common.open_stage) and records what it writes.

from tailgate.prereg.committed import run_mode
from tailgate.provenance import record_path

RESULTS = f"results/{STUDY.name}"
PREREG = str(STUDY.path)
ALL_TARGETS = []  # each stage appends the files `rule all` must produce


def conditions():
    """Registered condition names, in registration order."""
    return [c["name"] for c in STUDY.conditions()]


def protocol_conditions():
    """The conditions the protocol fits (those its registered pairs name; none when the study
    registers no protocol)."""
    return STUDY.protocol_conditions()


def scorers():
    """Registered scorer names, in registration order."""
    return [s["name"] for s in STUDY.scorers()]


def scales():
    """Registered transform scales."""
    return list(STUDY.data["transform"]["scales"])


def shards():
    """Generation shard indices 0..shards-1."""
    return list(range(int(STUDY.data["generation"]["shards"])))


def provenance_of(path):
    """The provenance record of an artifact under RESULTS (declare it as an output too)."""
    return str(record_path(path, RESULTS))


def log_for(rule_name, *parts):
    """results/<study>/logs/<rule>/<parts>.log"""
    stem = "-".join(str(p) for p in parts) if parts else "all"
    return f"{RESULTS}/logs/{rule_name}/{stem}.log"


def all_targets():
    return list(ALL_TARGETS)


def scorer_scales(scorer):
    """The scales a scorer is analysed on (every registered scale if bounded, else identity)."""
    from tailgate.stages.common import scales_for

    return scales_for(STUDY, scorer)


def analyses():
    """Every (scorer, scale) pair that gets fits, gates and sensitivity (none when the study
    registers no protocol)."""
    if not STUDY.has_protocol:
        return []
    return [(s, sc) for s in scorers() for sc in scorer_scales(s)]


def registered(stage, **wildcards):
    """Fingerprint of what `stage` reads of the registration (tailgate.stages.dependencies):
    a params entry, so that Snakemake re-runs a job exactly when an amendment changed it.
    """
    from tailgate.stages.dependencies import stage_fingerprint

    return stage_fingerprint(STUDY, stage, **wildcards)


def condition_rows(condition):
    """A condition's registered rows (its prompts)."""
    return int({c["name"]: c["prompts"] for c in STUDY.conditions()}[condition])


def sized(stage, rows):
    """The cluster resources of a job of `stage` that reads `rows(wildcards)` registered rows:
    memory and time limit from the measured per-row cost (tailgate.stages.resources), growing
    with the attempt."""
    from tailgate.stages.resources import memory_mb, runtime_min

    return {
        "mem_mb": lambda wc, attempt: memory_mb(stage, rows(wc), attempt),
        "runtime": lambda wc, attempt: runtime_min(stage, rows(wc), attempt),
    }


def options(section):
    """Operational settings of config/config.yaml (never hashed) passed to a backend."""
    return dict(config.get(section, {}) or {})


def models_of(stage):
    """The ``models`` resource: 1 for a job that loads a registered model (a local run forks it
    from the model server, tailgate/forkserver.py), else 0."""
    from tailgate.stages.model_jobs import loads_model

    return lambda wc: int(loads_model(STUDY, stage, wc.get("scorer")))


def gpus(section):
    """GPUs a job of this kind asks for (config `<section>.gpus`, default 0)."""
    return int((config.get(section, {}) or {}).get("gpus", 0))


def generate_inputs(wildcards):
    if STUDY.data["data"]["backend"] == "transformers":
        if STUDY.condition(wildcards.condition).get("query") is not None:
            # a query condition answers its registered query: no prompt selection
            return {}
        return {"prompts": PROMPTS}
    if STUDY.data["data"]["backend"] == "import":
        return {"data": STUDY.data["data"]["import"]["path"]}
    return {}


def severities_of(scorer, scale):
    return [
        SEVERITIES.format(scorer=scorer, scale=scale, condition=c) for c in conditions()
    ]


def fits_of(scorer, scale):
    return [
        FITS.format(scorer=scorer, scale=scale, condition=c)
        for c in protocol_conditions()
    ]


# the run mode is a parameter of every job, so that switching it re-runs them
COMMON = {"prereg": PREREG, "mode": run_mode()}


# The registered plan beside an amendment (rules/registered.smk, tailgate.stages.branch):
# None while the lock has no amendment.
from tailgate.stages.branch import registered_branch

BRANCH = registered_branch(STUDY, RESULTS)


def registered_log(rule_name, *parts):
    """The log of a registered-plan job: results/<study>/logs/registered_<rule>/<parts>.log"""
    return log_for(f"registered_{rule_name}", *parts)


def registered_plan_gates():
    """The registered-plan branch's gates documents (none where the amended plan's stored
    statistics give the registered verdict)."""
    return BRANCH.gates_targets() if BRANCH is not None else []


def registered_plan_analyses():
    """The registered-plan branch's analysis statistics (entry 0's analyses whose statistics
    the amended plan did not compute)."""
    return BRANCH.analysis_targets() if BRANCH is not None else []


# Analyses (rules/analyses.smk defines ANALYSIS and LAYOUT before any of these is called)


def analysis_names():
    """Registered analysis names (sorted, as in the canonical document)."""
    from tailgate.analyses.registry import registered as registered_specs

    return list(registered_specs(STUDY))


def analysis_inputs(name):
    """Named input lists of one analysis, as its kind declares them."""
    from tailgate.analyses.registry import kind_of, registered as registered_specs

    spec = registered_specs(STUDY)[name]
    return kind_of(spec).inputs(spec, STUDY, LAYOUT)


def analysis_statistics():
    """The statistics file of every registered analysis."""
    return [ANALYSIS.format(analysis=a) for a in analysis_names()]
