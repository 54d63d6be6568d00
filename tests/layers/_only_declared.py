"""Run a Python program as if only the base install were present.

``python _only_declared.py [--with DIST]... -- -c CODE``, ``... -- -m MODULE
ARGS`` or ``... -- PATH ARGS``: every top-level module that belongs neither to
the standard library nor to a distribution anyio-actors declares without extras (anyio,
opentelemetry-api, what they require, recursively), nor to a ``--with``
distribution (and what it requires), raises ImportError when imported, as it
would in an environment where it is not installed. Used by
test_declared_imports.py: "import nothing the base install does not declare".
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import re
import runpy
import sys
from collections.abc import Sequence
from types import ModuleType

from packaging.requirements import Requirement


def _closure(roots: Sequence[str]) -> set[str]:
    """Normalised names of ``roots`` and of everything they require (no
    extras), recursively, as installed here."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # a marker excluded it, or it is not installed
        for text in requires:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is None or marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


def allowed_modules(extra_dists: Sequence[str]) -> set[str]:
    dists = _closure(["anyio-actors", *extra_dists])
    allowed = set(sys.stdlib_module_names) | {"actors"}
    for module, owners in importlib.metadata.packages_distributions().items():
        if any(re.sub(r"[-_.]+", "-", d).lower() in dists for d in owners):
            allowed.add(module)
    return allowed


class _Refuse(importlib.abc.MetaPathFinder):
    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed
        self.refused: list[str] = []

    def find_spec(
        self, fullname: str, path: object, target: ModuleType | None = None
    ) -> None:
        top = fullname.partition(".")[0]
        if top not in self.allowed:
            self.refused.append(fullname)
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def main(argv: list[str]) -> None:
    extra: list[str] = []
    while argv and argv[0] == "--with":
        extra.append(argv[1])
        argv = argv[2:]
    usage = "usage: [--with DIST]... -- -c CODE | -m MOD ARGS | PATH ARGS"
    assert argv and argv[0] == "--", usage
    argv = argv[1:]
    # Modules this script itself imported may be outside the closure
    # (packaging): drop them so the program imports them through the finder.
    for name in list(sys.modules):
        if name.partition(".")[0] == "packaging":
            del sys.modules[name]
    sys.meta_path.insert(0, _Refuse(allowed_modules(extra)))
    if argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<only-declared>", "exec"), {"__name__": "__main__"})
    elif argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
