"""Shared fixtures: the repository root, the shipped demo pre-registration, and the studies and
tiny models that the tests of several folders use. The suite's helper modules (study projects,
tiny models, harness runs) live in ``tests/support/``, put on the import path here, once."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests" / "support"))

# Models, tokenizers and datasets are built locally; nothing is downloaded.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("HF_DATASETS_CACHE", tempfile.mkdtemp(prefix="tailgate-datasets-"))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import attack_project  # noqa: E402
import wf_project  # noqa: E402
from tailgate.prereg.validated import Study  # noqa: E402

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


@pytest.fixture(autouse=True)
def _signal_dispositions():
    """Each test leaves SIGINT and SIGTERM as it found them: code run in-process (the fork
    server's, the interrupt watch) sets them, and a child started later inherits an ignored one
    (where Ctrl-C then stops nothing)."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        if handler is not None and signal.getsignal(sig) != handler:
            signal.signal(sig, handler)


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
    from tailgate.user_cache import use_kernel_cache

    use_kernel_cache()  # before any kernel module loads: the user's kernel cache, as every run
    import numpy as np
    from tailgate.analyses.dominance.statistics import bootstrap_ratios
    from tailgate.stats.draws import compiled
    from tailgate.stats.risk import bulk_bootstrap

    # a suite started in the background of a script (`pytest … &`) inherits SIGINT ignored, as
    # would every process a test starts; the interrupt tests need Ctrl-C's default action
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
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
        "tests/audit/test_audit_other_versions.py",
        "tests/audit/test_honest_setups.py",
        "tests/audit/test_reproduce_isolation.py",
        "tests/authoring/test_lattice_import.py",
        "tests/authoring/test_published_tag.py",
        "tests/generate/test_generation.py",
        "tests/prereg/test_committed_registration.py",
        "tests/prereg/test_prereg_design.py",
        "tests/prereg/test_prereg_snakemake.py",
        "tests/runtime/test_forkserver.py",
        "tests/score/test_judge_llm.py",
        "tests/stats/test_operating_lattice.py",
        "tests/stats/test_operating_resolution.py",
        "tests/stats/test_power.py",
        "tests/workflow/test_interrupt.py",
        "tests/workflow/test_workflow_llm.py",
    }
)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session):
    """pytest keeps each test module as it rewrote its asserts (``__pycache__``, beside the
    module) only where bytecode may be written: while the tests are collected it may, even under
    ``PYTHONDONTWRITEBYTECODE``, so a later run (and each worker) loads them instead of
    rewriting all of them again (about half of a worker's collection). The tests themselves run
    with the setting as it was."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved


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
    from tailgate.plans.registration import load

    return load(demo_prereg_path)


@pytest.fixture(autouse=True, scope="session")
def _the_test_runner_is_not_foreign_code():
    """Records written in the test process itself (a test calling the library, as
    ``tests/prereg`` does) would list the test runner and the suite's own modules as loaded from
    outside the project (:mod:`tailgate.runtime.interpreter`): this process is not a job. They are
    vouched for here, and only here; the jobs the suite runs through Snakemake are separate
    processes and are judged as any job (``tests/runtime/test_interpreter_startup.py``)."""
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


# The attack corpus's honest studies (tests/audit, tests/runtime, tests/prereg), from
# attack_project: registered, committed and run once.


@pytest.fixture(scope="session")
def honest_run(tmp_path_factory) -> attack_project.Project:
    """The attack study, frozen, committed and run; its honest verdict is KILL."""
    return attack_project.registered_and_run(
        tmp_path_factory.mktemp("attack"), "attack", attack_project.ATTACK_STUDY
    )


@pytest.fixture(scope="session")
def honest_audit(honest_run) -> tuple[int, str]:
    """``tailgate audit`` of the honest run as it was made: its exit code and output. No test
    changes the run (attacks edit copies), so one audit answers every test that reads it."""
    return honest_run.audit()


@pytest.fixture()
def proj(honest_run, tmp_path) -> attack_project.Project:
    """A private copy of the honest run (git history included) to attack."""
    return honest_run.copy(tmp_path / "attack")


@pytest.fixture(scope="session")
def honest_reproduction(honest_run, tmp_path_factory) -> tuple[Path, int, str]:
    """``audit --reproduce --keep`` of the honest run: the kept scratch project (the auditor's
    own re-run from the registration and the regenerated data), the exit code and the output.
    """
    kept = tmp_path_factory.mktemp("reproduction") / "scratch"
    code, out = honest_run.audit("--reproduce", "--keep", str(kept))
    return kept, code, out


@pytest.fixture()
def reproduce(honest_reproduction, tmp_path):
    """``audit --reproduce`` of an attacked copy whose registration and data are the honest
    run's: the auditor's re-run starts from a copy of the kept honest reproduction (mtimes
    kept), in which Snakemake finds every output up to date, so the comparison is the one a
    fresh scratch project would give, made by the same code from the same registration."""
    kept = honest_reproduction[0]

    def run(proj: attack_project.Project) -> tuple[int, str]:
        scratch = tmp_path / "reproduction"
        shutil.copytree(kept, scratch, symlinks=True)
        return proj.audit("--reproduce", "--keep", str(scratch))

    return run


@pytest.fixture(scope="session")
def import_run(tmp_path_factory) -> attack_project.Project:
    """The import study: its data file is written and committed with the registration."""
    root = tmp_path_factory.mktemp("imported")
    proj = attack_project.make_project(root, "imported", attack_project.IMPORT_STUDY)
    attack_project.write_import_csv(root / "data" / "scores.csv")
    code, out = proj.cli("freeze", proj.prereg)
    assert code == 0, out
    proj.commit("Pre-register the imported study", "preregistrations", "data")
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


@pytest.fixture()
def imported(import_run, tmp_path) -> attack_project.Project:
    return import_run.copy(tmp_path / "imported")


# The small study of wf_project (tests/workflow, tests/plans).


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> wf_project.Project:
    """The small study, frozen and run once through Snakemake (--cores 2); read-only."""
    proj = wf_project.make_project(tmp_path_factory.mktemp("small"))
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    proj.first_run = res  # what the run printed
    return proj


@pytest.fixture(scope="session")
def shipped_demo(tmp_path_factory) -> wf_project.Project:
    """preregistrations/protocol-demo.yaml with its committed lock, run once through Snakemake
    at its registered sizes (tests/analyses pins its results, tests/workflow reads its
    demonstrations); read-only."""
    return wf_project.run_shipped(tmp_path_factory.mktemp("protocol-demo"), "protocol-demo")


@pytest.fixture()
def small_copy(small_run, tmp_path) -> wf_project.Project:
    """A private copy of the finished small run (to edit, amend or tamper with)."""
    dest = tmp_path / "copy"
    shutil.copytree(small_run.root, dest, symlinks=True)
    return wf_project.Project(dest)


# Tiny models, tokenizers and datasets built locally (tests/generate, tests/score), from
# tiny_models. It imports PyTorch, which must load after numba's LLVM (pytest_configure), so it
# is imported by the fixtures that build a model, and only in runs that use one.
# * ``tiny_lm``: a random-init GPT-2-style causal LM with a byte-level BPE tokenizer trained on a
#   few sentences, saved with ``save_pretrained``. Its ``generation_config`` carries hostile
#   defaults (top_k=3, min_p=0.3, repetition_penalty=1.5) that a registered sampling spec must
#   override. ``tiny_chat_lm``: the same with a chat template.
# * ``tiny_bert`` / ``detoxify_checkpoint``: a random-init BERT classifier with six labels and a
#   WordPiece tokenizer, and a Detoxify-format checkpoint dict around it (``{"config": {"arch":
#   {"args": ...}, "dataset": {"args": {"classes": ...}}}, "state_dict": ...}``, as
#   ``detoxify.detoxify.load_checkpoint`` reads it).
# * ``rtp_jsonl``: a small RealToxicityPrompts-schema JSONL file.


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory) -> Path:
    from tiny_models import build_tiny_lm

    return build_tiny_lm(tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="session")
def tiny_chat_lm(tmp_path_factory) -> Path:
    from tiny_models import build_tiny_lm

    return build_tiny_lm(tmp_path_factory.mktemp("tiny-chat-lm"), chat=True, seed=1)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    from tiny_models import build_tiny_bert

    path = tmp_path_factory.mktemp("tiny-bert")
    build_tiny_bert(path)
    return path


@pytest.fixture(scope="session")
def detoxify_checkpoint(tiny_bert: Path, tmp_path_factory) -> Path:
    """A Detoxify-format checkpoint around ``tiny_bert``."""
    from tiny_models import build_detoxify_checkpoint

    return build_detoxify_checkpoint(
        tiny_bert, tmp_path_factory.mktemp("detoxify") / "toxic_tiny.ckpt"
    )


@pytest.fixture
def rtp_jsonl(tmp_path) -> Path:
    from tiny_models import write_rtp_jsonl

    return write_rtp_jsonl(tmp_path / "rtp.jsonl", 40)


def tiny_study(
    *,
    model_path: Path | None = None,
    source: Path | str = "unused",
    conditions: dict | None = None,
    scorers: list | None = None,
    shards: int = 2,
    max_new_tokens: int = 8,
    seed: int = 7,
    prompt_format: str = "plain",
    order: str = "dataset",
    filters: dict | None = None,
    extra_models: dict | None = None,
) -> Study:
    """A stand-in for a loaded pre-registration with defaults applied."""
    models = {}
    if model_path is not None:
        models["tiny"] = {"id": str(model_path), "dtype": "float32", "prompt_format": prompt_format}
    models.update(extra_models or {})
    data = {
        "seed": seed,
        "sample_cap": 1000,
        "data": {
            "prompts": {
                "source": str(source),
                "split": "train",
                "order": order,
                "filters": filters or {},
            }
        },
        "models": models,
        "generation": {
            "temperature": 1.0,
            "top_p": 0.9,
            "max_new_tokens": max_new_tokens,
            "shards": shards,
        },
        "conditions": conditions
        or [
            {"name": "clean", "model": "tiny", "prompts": 12, "perturbation": {"kind": "none"}},
            {
                "name": "noisy",
                "model": "tiny",
                "prompts": 12,
                "perturbation": {"kind": "embedding_noise", "sigma_rel": 0.25},
            },
        ],
        "scorers": scorers or [],
    }
    return Study(Path("tiny-study.yaml"), {"study": "tiny-study", **data}, "0" * 64, "0" * 64)


@pytest.fixture
def study_factory():
    return tiny_study
