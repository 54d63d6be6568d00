"""The codec: messages to MessagePack and back, by registered type, never pickle.

A message travels as a *tagged value*: the tag of its registered class (a
string) and its body, the class's MessagePack encoding by msgspec. The
receiving side looks the tag up in its own registry and decodes the body as
that class, so bytes from the network only ever become instances of classes
the receiver registered: nothing else is imported, constructed or called.

What can be registered: msgspec Structs, dataclasses, enums, exceptions, and
the primitives (registered already: ``None``, ``bool``, ``int``, ``float``,
``str``, ``bytes``, ``list``, ``tuple``, ``dict``). Fields are decoded by their
annotations (a field typed ``Any`` decodes as plain MessagePack values: lists,
dicts, primitives). An actor ref anywhere in a message travels as its
[``RefAddress``][actors.remote.RefAddress] (a MessagePack extension of code
``REF_EXT``) and decodes through the caller's resolver, so the runtime turns
it into a working remote ref.

Exceptions travel as ``[args, traceback_text]`` under their class's tag and are
rebuilt with ``cls(*args)``, the remote traceback added as a note. An exception
of an unregistered type (or one whose args cannot be encoded or that cannot be
rebuilt) travels as a [``RemoteActorError``][actors.remote.RemoteActorError]
carrying its type name, message and traceback text.

Its size: registration, encoding, decoding and the exception round trip
share one registry and are one concept, the codec.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable
from typing import Any, Final, TypeVar, get_origin

import msgspec

from .. import (
    ActorNotFound,
    ActorStopped,
    AskTimeout,
    MailboxFull,
    StopReason,
    SystemNotRunning,
    UnhandledMessage,
)
from ._errors import DecodeError, FrameTooLarge, NodeUnreachable, RemoteActorError
from ._node import RefAddress

__all__ = [
    "DEFAULT_MAX_TRACEBACK",
    "REF_EXT",
    "Codec",
    "node_codec",
]

T = TypeVar("T", bound=type)

#: The MessagePack extension code of an actor ref (its RefAddress inside).
REF_EXT: Final = 1
#: The most characters of a remote traceback that travel (the rest is cut).
DEFAULT_MAX_TRACEBACK: Final = 16 * 1024

_PRIMITIVES: tuple[tuple[type, str], ...] = (
    (type(None), "none"),
    (bool, "bool"),
    (int, "int"),
    (float, "float"),
    (str, "str"),
    (bytes, "bytes"),
    (list, "list"),
    (tuple, "tuple"),
    (dict, "dict"),
)

#: Standard exceptions every codec knows, so a handler's everyday errors
#: arrive as themselves.
_STANDARD_ERRORS: tuple[type[BaseException], ...] = (
    Exception,
    ArithmeticError,
    AssertionError,
    AttributeError,
    IndexError,
    KeyError,
    LookupError,
    NotImplementedError,
    OverflowError,
    PermissionError,
    RuntimeError,
    TimeoutError,
    TypeError,
    ValueError,
    ZeroDivisionError,
)

_ref_decoder = msgspec.msgpack.Decoder(RefAddress)


def _safe_str(exc: BaseException) -> str:
    # A handler's exception is user data: its __str__ may raise.
    try:
        return str(exc)
    except Exception:
        return f"<str() of {type(exc).__qualname__} failed>"


def _type_name(cls: type) -> str:
    module = getattr(cls, "__module__", None) or "?"
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _format_traceback(exc: BaseException, limit: int) -> str:
    try:
        text = "".join(traceback.format_exception(exc))
    except Exception:
        return f"<the traceback of {type(exc).__qualname__} could not be formatted>"
    if len(text) > limit:
        cut = len(text) - limit
        text = f"... ({cut} characters cut)\n" + text[cut:]
    return text


class _Entry:
    """A registered class: its tag, and (made on first use) its decoder."""

    __slots__ = ("cls", "decoder", "is_error", "tag")

    def __init__(self, cls: type, tag: str) -> None:
        self.cls = cls
        self.tag = tag
        self.is_error = issubclass(cls, BaseException)
        self.decoder: msgspec.msgpack.Decoder[Any] | None = None


class Codec:
    """Encodes and decodes tagged values; one per node (its registry).

    Args:
        address_of: called with an object msgspec cannot encode by itself;
            returns its [``RefAddress``][actors.remote.RefAddress] when it is an
            actor ref, or ``None`` when it is not (the encoding then fails with
            ``TypeError``). Without it no ref can be sent (a
            [``RefAddress``][actors.remote.RefAddress] value is an ordinary
            Struct: it travels as an array and decodes as one where its field is
            typed so).
        resolve: called with each [``RefAddress``][actors.remote.RefAddress]
            decoded from the wire; its result takes the ref's place in the
            decoded message (default: the address itself). It must not raise; if
            it does, decoding fails with
            [``DecodeError``][actors.remote.DecodeError].
        max_traceback: the most characters of a remote traceback that are
            sent (the oldest frames are cut first).

    Raises:
        TypeError: ``address_of`` or ``resolve`` is not callable, or
            ``max_traceback`` is not an int.
        ValueError: ``max_traceback`` is negative.
    """

    def __init__(
        self,
        *,
        address_of: Callable[[object], RefAddress | None] | None = None,
        resolve: Callable[[RefAddress], object] | None = None,
        max_traceback: int = DEFAULT_MAX_TRACEBACK,
    ) -> None:
        if address_of is not None and not callable(address_of):
            raise TypeError("address_of must be callable or None")
        if resolve is not None and not callable(resolve):
            raise TypeError("resolve must be callable or None")
        if isinstance(max_traceback, bool) or not isinstance(max_traceback, int):
            raise TypeError(
                f"max_traceback must be an int, not {type(max_traceback).__name__}"
            )
        if max_traceback < 0:
            raise ValueError(f"max_traceback must be >= 0, not {max_traceback}")
        self._address_of = address_of
        self._resolve = resolve
        self._max_traceback = max_traceback
        self._by_type: dict[type, _Entry] = {}
        self._by_tag: dict[str, _Entry] = {}
        self.value_tags: dict[type, str] = {}
        """The tags of registered classes that are not exceptions, by class:
        the one dict lookup the wire's hot path makes per message (read only;
        exceptions and misses go through ``tagged``)."""
        self.encoder = msgspec.msgpack.Encoder(enc_hook=self._enc_hook)
        """The msgspec encoder (with the ref hook) the wire format uses."""
        for cls, tag in _PRIMITIVES:
            self.register(cls, tag)
        for error in _STANDARD_ERRORS:
            self.register(error)
        self.register(RemoteActorError, "actors.remote.RemoteActorError")

    # -- the registry --------------------------------------------------------

    def register(self, cls: T, tag: str | None = None) -> T:
        """Register ``cls`` under ``tag`` (default: ``"module.QualName"``).

        Registering the same class under the same tag again does nothing. Both
        sides of a connection must register a class under the same tag; an
        explicit tag keeps messages compatible when a class moves.

        Args:
            cls: a msgspec Struct, a dataclass, an enum, an exception class, or
                another type msgspec encodes natively.
            tag: its stable name on the wire, or ``None``.

        Returns:
            ``cls``, so this works as a decorator (``codec.register(Point)``).

        Raises:
            TypeError: ``cls`` is not a class, or ``tag`` is not a ``str``.
            ValueError: ``tag`` is empty, or the class or the tag is registered
                already with another tag or class.
        """
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a class, not {type(cls).__name__}")
        if tag is None:
            tag = f"{cls.__module__}.{cls.__qualname__}"
        elif type(tag) is not str:
            raise TypeError(f"tag must be a str, not {type(tag).__name__}")
        if not tag:
            raise ValueError("tag must not be empty")
        known = self._by_type.get(cls)
        if known is not None:
            if known.tag == tag:
                return cls
            raise ValueError(
                f"{cls.__qualname__} is registered already with tag {known.tag!r}"
            )
        other = self._by_tag.get(tag)
        if other is not None:
            raise ValueError(
                f"tag {tag!r} is registered already for {other.cls.__qualname__}"
            )
        entry = _Entry(cls, tag)
        self._by_type[cls] = entry
        self._by_tag[tag] = entry
        if not entry.is_error:
            self.value_tags[cls] = tag
        return cls

    def tag_of(self, cls: type) -> str:
        """The tag of a registered class.

        Raises:
            TypeError: ``cls`` is not registered (its name is in the message).
        """
        entry = self._by_type.get(cls)
        if entry is None:
            raise TypeError(self._unregistered(cls))
        return entry.tag

    def is_registered(self, cls: type) -> bool:
        """Whether ``cls`` itself (not a base class of it) is registered."""
        return cls in self._by_type

    @staticmethod
    def _unregistered(cls: type) -> str:
        return (
            f"cannot send a {_type_name(cls)}: its type is not registered with "
            f"the codec (register it with codec.register({cls.__qualname__}))"
        )

    # -- encoding ------------------------------------------------------------

    def _enc_hook(self, obj: object) -> msgspec.msgpack.Ext:
        address_of = self._address_of
        address = address_of(obj) if address_of is not None else None
        if address is None:
            raise TypeError(
                f"cannot encode a {_type_name(type(obj))} inside a message: "
                "msgspec does not know it and it is not an actor ref"
            )
        return msgspec.msgpack.Ext(REF_EXT, self.encoder.encode(address))

    def tagged(self, value: object) -> tuple[str, object]:
        """The tag of ``value``'s class and what to encode as its body.

        Cheap (one dict lookup) for a message; an exception becomes
        ``(args, traceback_text)``.

        Raises:
            TypeError: ``type(value)`` is not registered, naming it.
        """
        entry = self._by_type.get(type(value))
        if entry is None:
            raise TypeError(self._unregistered(type(value)))
        if entry.is_error:
            return entry.tag, self._error_body(value)  # type: ignore[arg-type]
        return entry.tag, value

    def _error_body(self, exc: BaseException) -> tuple[tuple[Any, ...], str]:
        if type(exc) is RemoteActorError:
            return exc.args, ""  # its traceback is one of its args already
        args = exc.args if type(exc.args) is tuple else ()
        return args, _format_traceback(exc, self._max_traceback)

    def _fallback(self, exc: BaseException) -> tuple[str, object]:
        remote = RemoteActorError(
            _type_name(type(exc)),
            _safe_str(exc),
            _format_traceback(exc, self._max_traceback),
        )
        return "actors.remote.RemoteActorError", (remote.args, "")

    def encode(self, value: object) -> tuple[str, bytes]:
        """``value`` as its tag and its encoded body.

        Raises:
            TypeError: ``type(value)`` is not registered, or something inside
                it cannot be encoded (the message names the type).
        """
        entry = self._by_type.get(type(value))
        if entry is None or entry.is_error:
            tag, body = self.tagged(value)  # raises for an unregistered type
            return tag, self.encode_body(value, body)
        # A message (tagged and encode_body written out: two calls saved per
        # encode, as pool jobs and their replies are encoded one by one).
        try:
            return entry.tag, self.encoder.encode(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self.encode_failure(value, exc) from exc

    def encode_body(self, value: object, body: object) -> bytes:
        """Encode ``body`` (from ``tagged``), naming ``value``'s type on
        failure.

        Raises:
            TypeError: something in it cannot be encoded.
        """
        try:
            return self.encoder.encode(body)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self.encode_failure(value, exc) from exc

    @staticmethod
    def encode_failure(value: object, error: Exception) -> TypeError:
        """The ``TypeError`` for a ``value`` msgspec failed to encode with
        ``error`` (raise it ``from error``)."""
        return TypeError(
            f"cannot encode a message of type {_type_name(type(value))}: {error}"
        )

    def encode_error(self, exc: BaseException) -> tuple[str, bytes]:
        """``exc`` as its tag and encoded body, whatever it is; never raises.

        As itself when its type is registered; otherwise, or when its args
        cannot be encoded (or reading them fails), as a
        [``RemoteActorError``][actors.remote.RemoteActorError] with its type
        name, message and traceback.
        """
        entry = self._by_type.get(type(exc))
        if entry is not None:
            try:
                return entry.tag, self.encoder.encode(self._error_body(exc))
            except Exception:
                pass  # unencodable args, or an exception class that misbehaves
        tag, body = self._fallback(exc)
        return tag, self.encoder.encode(body)

    # -- decoding ------------------------------------------------------------

    def _ext_hook(self, code: int, data: memoryview) -> object:
        if code != REF_EXT:
            raise ValueError(f"unknown MessagePack extension code {code}")
        address = _ref_decoder.decode(data)
        resolve = self._resolve
        return address if resolve is None else resolve(address)

    @staticmethod
    def _dec_hook(kind: Any, obj: Any) -> Any:
        # A field typed with a ref class: the extension hook resolved it
        # already; check that it is what the field says.
        cls = get_origin(kind) or kind
        if isinstance(cls, type) and isinstance(obj, cls):
            return obj
        raise TypeError(f"expected {kind!r}, got {type(obj).__name__}")

    def _decoder(self, entry: _Entry) -> msgspec.msgpack.Decoder[Any]:
        decoder = entry.decoder
        if decoder is None:
            if entry.is_error:
                decoder = msgspec.msgpack.Decoder(
                    tuple[tuple[Any, ...], str], ext_hook=self._ext_hook
                )
            else:
                decoder = msgspec.msgpack.Decoder(
                    entry.cls, dec_hook=self._dec_hook, ext_hook=self._ext_hook
                )
            entry.decoder = decoder
        return decoder

    def decode(self, tag: str, body: bytes | memoryview | msgspec.Raw) -> Any:
        """The value of class ``tag`` encoded in ``body``.

        A registered exception is rebuilt (not raised): ``cls(*args)``, with
        the remote traceback as a note; if that fails, a
        [``RemoteActorError``][actors.remote.RemoteActorError] stands in for it.

        Raises:
            DecodeError: ``tag`` is not registered, or ``body`` is not a valid
                encoding of its class (malformed, truncated, wrong shape, a
                value its class refuses, too deeply nested).
        """
        entry = self._by_tag.get(tag)
        if entry is None:
            raise DecodeError(f"unknown type tag {tag[:200]!r}")
        try:
            # The decoder is made at the first use (_decoder): a call saved
            # per message from then on.
            value = (entry.decoder or self._decoder(entry)).decode(body)
        except Exception as exc:
            # msgspec's errors, RecursionError for deep nesting, whatever a
            # registered class's __post_init__ or the resolver raised.
            raise DecodeError(
                f"a body of type tag {tag!r} could not be decoded: {exc}"
            ) from exc
        if entry.is_error:
            args, remote_traceback = value
            return self._rebuild(entry.cls, args, remote_traceback)
        return value

    @staticmethod
    def _rebuild(
        cls: type[BaseException], args: tuple[Any, ...], remote_traceback: str
    ) -> BaseException:
        if cls is RemoteActorError:
            if len(args) == 3 and all(type(arg) is str for arg in args):
                return RemoteActorError(*args)
            return RemoteActorError("?", repr(args)[:1000], "")
        try:
            exc = cls(*args)
        except Exception as error:
            return RemoteActorError(
                _type_name(cls),
                f"{args!r}"[:1000] + f" (could not be rebuilt: {_safe_str(error)})",
                remote_traceback,
            )
        if remote_traceback:
            # An odd exception class may refuse notes: it stays bare then.
            with contextlib.suppress(Exception):
                exc.add_note("remote traceback:\n" + remote_traceback)
        return exc


def node_codec(
    address_of: Callable[[object], RefAddress | None],
    resolve: Callable[[RefAddress], object],
) -> Codec:
    """A node's codec: refs through ``address_of`` and ``resolve``, and the
    runtime's and the remote layer's errors (and ``StopReason``) registered
    under stable tags ``actors.<Name>``, so they arrive as themselves (a
    reply over ``max_payload`` fails its ask with ``FrameTooLarge``)."""
    codec = Codec(address_of=address_of, resolve=resolve)
    for error in (
        ActorNotFound,
        NodeUnreachable,
        ActorStopped,
        SystemNotRunning,
        AskTimeout,
        UnhandledMessage,
        MailboxFull,
        FrameTooLarge,
    ):
        codec.register(error, f"actors.{error.__name__}")
    codec.register(StopReason, "actors.StopReason")
    return codec
