"""The package's import graph has no circle (issue 28): read from the source with ast, imports inside
functions included, so a circle that only a late import hides is found too."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

SOURCE = Path(__file__).resolve().parents[1] / "src" / "admmcheck"


def _module(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> nx.DiGraph:
    modules = {_module(path): path for path in SOURCE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for target in targets:
                if target in modules and target != name and not name.startswith(target + "."):
                    graph.add_edge(name, target)
    return graph


def test_the_graph_is_read_from_the_source():
    graph = import_graph()
    assert graph.has_edge("admmcheck.audit.auditor", "admmcheck.audit.running.sampling")
    assert graph.has_edge("admmcheck.audit.running.dask_executor", "admmcheck.audit.running.worker_process")


def test_no_import_circle():
    # the audit engine had sampling <-> dask_executor (WorkerProcess), hidden by imports inside functions
    assert list(nx.simple_cycles(import_graph())) == []


#: What the audit engine may not import: it audits a mechanism it knows nothing about (issue 28).
SCIENCE = ("admmcheck.algorithms", "admmcheck.problems", "admmcheck.solving", "admmcheck.privacy",
           "admmcheck.conditions", "admmcheck.experiments",
           "admmcheck.commands", "admmcheck.mechanisms", "admmcheck.cli", "admmcheck.report")


def _reaches(graph: nx.DiGraph, package: str) -> dict[str, list[str]]:
    """Every module ``package``'s modules reach (transitively) that lies in SCIENCE, with one path."""
    found = {}
    for module in (m for m in graph if m == package or m.startswith(package + ".")):
        for target, path in nx.single_source_shortest_path(graph, module).items():
            if target.startswith(SCIENCE) and target not in found:
                found[target] = path
    return found


def test_the_audit_engine_knows_no_algorithm():
    assert _reaches(import_graph(), "admmcheck.audit") == {}


def test_the_check_finds_a_forbidden_import():
    graph = import_graph()
    graph.add_edge("admmcheck.audit.statistics.events", "admmcheck.problems.setting")  # as if the engine built a problem
    assert "admmcheck.problems.setting" in _reaches(graph, "admmcheck.audit")


def test_the_report_reads_results_and_runs_nothing():
    """Issue 52: the report layer imported the command layer 23 times (it ran the whole verification itself); now
    ``admmcheck.commands.verify`` runs it and the report only holds and renders what it is given."""
    graph = import_graph()
    reached = {target: path for target, path in _reaches(graph, "admmcheck.report").items()
               if target.startswith(("admmcheck.commands", "admmcheck.cli"))}
    assert reached == {}
    assert graph.has_edge("admmcheck.commands.verify", "admmcheck.report.model")


#: The audit engine's rooms (issue 52, item 4) and what each may import of the engine: the inputs nothing but
#: themselves, the statistics and the running of code the inputs, the drivers on top anything.
ROOMS = {"admmcheck.audit.inputs": ("admmcheck.audit.inputs",),
         "admmcheck.audit.statistics": ("admmcheck.audit.statistics", "admmcheck.audit.inputs"),
         "admmcheck.audit.running": ("admmcheck.audit.running", "admmcheck.audit.inputs")}


