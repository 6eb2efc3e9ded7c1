"""The package's import graph has no cycle (the charter's layering: a module never imports
back into a module that imports it, at module level or inside a function).

Every module of ``workflow/tailgate`` is parsed with :mod:`ast`; every ``import`` and
``from … import …`` anywhere in it (module level, in functions, under ``TYPE_CHECKING``) is an
edge. Relative imports are resolved against the importing module's package, and
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``; those package edges are
left out (a package's ``__init__`` that imports its own children would otherwise be a cycle
with every child), so the graph is the one a reader follows: module to module.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "tailgate"

#: cycles tolerated for now, each a set of module names: none
KNOWN: list[frozenset[str]] = []


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()

    def add(mod: str) -> None:
        # the longest prefix that is one of the package's modules
        parts = mod.split(".")
        while parts:
            cand = ".".join(parts)
            if cand in modules:
                found.add(cand)
                return
            parts.pop()

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(name, path).split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                if sub in modules:
                    found.add(sub)
                else:
                    add(mod)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module name → the package's modules it imports."""
    modules = _modules()
    return {name: _targets(name, path, modules) for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The graph's strongly connected components (Tarjan, 1972), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.add(top)
                    if top == node:
                        break
                out.append(comp)
    return out


def a_cycle(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """One cycle through ``comp`` (a strongly connected component), as a path of names."""
    start = min(comp)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & comp):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    raise AssertionError("not a strongly connected component")


def test_the_graph_is_read() -> None:
    graph = import_graph()
    # an edge at module level, one inside a function, a relative one and one to a submodule
    # named in ``from pkg import name``: the reader sees each
    assert "tailgate.errors" in graph["tailgate.prereg.study"]
    assert "tailgate.audit.reproduce" in graph["tailgate.cli.audit"]
    assert "tailgate.audit.findings" in graph["tailgate.audit.plain"]
    assert (
        "tailgate.analyses.perturbation.statistics"
        in graph["tailgate.analyses.perturbation.compute"]
    )
    assert sum(map(len, graph.values())) > 300


def test_a_cycle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    comps = [c for c in strongly_connected(graph) if len(c) > 1]
    assert comps == [{"a", "b", "c"}]
    assert a_cycle(graph, comps[0]) == ["a", "b", "c", "a"]


def test_no_import_cycle() -> None:
    graph = import_graph()
    components = [c for c in strongly_connected(graph) if len(c) > 1]
    unexpected = [c for c in components if frozenset(c) not in KNOWN]
    lines = [
        f"{len(comp)} modules in a cycle, e.g. " + " -> ".join(a_cycle(graph, comp))
        for comp in unexpected
    ]
    assert not unexpected, "import cycles:\n" + "\n".join(lines)


#: pairs of top-level rooms (a package or a root module) that import each other, so that one of
#: the two imports climbs a layer: none
KNOWN_CLIMBS: set[frozenset[str]] = set()


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_the_layers_are_climbed_only_where_known() -> None:
    """Packages import down the layers (the contract, statistics, data and stages, report,
    audit, CLI): two rooms that import each other put one import against the layers."""
    graph = import_graph()
    edges = {(_room(a), _room(b)) for a, targets in graph.items() for b in targets}
    mutual = {frozenset(e) for e in edges if e[0] != e[1] and (e[1], e[0]) in edges}
    assert mutual <= KNOWN_CLIMBS, sorted(map(sorted, mutual - KNOWN_CLIMBS))
    assert len(KNOWN_CLIMBS) <= 4


#: the charter's layers, lowest first (workflow/README.md): reading and writing files, the
#: contract, statistics and the severity files the analyses read, the registered plan and its
#: results layout, data, stages and the run's record, report, audit, the commands; the root
#: helpers below may be imported by anyone
LAYERS: dict[str, int] = {
    "files": -1,
    "prereg": 0,
    **dict.fromkeys(("runtime", "stats", "protocol", "analyses", "data"), 1),
    "plans": 2,
    **dict.fromkeys(("generate", "score", "stages", "models", "runs"), 3),
    "report": 4,
    "audit": 5,
    "authoring": 6,
    "cli": 7,
}
HELPERS = frozenset(
    {"tailgate", "code", "errors", "forked", "lazy", "operational", "seeds", "user_cache"}
)
#: imports against the layers, each with its reason: none (the entry points load a study through
#: ``tailgate.plans.registration``, which adds the analysis kinds' checks above the contract's)
KNOWN_UPWARD: set[tuple[str, str]] = set()


def test_every_import_runs_down_the_layers() -> None:
    graph = import_graph()
    rooms = {_room(m) for m in graph}
    assert rooms <= set(LAYERS) | HELPERS, (
        f"place in a layer: {sorted(rooms - set(LAYERS) - HELPERS)}"
    )
    upward = {
        (a, b)
        for a, targets in graph.items()
        for b in targets
        if _room(a) in LAYERS and _room(b) in LAYERS and LAYERS[_room(b)] > LAYERS[_room(a)]
    }
    assert upward <= KNOWN_UPWARD, sorted(upward - KNOWN_UPWARD)
    assert len(KNOWN_UPWARD) <= 4


_KIND_READ = "pyarrow loads with the first read (validating a study loads its kinds)"
_CLI = "tailgate --help and each verb load only their own modules"
_AUDIT_STAGES = "numpy and pyarrow load only when the audit re-derives a stage's numbers"
_FIGURES = "matplotlib loads only when the report's figures are re-rendered"
_IMPORTER = "pyarrow loads only for a study with an import file"
_ONE_SCORER = "a job loads only its own scorer (torch for a model's)"
#: the package's imports inside a function, (importing module, imported module) → why the import
#: waits (a measured start-up: ``python -X importtime``); every other import sits at the top
LAZY: dict[tuple[str, str], str] = {
    ("analyses.dominance.compute", "analyses.dominance.statistics"): "numba and scipy",
    ("analyses.dominance.inputs", "data.severities"): _KIND_READ,
    ("analyses.percentiles.inputs", "data.score_files"): _KIND_READ,
    ("analyses.percentiles.inputs", "data.severities"): _KIND_READ,
    ("analyses.percentiles.inputs", "files.parquet"): _KIND_READ,
    ("analyses.perturbation.inputs", "data.score_files"): _KIND_READ,
    ("analyses.perturbation.inputs", "data.severities"): _KIND_READ,
    ("analyses.severity.inputs", "data.severities"): _KIND_READ,
    ("audit.compare", "files.parquet"): "pyarrow loads only for a results comparison",
    ("audit.gates", "plans.reads"): _AUDIT_STAGES,
    ("audit.gates", "protocol.registered"): _AUDIT_STAGES,
    ("audit.gates", "stages.gates"): _AUDIT_STAGES,
    ("audit.gates", "stages.registered_plan"): _AUDIT_STAGES,
    ("audit.gates", "stages.sensitivity"): _AUDIT_STAGES,
    ("audit.outcome", "plans.reads"): _AUDIT_STAGES,
    ("audit.outcome", "report"): _FIGURES,
    ("audit.outcome", "report.raster"): _FIGURES,
    ("audit.outcome", "report.kept_figures"): _FIGURES,
    ("audit.outcome", "report.stage"): _FIGURES,
    ("audit.plain", "stages.sensitivity"): _AUDIT_STAGES,
    ("audit.reproduce", "report.stage"): _FIGURES,
    ("audit.runs", "runtime.fingerprint"): "its check_runtime has the name of this module's",
    ("authoring.importcheck", "generate.importer"): _IMPORTER,
    ("authoring.proposals", "generate.importer"): _IMPORTER,
    ("authoring.proposals", "data.transform"): "scipy loads only for a proposed transform",
    ("authoring.proposals", "plans.reads"): "init's proposals load the stages only to fill a value",
    ("authoring.proposals", "plans.registration"): "the kinds load only to check a proposal",
    ("authoring.freeze", "prereg.timestamp"): "http and ssl load only for a trusted timestamp",
    ("authoring.runnable", "generate.importer"): _IMPORTER,
    ("authoring.scaffold", "generate.importer"): _IMPORTER,
    **{
        ("cli." + verb, target): _CLI
        for verb, targets in {
            "analyses": (
                "analyses.perturbation",
                "protocol.multiverse",
                "plans.registration",
                "runs.summary",
                "stages.common",
                "stages.sensitivity",
                "stages.verdict",
            ),
            "audit": ("audit", "audit.bundle_open", "audit.findings", "audit.reproduce", "forked"),
            "bundle": ("audit.bundle_write",),
            "design": (
                "authoring.freeze",
                "authoring.importcheck",
                "authoring.runnable",
                "plans.registration",
                "protocol.design",
            ),
            "env": ("runtime.provenance",),
            "export": (
                "generate.harness_groups",
                "prereg.deviations",
                "prereg.lock",
                "runs.ledger",
                "runtime.provenance",
            ),
            "init": ("authoring.scaffold",),
            "lock": ("authoring.freeze", "plans.registration", "prereg.diff"),
            "status": ("prereg.deviations", "prereg.guard", "runs.ledger", "runtime.provenance"),
        }.items()
        for target in targets
    },
    ("cli.export", "audit"): "the audit loads only when the export names its verdict",
    ("cli.status", "audit"): "the audit loads only for a status that reports one",
    ("cli.status", "prereg.history"): "the lock's history loads only for a status that lists it",
    ("generate", "generate.importer"): "a job loads only its own generator",
    ("generate", "generate.simulate"): "a job loads only its own generator (scipy)",
    ("generate", "generate.transformers_backend"): "a job loads only its own generator (torch)",
    ("plans.branch", "protocol.registered"): "the protocol's statistics load in the jobs using it",
    ("plans.fingerprint", "protocol.design"): "the protocol's statistics load in the jobs using it",
    ("plans.fingerprint", "protocol.registered"): "the protocol's statistics load in its jobs",
    ("plans.reads", "analyses.registry"): "the analysis kinds load only for a plan reading them",
    ("prereg.committed", "prereg.gitinfo"): "git is asked only for a confirmatory run",
    ("prereg.committed", "prereg.gitreview"): "git is asked only for a confirmatory run",
    ("prereg.guard", "prereg.evidence"): "git and subprocess load only for a refusal's message",
    ("protocol.design", "protocol.operating"): "the simulation loads only for a design",
    ("protocol.design", "protocol.recovery"): "the simulation loads only for a design",
    ("report", "report.model"): "the package's names load on first use (a light module first)",
    ("report.stage", "plans.reads"): "the stages' reads load only under the registered plan",
    ("runs.ledger", "prereg.gitinfo"): "the Snakefile's start-up: git is asked when a run ends",
    ("runs.ledger", "runs.summary"): "the Snakefile's start-up: the summary loads when a run ends",
    ("runtime.forkserver", "files.atomic"): "the warm server imports no package module to fork",
    ("runtime.provenance", "files.parquet"): "pyarrow loads only to digest a parquet artifact",
    ("runtime.provenance", "runtime.fingerprint"): "the interpreter's checks load when recorded",
    ("score", "models"): _ONE_SCORER,
    ("score", "score.column"): _ONE_SCORER,
    ("score", "score.judge"): _ONE_SCORER,
    ("score", "score.profanity"): _ONE_SCORER,
    ("score", "score.regex"): _ONE_SCORER,
    ("score", "score.token_nll"): _ONE_SCORER,
    ("score", "score.toxicity"): _ONE_SCORER,
    ("score.embedding", "models"): "torch loads only when a model embeds",
    ("score.judge", "generate.transformers_backend"): "torch loads only when a judge runs",
    ("score.judge", "models"): "torch loads only when a judge runs",
    ("stages.data", "generate.prompts"): "each data job loads only its own step",
    ("stages.data", "score"): "each data job loads only its own step",
    ("stages.data", "score.embedding"): "each data job loads only its own step",
    ("stages.data", "score.judge"): "each data job loads only its own step",
    (
        "stages.verdict",
        "stages.registered_plan",
    ): "only under a registered plan",
}


def inner_imports() -> set[tuple[str, str]]:
    """(importing module, imported module) of every package import inside a function, both
    without the leading ``tailgate.``."""
    found = set()
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    mods = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        parts = _package_of(name, path).split(".")
                        parts = parts[: len(parts) - (node.level - 1)]
                        base = ".".join(parts + ([node.module] if node.module else []))
                    mods = [base]
                else:
                    continue
                for mod in mods:
                    if mod == "tailgate" or mod.startswith("tailgate."):
                        found.add((name.removeprefix("tailgate."), mod.removeprefix("tailgate.")))
    return found


def test_imports_sit_at_the_top_unless_listed() -> None:
    """An import inside a function is one of ``LAZY``, each with its measured reason
    (workflow/docs/contributing.md, "Imports"); a listed one that is gone leaves the list."""
    found = inner_imports()
    assert ("stages.data", "score") in found  # the reader sees an inner import
    assert not found - LAZY.keys(), "move to the module's top, or list with the reason: " + str(
        sorted(found - LAZY.keys())
    )
    assert not LAZY.keys() - found, f"no longer inside a function: {sorted(LAZY.keys() - found)}"
