# Helpers shared by every stage. The Snakefile has already verified STUDY (the frozen
# pre-registration, defaults applied) against its lock before this file is read. Every job
# repeats that check itself (tailgate.stages.common.open_stage) and records what it writes.
# Rule priorities order the ready jobs when cores are few: the chain to the severities first
# (generate, score, transform: 40), then the analyses (30: they read only severities or scores,
# and would otherwise run last, alone), then the longest jobs (fit 20, operating 10, gates 5),
# so the fits start as early as they can; they change no result.

from tailgate.prereg.committed import run_mode
from tailgate.runtime.provenance import record_path

RESULTS = f"results/{STUDY.name}"
PREREG = str(STUDY.path)
ALL_TARGETS = []  # each stage appends the files `rule all` must produce

# The plans (tailgate.plans.branch): the chain head's, whose files are the main tree under
# RESULTS, and beside an amendment entry 0's (the registered plan, under RESULTS/registered/
# where its job is its own). Each stage's rule is defined once; a job's plan is its {plan}
# wildcard, the plan's folder under RESULTS ("" or "registered/"): PLAN.own(<layout pattern>)
# is a rule's output, PLAN.input, PLAN.each and PLAN.job read the job's plan.
from tailgate.plans.branch import Plan, PlanWildcard, plans

PLANS = plans(STUDY, RESULTS)
MAIN_PLAN = PLANS[0]
BRANCH = (
    PLANS[1] if len(PLANS) > 1 else None
)  # entry 0's plan; None without an amendment
PLAN = PlanWildcard(PLANS)


wildcard_constraints:
    plan=PLAN.constraint,


def conditions():
    """Registered condition names, in registration order."""
    return MAIN_PLAN.conditions()


def protocol_conditions():
    """The conditions the protocol fits (those its registered pairs name; none when the study
    registers no protocol)."""
    return MAIN_PLAN.protocol_conditions()


def shards():
    """Generation shard indices 0..shards-1."""
    return MAIN_PLAN.shards()


def provenance_of(path):
    """The provenance record of an artifact under RESULTS (declare it as an output too)."""
    return str(record_path(path, RESULTS))


def log_for(rule_name, *parts):
    """results/<study>/logs/<rule>/<parts>.log (a plan's rule: "{plan}<rule>")"""
    stem = "-".join(str(p) for p in parts) if parts else "all"
    return f"{RESULTS}/logs/{rule_name}/{stem}.log"


def all_targets():
    return list(ALL_TARGETS)


def scorer_scales(scorer):
    """The scales a scorer is analysed on (every registered scale if bounded, else identity)."""
    return MAIN_PLAN.scales(scorer)


def analyses():
    """Every (scorer, scale) pair that gets fits, gates and sensitivity (none when the study
    registers no protocol)."""
    return MAIN_PLAN.analyses()


def registered(stage, **wildcards):
    """Fingerprint of what `stage` reads of the registration (tailgate.plans.fingerprint):
    a params entry, so that Snakemake re-runs a job exactly when an amendment changed it.
    """
    return MAIN_PLAN.fingerprint(stage, **wildcards)


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
    from the model server, tailgate/runtime/forkserver.py), else 0."""
    from tailgate.stages.model_jobs import loads_model

    return lambda wc: int(loads_model(STUDY, stage, wc.get("scorer")))


def gpus(section):
    """GPUs a job of this kind asks for (config `<section>.gpus`, default 0)."""
    return int((config.get(section, {}) or {}).get("gpus", 0))


def fits_of(scorer, scale):
    return [
        FITS.format(scorer=scorer, scale=scale, condition=c)
        for c in protocol_conditions()
    ]


# the run mode is a parameter of every job, so that switching it re-runs them
COMMON = {"prereg": PREREG, "mode": run_mode()}


def registered_plan_gates():
    """The registered-plan branch's gates documents (none where the amended plan's stored
    statistics give the registered verdict)."""
    return BRANCH.gates_targets() if BRANCH is not None else []


def registered_plan_analyses():
    """The registered-plan branch's analysis statistics (entry 0's analyses whose statistics
    the amended plan did not compute)."""
    return BRANCH.analysis_targets() if BRANCH is not None else []


# Analyses (rules/analyses.smk defines ANALYSIS before any of these is called)


def analysis_names():
    """Registered analysis names (sorted, as in the canonical document)."""
    return list(STUDY.analyses())


def analysis_statistics():
    """The statistics file of every registered analysis."""
    return [ANALYSIS.format(analysis=a) for a in analysis_names()]
