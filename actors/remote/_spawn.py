"""Remote spawn: the messages between a spawner and a node's agent, the
classes a node hosts, and ``system.remote.spawn``.

A node that hosts actors for others runs an agent actor registered under the
name ``AGENT_NAME`` (``python -m actors.node`` does). A spawner asks it
``Spawn`` (a class by its path ``"pkg.mod:Name"``, the arguments as
tagged values) and gets ``Spawned`` (the new actor's ref) or the error.

What a node may construct is fixed when it starts, never by the network: the
public top-level [``Actor``][actors.Actor] subclasses of the modules its operator
named (``--module``), imported at start. A spawn of anything else, or of a
module that was not named, fails with [``SpawnError``][actors.remote.SpawnError]
at the spawner; nothing is imported when a request arrives.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import importlib
import importlib.util
import os
import secrets
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import msgspec

from .. import Actor, ActorRef
from ._codec import Codec
from ._errors import ActorNotFound
from ._node import NodeAddress

if TYPE_CHECKING:
    from ._remote import Remote

__all__ = [
    "AGENT_NAME",
    "Hosted",
    "Spawn",
    "SpawnError",
    "Spawned",
    "Unspawn",
    "decode_args",
    "encode_args",
    "load_module",
    "module_name_of",
    "register_module_types",
    "register_protocol",
    "remote_spawn",
    "target_of",
]

#: The name a node's agent is registered under (``system.remote.register``).
AGENT_NAME = "actors.node"

#: The tag of an argument that is an actor ref (its body: a one-element list
#: holding the ref, decoded as a plain list so the codec resolves the ref).
_REF_TAG = "actors.ref"

#: A value of a registered class as (tag, encoded body); the body is inlined.
Tagged = tuple[str, msgspec.Raw]


class SpawnError(Exception):
    """A node refused a remote spawn: the class is not one it hosts (its
    module was not given to the node, it is not a public top-level
    ``Actor`` subclass of it), or the request was malformed."""


class Spawn(msgspec.Struct, frozen=True, array_like=True):
    """Spawn ``target`` as a child of the node's agent."""

    target: str
    args: list[Tagged]
    kwargs: dict[str, Tagged]
    name: str | None = None
    capacity: int | None = None
    drain: int | None = None
    restart: str = "transient"
    #: Names this request for an ``Unspawn`` (None: cannot be undone).
    token: str | None = None


class Unspawn(msgspec.Struct, frozen=True, array_like=True):
    """To a node's agent: stop the actor the ``Spawn`` with ``token``
    made, if it made one; sent when the spawner gave up on the answer
    (cancelled, timed out). It comes after its Spawn (FIFO per pair)."""

    token: str


class Spawned(msgspec.Struct, frozen=True, array_like=True):
    """The agent's answer to ``Spawn``: the new actor's ref."""

    ref: ActorRef[Any]


def register_protocol(codec: Codec, *classes: type) -> None:
    """Register the spawn messages (and ``classes``) on ``codec`` under
    stable tags ``actors.remote.<Name>`` (idempotent)."""
    for cls in (Spawn, Spawned, SpawnError, Unspawn, *classes):
        if not codec.is_registered(cls):
            codec.register(cls, f"actors.remote.{cls.__name__}")


# -- arguments ---------------------------------------------------------------


def encode_value(codec: Codec, value: object) -> Tagged:
    """``value`` as a tagged value (a ref as ``_REF_TAG``).

    Raises:
        TypeError: its type is not registered, or it cannot be encoded.
    """
    if isinstance(value, ActorRef):
        return _REF_TAG, msgspec.Raw(codec.encoder.encode([value]))
    tag, body = codec.encode(value)
    return tag, msgspec.Raw(body)


def decode_value(codec: Codec, tagged: Tagged) -> Any:
    """The value of a tagged value from ``encode_value``.

    Raises:
        DecodeError: an unknown tag or a malformed body.
    """
    tag, body = tagged
    if tag == _REF_TAG:
        (ref,) = codec.decode("list", body)
        return ref
    return codec.decode(tag, body)


def encode_args(
    codec: Codec, args: Iterable[object], kwargs: Mapping[str, object]
) -> tuple[list[Tagged], dict[str, Tagged]]:
    """Positional and keyword arguments as tagged values.

    Raises:
        TypeError: an argument cannot be encoded (its type is named).
    """
    return (
        [encode_value(codec, arg) for arg in args],
        {key: encode_value(codec, value) for key, value in kwargs.items()},
    )


def decode_args(
    codec: Codec, args: list[Tagged], kwargs: dict[str, Tagged]
) -> tuple[list[Any], dict[str, Any]]:
    """The arguments ``encode_args`` encoded.

    Raises:
        DecodeError: one of them cannot be decoded.
    """
    return (
        [decode_value(codec, arg) for arg in args],
        {key: decode_value(codec, value) for key, value in kwargs.items()},
    )


# -- modules and classes -------------------------------------------------------


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


def load_module(spec: str) -> tuple[ModuleType, str]:
    """Import a module by name (``pkg.mod``), by file path (``x/y.py``,
    imported as ``y``), or by ``name=path`` (the file imported as ``name``);
    returns it and the name it goes by.

    Raises:
        ImportError / FileNotFoundError: it cannot be imported.
        SyntaxError / Exception: importing it raised.
    """
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
        """The class at ``target`` (``"pkg.mod:Name"``).

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
        return cls


# -- the spawner's side ----------------------------------------------------------


async def remote_spawn(
    remote: Remote,
    node: str | NodeAddress,
    factory: type[Actor] | str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    name: str | None,
    capacity: int | None,
    drain: int | None,
    restart: str,
    timeout: float,
) -> ActorRef[Any]:
    """See [``Remote.spawn``][actors.remote.Remote.spawn]."""
    target, module = target_of(factory)
    codec = remote.codec
    register_protocol(codec)
    if module is not None:
        register_module_types(codec, module, module_name_of(module))
    encoded_args, encoded_kwargs = encode_args(codec, args, kwargs)
    token = secrets.token_hex(8)
    request = Spawn(
        target, encoded_args, encoded_kwargs, name, capacity, drain, restart, token
    )
    try:
        agent = await remote.lookup(node, AGENT_NAME, timeout=timeout)
    except ActorNotFound:
        raise ActorNotFound(
            f"node {node} runs no node agent (start it with python -m actors.node)"
        ) from None
    try:
        answer = await agent.ask(request, timeout=timeout)
    except BaseException:
        # Cancelled or timed out: the node may spawn it all the same, and
        # nobody would have its ref. Undo it (a tell: never waits).
        with contextlib.suppress(Exception):
            agent.tell(Unspawn(token))
        raise
    if isinstance(answer, BaseException):
        raise answer
    if type(answer) is not Spawned:
        raise SpawnError(f"node {node} answered a spawn with {answer!r:.200}")
    return answer.ref


def check_spawn_options(
    name: str | None,
    capacity: int | None,
    drain: int | None,
    restart: str,
) -> None:
    """Check the options of a remote spawn at the spawner.

    Raises:
        TypeError / ValueError: a bad option, naming it.
    """
    if name is not None and type(name) is not str:
        raise TypeError(f"name must be a str or None, not {type(name).__name__}")
    for option, value in (("capacity", capacity), ("drain", drain)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{option} must be an int or None, not {value!r}")
        if value < 1:
            raise ValueError(f"{option} must be at least 1, not {value}")
    if restart not in ("transient", "permanent", "temporary"):
        raise ValueError(
            f"restart must be 'transient', 'permanent' or 'temporary', not {restart!r}"
        )
