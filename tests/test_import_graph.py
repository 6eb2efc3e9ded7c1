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


#: the charter's layers, lowest first (workflow/README.md): the contract, statistics, the
#: registered plan and its results layout, data and stages, report, audit, the commands; the
#: root helpers below may be imported by anyone
LAYERS: dict[str, int] = {
    "prereg": 0,
    **dict.fromkeys(("runtime", "stats", "protocol", "analyses"), 1),
    "plans": 2,
    **dict.fromkeys(
        (
            "generate",
            "score",
            "transform",
            "stages",
            "models",
            "ledger",
            "interrupts",
        ),
        3,
    ),
    **dict.fromkeys(("summary", "diagnostics", "registration"), 3),
    "report": 4,
    "audit": 5,
    "authoring": 6,
    **dict.fromkeys(("cli", "status", "export_mlflow"), 7),
}
HELPERS = frozenset(
    {
        "tailgate", "atomic", "code", "errors", "forked",
        "joblog", "lazy", "operational", "parquet", "safe_read", "seeds", "severities",
        "score_files",
    }
)  # fmt: skip
#: imports against the layers, each with its reason: none (the entry points load a study through
#: ``tailgate.registration``, which adds the analysis kinds' checks above the contract's)
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
