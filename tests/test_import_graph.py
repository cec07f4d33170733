"""The module import graph of ddl_gym (with ddl_gym.baselines and ddl_gym.agents) has no circles (issue 29).

The graph is read statically from the sources (``ast``). Rule: every ``import`` / ``from ... import``
statement counts, also one inside a function (a deferred import still ties the two modules together);
only imports under ``if TYPE_CHECKING:`` do not (they never run). An edge goes to the module named
(``from ddl_gym.harness.stats import mean_ci`` -> ``ddl_gym.harness.stats``; ``from ddl_gym.baselines.sjf_bco
import plan`` -> ``ddl_gym.baselines.sjf_bco.plan``), not to its parent packages (Python runs a parent's
``__init__`` first, but a package re-exporting its own submodules is not a circle). Strings naming a
module (the policy registry's ``"module:factory"`` targets) are not imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ddl_gym._moved import MOVED_MODULES

REPO = Path(__file__).resolve().parents[1]
#: dotted prefix -> folder (baselines/ and agents/ are installed as ddl_gym.baselines / ddl_gym.agents)
ROOTS = {"ddl_gym": REPO / "ddl_gym", "ddl_gym.baselines": REPO / "baselines", "ddl_gym.agents": REPO / "agents"}


def project_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for prefix, folder in ROOTS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([prefix, *parts])] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_names(tree: ast.AST, package: str) -> list[str]:
    """Dotted names every import statement of ``tree`` imports (``X`` and ``X.name`` for ``from X import name``)."""
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            out.append(base)
            out.extend(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports (see the module docstring for the rule)."""
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        names = imported_names(ast.parse(path.read_text(encoding="utf-8"), str(path)), package)
        targets = set()
        for name in names:
            if name in modules:
                target: str | None = name
            elif name.rpartition(".")[0] in modules:  # ``from PKG import attribute``: PKG is listed too
                continue
            else:
                target = resolve(name)  # ``import ddl_gym.sim.engine.x``-like names, or outside the project: None
            if target and target != module:
                targets.add(target)
        graph[module] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` as a path ``[a, b, ..., a]``, or None (iterative depth-first search)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for start in sorted(graph):
        if colour[start] != WHITE:
            continue
        stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        colour[start] = GREY
        while stack:
            node, todo = stack[-1]
            if not todo:
                colour[node] = BLACK
                stack.pop()
                continue
            nxt = todo.pop(0)
            if colour.get(nxt, BLACK) == GREY:
                path = [n for n, _ in stack]
                return path[path.index(nxt):] + [nxt]
            if colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                stack.append((nxt, sorted(graph[nxt])))
    return None


def test_project_import_graph_has_no_circles() -> None:
    modules = project_modules()
    graph = import_graph(modules)
    assert {"ddl_gym.harness.evaluation", "ddl_gym.baselines.sjf_bco.plan", "ddl_gym.agents.mcts"} <= set(graph)
    # the graph is really read: a few edges that exist
    assert "ddl_gym.sim.engine" in graph["ddl_gym.harness.episodes"]
    assert "ddl_gym.baselines.sjf_bco.plan" in graph["ddl_gym.baselines.sjf_bco.policy"]
    assert "ddl_gym.harness.stats" in graph["ddl_gym.plots"]  # an import inside a function counts
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_reference_policies_import_nothing_from_the_agents() -> None:
    graph = import_graph(project_modules())
    seen, todo = set(), [m for m in graph if m.startswith("ddl_gym.baselines")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    assert not {m for m in seen if m.startswith("ddl_gym.agents")}


@pytest.mark.parametrize("edges, circle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, True),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, False),
    ({"a": {"a2"}, "a2": set(), "b": {"a", "c"}, "c": {"b"}}, True),
])
def test_find_cycle_on_synthetic_graphs(edges: dict[str, set[str]], circle: bool) -> None:
    found = find_cycle(edges)
    assert (found is not None) == circle
    if found:
        assert found[0] == found[-1] and all(b in edges[a] for a, b in zip(found, found[1:]))


def test_a_circle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    """The rule on real source text: a deferred import closes a circle; a TYPE_CHECKING one does not."""
    (tmp_path / "one.py").write_text("from pkg import two\n")
    (tmp_path / "two.py").write_text("def f():\n    from pkg.one import x\n")
    (tmp_path / "three.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import one\n")
    modules = {f"pkg.{p.stem}": p for p in tmp_path.glob("*.py")}
    graph = import_graph(modules)
    assert graph["pkg.one"] == {"pkg.two"} and graph["pkg.two"] == {"pkg.one"} and graph["pkg.three"] == set()
    assert find_cycle(graph) in (["pkg.one", "pkg.two", "pkg.one"], ["pkg.two", "pkg.one", "pkg.two"])


def test_the_project_imports_no_deprecated_path() -> None:
    """Old module paths are for users (one release); the project's own code uses the new ones."""
    offenders = []
    for folder in ("ddl_gym", "baselines", "agents", "scripts", "tests"):
        for path in (REPO / folder).rglob("*.py"):
            if path.name in ("_moved.py", "test_import_graph.py", "test_moved_paths.py"):
                continue
            package = "ddl_gym"
            for name in imported_names(ast.parse(path.read_text(encoding="utf-8")), package):
                if name in MOVED_MODULES:
                    offenders.append(f"{path.relative_to(REPO)}: {name}")
    assert not offenders, offenders
