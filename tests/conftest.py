"""Shared fixtures: the repository root and the shipped demo pre-registration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parents[1]

# Hypothesis (tests/properties): a few examples a test in a plain `pytest`, more in CI
# (`HYPOTHESIS_PROFILE=ci`, set by .ci/run), there the same examples every run. No example
# database is written into the project; a failure prints the blob that reproduces it.
settings.register_profile("default", max_examples=20, deadline=None, database=None,
                          print_blob=True)  # fmt: skip
settings.register_profile("ci", max_examples=200, deadline=None, database=None,
                          print_blob=True, derandomize=True)  # fmt: skip
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: Session- and module-scoped fixtures that run a whole study through Snakemake (tens of
#: seconds to minutes each). Under pytest-xdist each worker that runs a test using one builds
#: its own copy; ``--dist loadgroup`` (pyproject's addopts) keeps the tests of each on one
#: worker, so it is built once per suite. A test that uses several goes with the first listed.
STUDY_RUNS = (
    "outcome",
    "demo",
    "small_demo",
    "small_run",
    "plan_run",
    "honest_run",
    "bundled_run",
    "import_run",
    "stamped_run",
    "analysis_run",
    "severity_example",
    "perturbation_example",
    "percentiles_example",
    "shipped_demo",
    "llm_run",
    "pct_run",
    "pert_run",
    "finished",
    "tiny_pair",
    "run",
    "oc",
    "study",
)


class _GroupedIds:
    """pytest-xdist 3.8 marks a grouped test by appending ``@<group>`` to ``item._nodeid``, which
    pytest 9.2 no longer reads (a node id is ``item._id``): without this copy ``--dist
    loadgroup`` silently schedules every test alone and the study runs are built twice."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        try:
            from _pytest.nodeid import NodeId
        except ImportError:  # an older pytest reads _nodeid itself
            return
        for item in items:
            grouped = getattr(item, "_nodeid", None)
            if isinstance(grouped, str) and "@" in grouped and item.nodeid != grouped:
                item._id = NodeId.parse(grouped)


def pytest_configure(config: pytest.Config) -> None:
    """Load numba's LLVM, and compile (or load from numba's cache) the dominance and bulk
    bootstrap kernels the tests call in-process, before any test loads PyTorch. A numba
    compilation after PyTorch has loaded its own copy of LLVM can abort the process (numba
    issue 9996; the other order works), and a dead worker ends the run. ``dcor``, which
    compiles at import, is only imported in a fresh interpreter (``dcor_reference.py``)."""
    import numpy as np
    from tailgate.analyses.dominance.statistics import bootstrap_ratios
    from tailgate.stats.draws import compiled
    from tailgate.stats.risk import bulk_bootstrap

    rng = np.random.default_rng(0)

    def dominance() -> None:  # equal sizes and unequal sizes: one kernel each
        for sizes in ((20, 20), (20, 30)):
            bootstrap_ratios([rng.normal(size=n) for n in sizes], 2, 0)

    # one process at a time (the workers start together): the lock of every process that
    # compiles tailgate's kernels, which the bulk bootstrap's kernels take themselves
    compiled("dominance", dominance)
    bulk_bootstrap(rng.normal(size=50), 2, 0)
    config.pluginmanager.register(_GroupedIds(), "tailgate-grouped-ids")


#: modules whose tests each start processes that run a study, build an environment or simulate at
#: length (tens of seconds a test): left out of the fast tier like the study runs
NOT_FAST = frozenset(
    {
        "tests/contract/test_audit_other_versions.py",
        "tests/contract/test_committed_registration.py",
        "tests/contract/test_honest_setups.py",
        "tests/contract/test_reproduce_isolation.py",
        "tests/imports/test_lattice_import.py",
        "tests/imports/test_published_tag.py",
        "tests/llm/test_generation.py",
        "tests/llm/test_judge_llm.py",
        "tests/llm/test_workflow_llm.py",
        "tests/prereg/test_prereg_design.py",
        "tests/prereg/test_prereg_snakemake.py",
        "tests/stats/test_operating_lattice.py",
        "tests/stats/test_power.py",
        "tests/stats/test_operating_resolution.py",
        "tests/workflow/test_interrupt.py",
        "tests/workflow_parts/test_forkserver.py",
    }
)


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests of each study run on one xdist worker (:data:`STUDY_RUNS`), and mark
    ``fast`` every test that uses no study run, is not ``slow`` or ``slurm`` and is not in a
    module of :data:`NOT_FAST`: the tier ``pytest -m fast -n 2`` runs before each commit."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        run = next((n for n in STUDY_RUNS if n in names), None)
        if run is not None:
            item.add_marker(pytest.mark.xdist_group(run))
        elif not {"slow", "slurm", "benchmark"} & {m.name for m in item.iter_markers()} and (
            Path(str(item.fspath)).relative_to(REPO_ROOT).as_posix() not in NOT_FAST
        ):
            item.add_marker(pytest.mark.fast)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Where no selected test is marked ``slurm`` (the fast tier, ``-m "not slurm"``), no test
    talks to a SLURM controller: the executor plugin's ``scontrol show config``, which every
    Snakemake start asks and which waits about 9 s on a machine with SLURM's tools and no
    controller (user guide, "A SLURM client without a controller"), is answered at once by an
    empty configuration here, in this process and the Snakemake runs it starts."""
    if not any(item.get_closest_marker("slurm") for item in session.items):
        os.environ["SLURM_CONF"] = os.devnull


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (holds Snakefile, preregistrations/, workflow/)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def demo_prereg_path() -> Path:
    """preregistrations/protocol-demo.yaml of the repository (frozen; its lock is committed)."""
    return REPO_ROOT / "preregistrations" / "protocol-demo.yaml"


@pytest.fixture()
def demo_study(demo_prereg_path):
    """The loaded demo study (validated, defaults applied)."""
    from tailgate.registration import load

    return load(demo_prereg_path)


@pytest.fixture(autouse=True, scope="session")
def _the_test_runner_is_not_foreign_code():
    """Records written in the test process itself (a test calling the library, as
    ``tests/prereg`` does) would list the test runner and the suite's own modules as loaded from
    outside the project (:mod:`tailgate.runtime.interpreter`): this process is not a job. They are
    vouched for here, and only here; the jobs the suite runs through Snakemake are separate
    processes and are judged as any job (``tests/contract/test_interpreter_startup.py``)."""
    import sys

    from tailgate.runtime import interpreter

    project = interpreter._project
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    runner = {str(p.resolve()) for p in Path(REPO_ROOT / "tests").rglob("*.py")}
    runner |= {str(Path(main).resolve())} if main else set()

    def with_runner() -> tuple[frozenset[str], tuple[bytes, ...]]:
        files, scripts = project()
        return files | runner, scripts

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(interpreter, "_project", with_runner)
        yield