def _crossings(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """Every import of a room of :data:`ROOMS` into a part of the engine it may not import."""
    return sorted((module, target) for module, target in graph.edges for room, allowed in ROOMS.items()
                  if module.startswith(room + ".") and target.startswith("admmcheck.audit.")
                  and not target.startswith(tuple(a + "." for a in allowed)) and target not in allowed)


def test_the_audit_engine_depends_one_way_by_role():
    graph = import_graph()
    assert _crossings(graph) == []
    assert graph.has_edge("admmcheck.audit.running.sampling", "admmcheck.audit.inputs.outputs")
    graph.add_edge("admmcheck.audit.running.sampling", "admmcheck.audit.statistics.counting")  # as it once did
    assert _crossings(graph) == [("admmcheck.audit.running.sampling", "admmcheck.audit.statistics.counting")]


#: The layers, lowest first (issue 61, item 3): each folder (or module) of the package belongs to one, and a module
#: imports only its own layer and those below it. The audit engine is the exception that shows it is an engine: it
#: stands beside the science and imports only the foundations and the claim values it tests.
LAYERS = (
    ("foundations", ("admmcheck.foundations", "admmcheck._version")),
    ("claim values", ("admmcheck.claims",)),
    ("audit engine", ("admmcheck.audit",)),
    ("problems", ("admmcheck.problems",)),
    ("solving", ("admmcheck.solving",)),
    ("algorithms", ("admmcheck.algorithms",)),
    ("theorems and experiments", ("admmcheck.privacy", "admmcheck.conditions", "admmcheck.experiments")),
    ("registry", ("admmcheck.mechanisms",)),
    ("strategies", ("admmcheck.strategies",)),
    ("report", ("admmcheck.report",)),
    ("commands", ("admmcheck.commands",)),
    ("assertions", ("admmcheck.testing", "admmcheck.pytest_plugin")),
    ("command line", ("admmcheck.cli", "admmcheck.__main__")),
)
BESIDE = {"audit engine": ("foundations", "claim values")}


def layer_of(module: str) -> str | None:
    """The layer of ``module`` (None: the package itself, whose lazy re-exports may name any layer)."""
    for layer, packages in LAYERS:
        if any(module == package or module.startswith(package + ".") for package in packages):
            return layer
    return None


def _upward(graph: nx.DiGraph) -> list[tuple[str, str]]:
    rank = {layer: i for i, (layer, _) in enumerate(LAYERS)}
    found = []
    for module, target in graph.edges:
        if module == "admmcheck":
            continue
        below, above = layer_of(target), layer_of(module)
        allowed = BESIDE.get(above)
        if rank[below] > rank[above] or (allowed is not None and below != above and below not in allowed):
            found.append((module, target))
    return sorted(found)


def test_every_module_has_a_layer_and_the_package_root_holds_none():
    modules = list(import_graph())
    assert [m for m in modules if m != "admmcheck" and layer_of(m) is None] == []
    loose = sorted(path.name for path in SOURCE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "_version.py", "cli.py", "pytest_plugin.py", "strategies.py",
                     "testing.py"]


def test_the_layers_depend_one_way():
    graph = import_graph()
    assert _upward(graph) == []
    assert graph.has_edge("admmcheck.strategies", "admmcheck.mechanisms.audit_request")
    graph.add_edge("admmcheck.strategies", "admmcheck.commands.audit")  # as it once did
    graph.add_edge("admmcheck.audit.search", "admmcheck.solving.runs")
    assert _upward(graph) == [("admmcheck.audit.search", "admmcheck.solving.runs"),
                              ("admmcheck.strategies", "admmcheck.commands.audit")]


def test_the_readme_table_names_the_layers_and_their_folders():
    readme = (SOURCE.parents[1] / "README.md").read_text()
    rows = [line.split("|")[1:3] for line in readme.split("| layer | modules")[1].split("\n\n")[0].splitlines()[2:]]
    table = {layer.strip(): sorted(part.split("`")[1].rstrip("/") for part in modules.strip().split(", ")
                                   if part.startswith("`"))
             for layer, modules in rows}
    assert table == {layer: sorted(package.removeprefix("admmcheck.") for package in packages)
                     for layer, packages in LAYERS}


def test_the_command_line_only_parses_and_dispatches_and_no_function_is_long():
    """Issue 61: cli.py was 887 lines, about 40 % printers reading result dicts; the results print themselves now.
    No function in the package runs over 80 lines."""
    cli = (SOURCE / "cli.py").read_text()
    assert len(cli.splitlines()) <= 400
    assert "def _print" not in cli
    long = [(path.relative_to(SOURCE).as_posix(), node.name, node.end_lineno - node.lineno + 1)
            for path in sorted(SOURCE.rglob("*.py")) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80]
    assert long == []
