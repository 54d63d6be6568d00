"""The codec: events, snapshots and states to MessagePack and back, by
registered type and version, with adapters for older versions.

Every type a durable actor stores is registered under a *tag* (default: the
class's ``__name__``; give one explicitly if the class may be renamed) and a
*version* (default 1). A record's manifest is ``"<tag>@<version>"``: the journal
stores it beside the payload (msgspec's MessagePack encoding of the value), and
decoding looks the tag up, so stored bytes only ever become instances of
registered classes (nothing is pickled, imported or called by name).

Schema evolution (see the explanation page): when a class changes, raise its
``version`` and, if the old payloads no longer decode as the new class, add an
adapter for each older version: a function from the old version's plain value
(MessagePack decoded without a type: dicts, lists, strings, numbers) to the next
version's plain value. A record of version ``v`` goes through the adapters of
``v``, ``v + 1``, ... up to the current version, then is converted to the class.
A version without an adapter is passed on as it is: a field added with a
default needs none (msgspec fills the default). A record of a version newer
than the registered one (a journal written by a later release) is refused.

What can be registered: what msgspec encodes natively: Structs, dataclasses,
attrs classes, enums, NamedTuples, TypedDicts and the builtins. msgspec is
imported when the first codec is made (the ``persistence`` extra).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final, TypeVar

from ._errors import EventsRejected, PersistenceError

__all__ = ["Adapter", "Codec", "DecodeFailed", "msgspec_module"]

#: An adapter: the plain value of one version to the plain value of the next.
Adapter = Callable[[Any], Any]
F = TypeVar("F", bound=Adapter)

_TAG: Final = re.compile(r"[^@\s]+")
_msgspec: ModuleType | None = None


class DecodeFailed(PersistenceError):
    """A stored record cannot be decoded: its tag is not registered, its
    version is newer than the registered one, an adapter raised, or the
    bytes do not decode as the class (the cause says which)."""


def msgspec_module() -> ModuleType:
    """The msgspec module, imported on first use.

    Raises:
        ImportError: msgspec is not installed (the ``persistence`` extra).
    """
    global _msgspec
    if _msgspec is None:
        try:
            import msgspec
            import msgspec.inspect
            import msgspec.msgpack
        except ImportError as exc:
            raise ImportError(
                "actors.persistence encodes events with msgspec, which is not "
                "installed: pip install 'anyio-actors[persistence]'"
            ) from exc
        _msgspec = msgspec
    return _msgspec


def _custom_types(cls: type) -> list[type]:
    """The classes in ``cls``'s fields (recursively) that msgspec cannot
    encode without hooks."""
    msgspec = msgspec_module()
    inspect = msgspec.inspect
    found: list[type] = []
    seen: set[int] = set()
    todo: list[object] = [inspect.type_info(cls)]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, inspect.CustomType):
            found.append(node.cls)
            continue
        if isinstance(node, tuple):
            todo.extend(node)
            continue
        for name in getattr(node, "__struct_fields__", ()):
            value = getattr(node, name)
            if isinstance(value, inspect.Type | inspect.Field | tuple):
                todo.append(value)
    return found


class _Entry:
    """A registered class: its tag, version and (made on first use) decoder."""

    __slots__ = ("cls", "decoder", "manifest", "tag", "version")

    def __init__(self, cls: type, tag: str, version: int) -> None:
        self.cls = cls
        self.tag = tag
        self.version = version
        self.manifest = f"{tag}@{version}"
        self.decoder: Any = None


class Codec:
    """The registered types of a durable actor's events, snapshots and
    states (a class attribute: ``codec = Codec(Deposited, Withdrawn,
    Account)``).

    Args:
        types: classes to register with their defaults (tag: the class's
            ``__name__``, version 1); ``register`` sets other ones.

    Raises:
        ImportError: msgspec is not installed.
        TypeError, ValueError: as for ``register``.
    """

    def __init__(self, *types: type) -> None:
        msgspec = msgspec_module()
        self._encoder = msgspec.msgpack.Encoder()
        self._plain = msgspec.msgpack.Decoder()
        self._by_type: dict[type, _Entry] = {}
        self._by_tag: dict[str, _Entry] = {}
        #: Current manifests to their decoders, made on first use: decoding
        #: a record of the current version is one dict lookup and a call.
        self._current: dict[str, Any] = {}
        self._adapters: dict[tuple[str, int], Adapter] = {}
        for cls in types:
            self.register(cls)

    def register(self, cls: type, *, tag: str | None = None, version: int = 1) -> None:
        """Register ``cls`` under ``tag`` (default: its ``__name__``) at
        ``version`` (its current one).

        Raises:
            TypeError: ``cls`` is not a class, or is one msgspec cannot encode
                (it, or a type in its fields, is neither a Struct, a
                dataclass, an attrs class, an enum, a NamedTuple, a TypedDict
                nor a builtin); ``version`` is not an int.
            ValueError: the tag is empty or holds ``@`` or whitespace, is
                taken by another class, ``cls`` is registered already, or
                ``version`` < 1.
        """
        if not isinstance(cls, type):
            raise TypeError(f"register takes a class, not {cls!r}")
        if tag is None:
            tag = cls.__name__
        if type(tag) is not str or not _TAG.fullmatch(tag):
            raise ValueError(
                f"a tag is a non-empty str without '@' or whitespace, not {tag!r}"
            )
        if isinstance(version, bool) or not isinstance(version, int):
            raise TypeError(f"version must be an int, not {version!r}")
        if version < 1:
            raise ValueError(f"version must be >= 1, got {version}")
        if cls in self._by_type:
            raise ValueError(
                f"{cls.__qualname__} is registered already (tag "
                f"{self._by_type[cls].tag!r})"
            )
        taken = self._by_tag.get(tag)
        if taken is not None:
            raise ValueError(
                f"tag {tag!r} is taken by {taken.cls.__module__}."
                f"{taken.cls.__qualname__}: give {cls.__qualname__} another "
                "(register(cls, tag=...))"
            )
        custom = _custom_types(cls)
        if custom:
            names = ", ".join(sorted({c.__qualname__ for c in custom}))
            raise TypeError(
                f"{cls.__qualname__} cannot be stored: msgspec cannot encode "
                f"{names} (use Structs, dataclasses, enums or builtins)"
            )
        entry = _Entry(cls, tag, version)
        self._by_type[cls] = entry
        self._by_tag[tag] = entry

    def adapter(self, tag: str, version: int) -> Callable[[F], F]:
        """A decorator registering an adapter from ``version`` of ``tag`` to
        the next version (see the module docstring)::

            @codec.adapter("Deposited", version=1)
            def _(old: dict) -> dict:
                return {**old, "currency": "EUR"}

        Raises:
            TypeError, ValueError: as for ``add_adapter``.
        """

        def decorate(function: F) -> F:
            self.add_adapter(tag, version, function)
            return function

        return decorate

    def add_adapter(self, tag: str, version: int, function: Adapter) -> None:
        """Register ``function`` to turn the plain value of ``version`` of
        ``tag`` into the plain value of ``version + 1``.

        Raises:
            TypeError: ``function`` is not callable, ``version`` not an int.
            ValueError: ``tag`` is not registered, ``version`` is not below
                its registered version, or has an adapter already.
        """
        if not callable(function):
            raise TypeError(f"an adapter is a function, not {function!r}")
        if isinstance(version, bool) or not isinstance(version, int):
            raise TypeError(f"version must be an int, not {version!r}")
        entry = self._by_tag.get(tag)
        if entry is None:
            raise ValueError(f"tag {tag!r} is not registered: register its class first")
        if not 1 <= version < entry.version:
            raise ValueError(
                f"an adapter of {tag!r} upgrades a version from 1 to "
                f"{entry.version - 1} (the registered one is {entry.version}), "
                f"not {version}"
            )
        if (tag, version) in self._adapters:
            raise ValueError(f"{tag!r} version {version} has an adapter already")
        self._adapters[(tag, version)] = function

    @property
    def types(self) -> dict[type, str]:
        """The registered classes and their manifests (``"tag@version"``)."""
        return {cls: entry.manifest for cls, entry in self._by_type.items()}

    def manifest_of(self, cls: type) -> str | None:
        """The manifest of a registered class, or None."""
        entry = self._by_type.get(cls)
        return None if entry is None else entry.manifest

    def encode(self, value: object) -> tuple[str, bytes]:
        """The manifest and the payload of ``value``.

        Raises:
            EventsRejected: its class is not registered, or msgspec cannot
                encode it (a field of an unsupported type, an int too large).
        """
        entry = self._by_type.get(type(value))
        if entry is None:
            raise EventsRejected(
                f"{type(value).__qualname__} is not registered with the codec: "
                f"add it (Codec({type(value).__name__}, ...) or "
                "codec.register(...))"
            )
        try:
            payload: bytes = self._encoder.encode(value)
        except Exception as exc:
            raise EventsRejected(
                f"the codec cannot encode {type(value).__qualname__}: {exc}"
            ) from exc
        return entry.manifest, payload

    def decode(self, manifest: str, payload: bytes) -> Any:
        """The value a manifest and payload stand for, through the adapters
        of an older version.

        Raises:
            DecodeFailed: unknown tag, a newer version, a failing adapter, or
                bytes that do not decode as the class.
        """
        decode = self._current.get(manifest)
        if decode is not None:
            try:
                return decode(payload)
            except Exception:
                pass  # the full path below says what is wrong
        tag, _, written = manifest.rpartition("@")
        entry = self._by_tag.get(tag)
        if entry is None or not written.isdigit():
            raise DecodeFailed(
                f"no registered type for the stored manifest {manifest!r} "
                f"(registered: {sorted(self._by_tag)})"
            )
        version = int(written)
        msgspec = msgspec_module()
        if version == entry.version:
            decoder = entry.decoder
            if decoder is None:
                decoder = entry.decoder = msgspec.msgpack.Decoder(entry.cls)
                self._current[manifest] = decoder.decode
            try:
                return decoder.decode(payload)
            except msgspec.DecodeError as exc:
                raise DecodeFailed(
                    f"a stored {manifest} does not decode as "
                    f"{entry.cls.__qualname__}: {exc}"
                ) from exc
        if version > entry.version:
            raise DecodeFailed(
                f"a stored {manifest} is newer than the registered version "
                f"{entry.version} of {tag!r}: written by a later release"
            )
        try:
            plain = self._plain.decode(payload)
        except msgspec.DecodeError as exc:
            raise DecodeFailed(
                f"a stored {manifest} is not MessagePack: {exc}"
            ) from exc
        for step in range(version, entry.version):
            adapter = self._adapters.get((tag, step))
            if adapter is None:
                continue
            try:
                plain = adapter(plain)
            except Exception as exc:
                raise DecodeFailed(
                    f"the adapter of {tag!r} version {step} failed on a stored "
                    f"{manifest}: {exc!r}"
                ) from exc
        try:
            return msgspec.convert(plain, entry.cls)
        except msgspec.ValidationError as exc:
            raise DecodeFailed(
                f"a stored {manifest}, adapted to version {entry.version}, does "
                f"not convert to {entry.cls.__qualname__}: {exc} (an adapter of "
                "an older version may be missing)"
            ) from exc

    def __repr__(self) -> str:
        return f"Codec({', '.join(sorted(self._by_tag))})"
