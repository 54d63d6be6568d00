"""The package's import graph has no cycle, and imports only go down the
layers: persistence -> remote -> runtime -> mailbox -> channel, and
remote -> nats -> channel (see the architecture page), persistence never
importing remote.

An AST walk over every module of ``actors``: top-level imports and
function-local ones, but not those under ``if TYPE_CHECKING:`` (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import actors

ROOT = Path(actors.__file__).resolve().parent
#: Imports of these optional dependencies may be function-local.
# msgspec: the remote, persistence and delivery extras (actors.sharding
# imports its wire to other nodes only for a system that is a node).
OPTIONAL = ("msgspec", "opentelemetry", "trio", "uvloop")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.found: list[tuple[str, int, bool]] = []  # (target, line, local)
        self.depth = 0

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append((alias.name, node.lineno, self.depth > 0))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            if node.level > 1:
                base = base[: -(node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        local = self.depth > 0
        if node.module is not None:
            self.found.append((target, node.lineno, local))
        # "from . import x", "from .pkg import module": a name may be a module
        for alias in node.names:
            self.found.append((f"{target}.{alias.name}", node.lineno, local))


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    """The import graph between the package's modules, and the function-local
    imports that are not of an optional dependency (nor of a module that needs
    one at its top level, such as ``_traced``: OpenTelemetry)."""
    modules = {
        _module_name(path): path for path in ROOT.rglob("*.py") if path.is_file()
    }
    graph: dict[str, set[str]] = {name: set() for name in modules}
    found: dict[str, list[tuple[str, int, bool]]] = {}
    for name, path in modules.items():
        visitor = _Imports(name, path.name == "__init__.py")
        visitor.visit(ast.parse(path.read_text(), str(path)))
        found[name] = visitor.found
    needs_optional = {
        name
        for name, imports in found.items()
        if any(t.startswith(OPTIONAL) and not loc for t, _, loc in imports)
    }
    local: list[str] = []
    for name, imports in found.items():
        for target, line, is_local in imports:
            if target in modules and target != name:
                graph[name].add(target)
                if is_local and target not in needs_optional:
                    local.append(f"{name}:{line} imports {target} inside a function")
    return graph, local


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and not parts[1].startswith("_") else "runtime"


LAYERS = {
    "channel": 0,
    "mailbox": 1,
    "nats": 1,
    "runtime": 2,
    "extension": 2,
    "testing": 3,
    "remote": 3,
    "node": 4,
    # Above remote in the stack, but it does not use it (it may use actors.nats).
    "persistence": 4,
    "delivery": 5,
    # Above persistence and the remote layer: it uses both.
    "sharding": 6,
}


def test_the_import_graph_has_no_cycle() -> None:
    graph, _ = _graph()
    # A package's __init__ re-exports its modules: it is their parent, not a
    # peer, so edges into a package's own __init__ from inside it are fine.
    pruned = {
        name: {t for t in targets if not name.startswith(t + ".")}
        for name, targets in graph.items()
    }
    assert _cycles(pruned) == []


def test_imports_only_go_down_the_layers() -> None:
    graph, _ = _graph()
    upward = []
    for name, targets in graph.items():
        if name == "actors":
            continue  # the package's face re-exports the runtime
        for target in targets:
            if target == "actors":
                upward.append(f"{name} imports the package root")
                continue
            source_layer = LAYERS[_package_of(name)]
            target_layer = LAYERS[_package_of(target)]
            if target_layer > source_layer:
                upward.append(f"{name} imports {target}")
    assert upward == []


def test_function_local_imports_are_for_optional_dependencies_only() -> None:
    _, local = _graph()
    assert local == []


def test_persistence_does_not_import_the_remote_layer() -> None:
    graph, _ = _graph()
    found = [
        f"{name} imports {target}"
        for name, targets in graph.items()
        if _package_of(name) == "persistence"
        for target in targets
        if _package_of(target) in ("remote", "node")
    ]
    assert found == []
