"""The package's structure rules (see docs/architecture.md): each package is
used through its public face, every module is one concept of a readable size,
and nothing patches another object's methods.

* No module of one package imports a private module (``_name``) of another
  package: the runtime, the mailbox, the remote layer and the NATS client
  use the channel core through ``actors.channel.lowlevel``, the remote layer
  uses the runtime through ``actors`` and ``actors.extension``, and so on.
  Allowed: a subpackage uses its parent package's private modules
  (``actors.remote.scaleout`` those of ``actors.remote``), and the test kit
  (``actors.testing``) the runtime's.
* No module over ``MAX_MODULE_LINES`` lines; no class over
  ``MAX_CLASS_LINES`` lines, docstrings and comments counted (what a reader
  has to get through; a class that needs more is several concepts, each a
  base class of its own module, as Akka's actor cell).
* No import cycle inside ``actors.remote``, counting the imports made under
  ``if TYPE_CHECKING:`` too (a cycle there is a design cycle all the same).
* No ``method-assign`` (no object's methods replaced from outside: an
  instrumentor fills named hook points instead).
"""

from __future__ import annotations

import ast
from pathlib import Path

from .test_import_graph import ROOT, _cycles, _module_name

#: The most lines of a module (a file over ~400 is a sign two concepts share it).
MAX_MODULE_LINES = 700
#: The most lines of a class, as in the file (docstrings and comments too).
MAX_CLASS_LINES = 400


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _package(module: str) -> str:
    """The package a module belongs to: ``actors.channel`` for
    ``actors.channel._state``, ``actors`` for ``actors._ref``."""
    parts = module.split(".")
    while len(parts) > 1 and parts[-1].startswith("_"):
        parts.pop()
    if len(parts) > 1 and Path(ROOT.parent, *parts).is_dir():
        return ".".join(parts)
    return ".".join(parts[:-1]) or parts[0]


def _imports(module: str, path: Path, type_checking: bool) -> list[tuple[str, int]]:
    """The modules ``module`` imports (absolute names) with their lines."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    base = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if (
                not type_checking
                and isinstance(child, ast.If)
                and "TYPE_CHECKING" in ast.unparse(child.test)
            ):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parts = base[: len(base) - child.level + 1]
                    target = ".".join(parts + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                found.append((target, child.lineno))
                found.extend(
                    (f"{target}.{alias.name}", child.lineno) for alias in child.names
                )
            visit(child)

    visit(tree)
    return found


def _private_parts(module: str) -> list[str]:
    return [part for part in module.split(".") if part.startswith("_")]


def test_no_package_imports_another_packages_private_modules() -> None:
    modules = _modules()
    bad = []
    for name, path in modules.items():
        own = _package(name)
        for target, line in _imports(name, path, type_checking=True):
            if target not in modules or not _private_parts(target):
                continue
            home = _package(target)
            # Its own package's private modules; those of the package a
            # subpackage belongs to (actors.remote._x from
            # actors.remote.scaleout._y); and the runtime's from the test
            # kit, a white-box kit that fakes cells (as trio.testing uses
            # trio._core).
            if (
                own == home
                or (home != "actors" and own.startswith(home + "."))
                or (own == "actors.testing" and home == "actors")
            ):
                continue
            bad.append(f"{name}:{line} imports {target}")
    assert bad == []


def test_no_module_or_class_is_too_long() -> None:
    too_long = []
    for name, path in _modules().items():
        text = path.read_text()
        count = len(text.splitlines())
        if count > MAX_MODULE_LINES:
            too_long.append(f"module {name}: {count} lines")
        tree = ast.parse(text, str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    too_long.append(f"class {name}.{node.name}: {size} lines")
    assert too_long == []


def test_the_remote_layer_has_no_import_cycle_even_for_type_checking() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if not name.startswith("actors.remote"):
            continue
        graph[name] = {
            target
            for target, _ in _imports(name, path, type_checking=True)
            if target in modules
            and target.startswith("actors.remote")
            and target != name
            # A package's __init__ re-exports its modules: their parent.
            and not name.startswith(target + ".")
        }
    assert _cycles(graph) == []


def test_no_method_is_assigned_from_outside() -> None:
    marker = "method" + "-assign"  # not itself a match
    found = [
        f"{path.relative_to(ROOT.parent)}:{number}"
        for path in sorted(ROOT.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if marker in line
    ]
    assert found == []
