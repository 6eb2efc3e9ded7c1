# Helpers shared by every stage. The Snakefile has already verified STUDY (the frozen
# pre-registration, defaults applied) against its lock before this file is read.

from tailgate.provenance import record_path

RESULTS = f"results/{STUDY.name}"
PREREG = str(STUDY.path)
ALL_TARGETS = []  # each stage appends the files `rule all` must produce


def conditions():
    """Registered condition names, in registration order."""
    return [c["name"] for c in STUDY.conditions()]


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
