"""The classes a node hosts for other nodes, and the modules they come from.

What a node may construct is fixed when it starts, never by the network: the
public top-level [``Actor``][actors.Actor] subclasses of the modules its
operator named (``--module``), imported at start. A spawn of anything else, or
of a module that was not named, fails with
[``SpawnError``][actors.remote.SpawnError] at the spawner; nothing is imported
when a request arrives. Both sides register the message classes of a hosted
module under the same tags, so its messages travel without more setup.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from types import ModuleType

import msgspec

from ... import Actor
from .._codec import Codec
from .._errors import SpawnError

__all__ = [
    "Hosted",
    "load_module",
    "module_name_of",
    "module_spec_of",
    "register_module_types",
    "target_of",
]


def module_name_of(module: ModuleType) -> str:
    """The name a node imports ``module`` under: its own, or for the main
    script (``__main__``) its file's stem (``fan_out`` for ``fan_out.py``).

    Raises:
        ValueError: ``module`` is ``__main__`` without a file (an interactive
            session).
    """
    name: str = module.__name__
    if name != "__main__":
        return name
    path: str | None = getattr(module, "__file__", None)
    if not path:
        raise ValueError("the __main__ module has no file a node could import")
    return os.path.splitext(os.path.basename(path))[0]


def module_spec_of(module: ModuleType) -> str:
    """What to pass a node's ``--module`` so that it imports ``module`` under
    ``module_name_of``: its name when the import system finds it by
    name, else ``"name=path/to/file.py"`` (the main script, or a module
    loaded from a file outside ``sys.path``).

    Raises:
        ValueError: ``module`` has no file and cannot be found by name.
    """
    name = module_name_of(module)
    path: str | None = getattr(module, "__file__", None)
    if not path:
        if module.__name__ == "__main__":
            raise ValueError(f"module {name} has no file a node could import")
        return name  # a namespace or built-in module: by name
    path = os.path.abspath(path)
    if module.__name__ != "__main__":
        # Found by name on sys.path (as a node with this sys.path finds it)?
        relative = os.path.join(*name.split("."))
        for entry in sys.path:
            base = os.path.join(os.path.abspath(entry or os.curdir), relative)
            if path in (base + ".py", os.path.join(base, "__init__.py")):
                return name
    return f"{name}={path}"


def target_of(factory: type[Actor] | str) -> tuple[str, ModuleType | None]:
    """The path ``"pkg.mod:Name"`` of an actor class (or ``factory`` itself
    when it is a str), and the class's module.

    Raises:
        TypeError: ``factory`` is neither a str nor an Actor subclass.
        ValueError: a str that is not ``"module:Name"``, or a class that is
            not at the top level of its module.
    """
    if isinstance(factory, str):
        module_name, sep, name = factory.partition(":")
        if not (sep and module_name and name):
            raise ValueError(
                f"factory must be 'package.module:ClassName', not {factory!r}"
            )
        return factory, None
    if not (isinstance(factory, type) and issubclass(factory, Actor)):
        raise TypeError(
            f"factory must be an Actor subclass or a 'module:Name' str, not {factory!r}"
        )
    if "." in factory.__qualname__ or "<" in factory.__qualname__:
        raise ValueError(
            f"{factory.__qualname__} is not at the top level of its module: "
            "a node could not find it"
        )
    module = sys.modules.get(factory.__module__)
    if module is None or getattr(module, factory.__qualname__, None) is not factory:
        raise ValueError(
            f"{factory.__qualname__} is not the class its module "
            f"{factory.__module__} holds under that name now (the module was "
            "loaded again, or the class replaced): a node could not find it"
        )
    return f"{module_name_of(module)}:{factory.__qualname__}", module


#: The hosted modules this process is importing right now (``load_module``),
#: innermost last: while one is, no node process may start (see
#: ``NodeProcesses``), since a module that starts node processes at import
#: would have each of them import it and start more, without end.
importing: list[str] = []


def load_module(spec: str) -> tuple[ModuleType, str]:
    """Import a module by name (``pkg.mod``), by file path (``x/y.py``,
    imported as ``y``), or by ``name=path`` (the file imported as ``name``);
    returns it and the name it goes by.

    Raises:
        ImportError / FileNotFoundError: it cannot be imported.
        SyntaxError / Exception: importing it raised.
    """
    importing.append(spec)
    try:
        return _load_module(spec)
    finally:
        importing.pop()


def _load_module(spec: str) -> tuple[ModuleType, str]:
    name, sep, path = spec.partition("=")
    if not sep:
        if not (spec.endswith(".py") or os.sep in spec):
            return importlib.import_module(spec), spec
        path = spec
        name = os.path.splitext(os.path.basename(path))[0]
    path = os.path.abspath(path)
    known = sys.modules.get(name)
    if known is not None and os.path.abspath(getattr(known, "__file__", "")) == path:
        return known, name
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot import {path} as {name}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module, name


def _is_message_class(cls: type) -> bool:
    return (
        issubclass(cls, msgspec.Struct)
        or dataclasses.is_dataclass(cls)
        or issubclass(cls, enum.Enum)
        or (issubclass(cls, Exception) and not issubclass(cls, Actor))
    )


def register_module_types(codec: Codec, module: ModuleType, name: str) -> None:
    """Register the message classes ``module`` defines (msgspec Structs,
    dataclasses, enums, exceptions; not imported ones) under the tags
    ``"<name>.<ClassName>"``, skipping classes registered already.

    Both sides call it for the module of a class spawned on a node, so its
    messages travel without more registration (``name``: the name the node
    imports it under, see ``module_name_of``).
    """
    for value in list(vars(module).values()):
        if (
            isinstance(value, type)
            and value.__module__ == module.__name__
            and _is_message_class(value)
            and not codec.is_registered(value)
        ):
            try:
                codec.register(value, f"{name}.{value.__qualname__}")
            except (TypeError, ValueError):
                continue  # a tag taken by another class: the user's choice


class Hosted:
    """The classes a node hosts: the public top-level ``Actor`` subclasses
    of the modules its operator named.

    Args:
        modules: modules, or their names or file paths (``--module``: see
            ``load_module``), imported now.

    Raises:
        ImportError, FileNotFoundError, Exception: a module cannot be imported.
        TypeError: an entry is neither a module nor a str.
    """

    def __init__(self, modules: Iterable[str | ModuleType] = ()) -> None:
        self.modules: dict[str, ModuleType] = {}
        for spec in modules:
            if isinstance(spec, ModuleType):
                module = spec
            elif isinstance(spec, str):
                module, _ = load_module(spec)
            else:
                raise TypeError(f"a module or its name, not {spec!r}")
            # The name spawners use for it (the main script's by its stem).
            self.modules[module_name_of(module)] = module

    def resolve(self, target: str) -> type[Actor]:
        """The class at ``target`` (``"pkg.mod:Name"``): a public Actor
        subclass the hosted module defines (``cls.__module__`` is it).

        Raises:
            SpawnError: not a hosted class (the reason says why).
        """
        if type(target) is not str:
            raise SpawnError(f"a class path must be a str, not {type(target).__name__}")
        module_name, _, name = target.partition(":")
        module = self.modules.get(module_name)
        if module is None:
            hosted = ", ".join(sorted(self.modules)) or "none"
            raise SpawnError(
                f"{target!r}: this node does not host module {module_name!r} "
                f"(hosted: {hosted}; start the node with --module {module_name})"
            )
        if not name.isidentifier() or name.startswith("_"):
            raise SpawnError(f"{target!r}: {name!r} is not a public class name")
        cls = vars(module).get(name)
        if cls is None:
            raise SpawnError(f"{target!r}: module {module_name} has no {name!r}")
        if not (isinstance(cls, type) and issubclass(cls, Actor)):
            raise SpawnError(f"{target!r}: not an Actor subclass of {module_name}")
        if cls.__module__ != module.__name__:
            # Imported by the module, not defined there (the node agent, a
            # library's actor): not hosted, as the docs say.
            raise SpawnError(
                f"{target!r}: {name} is defined in {cls.__module__}, not in the "
                f"hosted module {module_name} (it only imports it)"
            )
        return cls
