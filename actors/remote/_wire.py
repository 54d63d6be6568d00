"""The wire format: subjects, frames and envelopes (see docs/remote-wire-format.md).

A node incarnation subscribes to its own subject,
``<prefix>.<system>.<node>.<incarnation>``; each NATS message to it is a
*frame*: a MessagePack array ``[version, sender, [envelope, ...]]``. An
envelope is a MessagePack array whose first element is its kind (a small
int); message bodies are inlined MessagePack values, decoded by the codec by
their type tag. The senders encode each envelope once, when it is sent (so an
unencodable message fails at the call), and a frame is the frame's prefix, an
array header and the envelopes' bytes joined.

Its size: one envelope struct per kind, each with its builder and decoder:
the wire format in one place, as its document describes it.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

import msgspec

from ._codec import Codec
from ._errors import DecodeError
from ._node import NodeAddress, Path, check_token

__all__ = [
    "ACK",
    "ASK",
    "DEATH",
    "DEFAULT_PREFIX",
    "FAILURE",
    "HEARTBEAT",
    "HEARTBEAT_ACK",
    "LOOKUP",
    "LOOKUP_REPLY",
    "MAX_FRAME_HEADER",
    "REPLY",
    "STOP",
    "TELL",
    "UNWATCH",
    "VERSION",
    "WATCH",
    "Ack",
    "Ask",
    "Death",
    "Envelope",
    "Failure",
    "Frame",
    "Heartbeat",
    "HeartbeatAck",
    "Lookup",
    "LookupReply",
    "Reply",
    "Stop",
    "Subjects",
    "Tell",
    "Unwatch",
    "Watch",
    "Wire",
    "array_header",
    "frame_number",
    "decode_envelope",
    "decode_frame",
]

#: The wire format's version, the first element of every frame.
VERSION: Final = 1
#: The default first subject token(s).
DEFAULT_PREFIX: Final = "actors"

# Envelope kinds: the first element of each envelope.
TELL: Final = 0
ASK: Final = 1
REPLY: Final = 2
FAILURE: Final = 3
WATCH: Final = 4
UNWATCH: Final = 5
DEATH: Final = 6
HEARTBEAT: Final = 7
HEARTBEAT_ACK: Final = 8
LOOKUP: Final = 9
LOOKUP_REPLY: Final = 10
STOP: Final = 11
ACK: Final = 12

Tag = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
Trace = Annotated[str, msgspec.Meta(max_length=512)]
Id = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


# -- subjects ------------------------------------------------------------------

_prefix = re.compile(r"[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64})*").fullmatch


class Subjects:
    """The subjects of one node incarnation and of its peers.

    * ``inbox``: ``<prefix>.<system>.<node>.<incarnation>``, where peers send
      this incarnation's frames. A restarted node has another incarnation and
      so another inbox: frames for the old one never reach it, and NATS
      answers "no responders" for them.
    * ``name``: ``<prefix>.<system>.<node>``, subscribed with the queue group
      ``<node>``, so it reaches exactly one live incarnation of the node: for
      lookups and for programs that know the node's name only.
    * ``returns``: ``<inbox>.nr.>``; a frame to a peer is published with the
      reply subject ``<inbox>.nr.<peer node>.<peer incarnation>``, so NATS's
      no-responders status for it comes back here naming the peer.

    Args:
        system: the actor system's name (one subject token).
        node: this node's address.
        prefix: the first token(s), dot-separated.

    Raises:
        TypeError / ValueError: a bad ``system`` or ``prefix``, naming it.
    """

    __slots__ = ("_base", "inbox", "name", "node", "queue", "return_prefix", "returns")

    def __init__(
        self, system: str, node: NodeAddress, *, prefix: str = DEFAULT_PREFIX
    ) -> None:
        check_token("system", system)
        if type(prefix) is not str:
            raise TypeError(f"prefix must be a str, not {type(prefix).__name__}")
        if not _prefix(prefix):
            raise ValueError(
                "prefix must be dot-separated subject tokens of ASCII letters, "
                f"digits, '-' or '_', not {prefix!r}"
            )
        self._base = f"{prefix}.{system}."
        self.node = node
        self.inbox = self.inbox_of(node)
        self.name = self.name_of(node.node)
        self.queue = node.node
        self.return_prefix = self.inbox + ".nr."
        self.returns = self.return_prefix + ">"

    def inbox_of(self, peer: NodeAddress) -> str:
        """The inbox subject of the node incarnation ``peer``."""
        return f"{self._base}{peer.node}.{peer.incarnation}"

    def name_of(self, node: str) -> str:
        """The name subject of the node named ``node`` (any incarnation).

        Raises:
            TypeError / ValueError: ``node`` is not a valid node name.
        """
        return self._base + check_token("node", node)

    def return_for(self, peer: NodeAddress) -> str:
        """The reply subject for frames to ``peer`` (see ``returns``)."""
        return f"{self.return_prefix}{peer.node}.{peer.incarnation}"

    def peer_of_return(self, subject: str) -> NodeAddress | None:
        """The peer named by a subject under ``returns``, or ``None`` if it is
        not one."""
        returned = self.returned_frame(subject)
        return None if returned is None else returned[0]

    def returned_frame(self, subject: str) -> tuple[NodeAddress, int | None] | None:
        """The peer named by a subject under ``returns`` and the number of
        the frame returned (None for an unnumbered one), or ``None`` if it
        is not such a subject."""
        if not subject.startswith(self.return_prefix):
            return None
        node, _, rest = subject[len(self.return_prefix) :].partition(".")
        incarnation, _, number = rest.partition(".")
        seq = frame_number(number) if number else None
        if number and seq is None:
            return None
        try:
            return msgspec.convert([node, incarnation], NodeAddress), seq
        except msgspec.ValidationError:
            return None


def frame_number(token: str) -> int | None:
    """The frame number in a reply subject's last token, or None."""
    if not token.isascii() or not token.isdigit() or len(token) > 18:
        return None
    return int(token)


# -- envelopes as decoded --------------------------------------------------------


class Tell(msgspec.Struct, array_like=True, frozen=True, tag=TELL):
    """``[0, path, tag, body, trace?]``: deliver a message to ``path``."""

    path: Path
    tag: Tag
    body: msgspec.Raw
    trace: Trace | None = None


class Ask(msgspec.Struct, array_like=True, frozen=True, tag=ASK):
    """``[1, path, ask_id, tag, body, trace?]``: deliver a message to ``path``
    and reply to the frame's sender (or, when it has none, to the NATS
    message's reply subject) with a ``Reply`` or ``Failure``
    carrying ``ask_id``."""

    path: Path
    ask_id: Id
    tag: Tag
    body: msgspec.Raw
    trace: Trace | None = None


class Reply(msgspec.Struct, array_like=True, frozen=True, tag=REPLY):
    """``[2, ask_id, tag, body]``: the handler's return value."""

    ask_id: Id
    tag: Tag
    body: msgspec.Raw


class Failure(msgspec.Struct, array_like=True, frozen=True, tag=FAILURE):
    """``[3, ask_id, tag, body]``: the ask failed with this exception (the
    handler's, or the runtime's, e.g. the actor was not found or stopped)."""

    ask_id: Id
    tag: Tag
    body: msgspec.Raw


class Watch(msgspec.Struct, array_like=True, frozen=True, tag=WATCH):
    """``[4, path]``: the sending node watches the actor at ``path``."""

    path: Path


class Unwatch(msgspec.Struct, array_like=True, frozen=True, tag=UNWATCH):
    """``[5, path]``: the sending node no longer watches ``path``."""

    path: Path


class Death(msgspec.Struct, array_like=True, frozen=True, tag=DEATH):
    """``[6, path, tag, body]``: the actor at ``path``, watched by the
    receiving node, terminated; the reason is a tagged value."""

    path: Path
    tag: Tag
    body: msgspec.Raw


class Heartbeat(msgspec.Struct, array_like=True, frozen=True, tag=HEARTBEAT):
    """``[7, seq]``: answer with a ``HeartbeatAck`` of the same ``seq``."""

    seq: Id


class HeartbeatAck(msgspec.Struct, array_like=True, frozen=True, tag=HEARTBEAT_ACK):
    """``[8, seq]``: the answer to a ``Heartbeat``."""

    seq: Id


class Lookup(msgspec.Struct, array_like=True, frozen=True, tag=LOOKUP):
    """``[9, ask_id, path]``: does an actor live at ``path``? Answered with a
    ``LookupReply``."""

    ask_id: Id
    path: Path


class LookupReply(msgspec.Struct, array_like=True, frozen=True, tag=LOOKUP_REPLY):
    """``[10, ask_id, found]``: the answer to a ``Lookup``."""

    ask_id: Id
    found: bool


class Stop(msgspec.Struct, array_like=True, frozen=True, tag=STOP):
    """``[11, path]``: stop the actor at ``path`` (as ``ref.stop()``)."""

    path: Path


class Ack(msgspec.Struct, array_like=True, frozen=True, tag=ACK):
    """``[12, seq]``: the sending node received every numbered frame from
    the receiving node up to number ``seq`` that it will ever receive."""

    seq: Id


Envelope = (
    Tell
    | Ask
    | Reply
    | Failure
    | Watch
    | Unwatch
    | Death
    | Heartbeat
    | HeartbeatAck
    | Lookup
    | LookupReply
    | Stop
    | Ack
)


class Frame(msgspec.Struct, array_like=True, frozen=True):
    """``[version, sender, envelopes]``: one NATS message.

    Attributes:
        version: ``VERSION``.
        sender: the sending node incarnation, or ``None`` for a program that
            is not a node (replies then go to the NATS reply subject).
        envelopes: the envelopes, in the order they were sent.
    """

    version: Literal[1]
    sender: NodeAddress | None
    envelopes: list[Envelope]


_frame_decoder = msgspec.msgpack.Decoder(Frame)


def decode_frame(payload: bytes | memoryview, max_size: int) -> Frame:
    """Decode a frame's envelopes (their bodies stay encoded: decode each
    with ``Codec.decode`` by its tag).

    Args:
        payload: the NATS message's payload.
        max_size: the largest payload accepted, in bytes.

    Raises:
        DecodeError: the payload is over ``max_size``, malformed, truncated,
            of another version, or has an envelope of unknown kind or shape.
    """
    if len(payload) > max_size:
        raise DecodeError(
            f"a frame of {len(payload)} bytes is over the limit of {max_size} bytes"
        )
    try:
        return _frame_decoder.decode(payload)
    except Exception as exc:  # msgspec's errors; RecursionError
        raise DecodeError(f"malformed frame: {exc}") from exc


_envelope_decoder = msgspec.msgpack.Decoder(Envelope)


def decode_envelope(data: bytes) -> Envelope:
    """Decode one envelope as a sender encoded it (for example to find the
    asks among envelopes handed to an outbound buffer's ``on_dropped``).

    Raises:
        DecodeError: ``data`` is not one valid envelope.
    """
    try:
        return _envelope_decoder.decode(data)
    except Exception as exc:
        raise DecodeError(f"malformed envelope: {exc}") from exc


# -- encoding ------------------------------------------------------------------

#: The most bytes an envelope count's array header takes.
MAX_FRAME_HEADER: Final = 5


def array_header(n: int) -> bytes:
    """The MessagePack header of an array of ``n`` elements."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 0x10000:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


class Wire:
    """Encodes envelopes and frames for one sender.

    Each ``encode_*`` method returns one envelope's bytes; ``frame`` joins
    envelopes into one NATS payload. Message-carrying methods raise
    ``TypeError`` (naming the type) for a message the codec cannot encode.

    Args:
        codec: the node's codec.
        sender: the sending node, or ``None`` for a program that is not one.
    """

    __slots__ = (
        "_encode",
        "_encode_body",
        "_tagged",
        "_value_tags",
        "codec",
        "prefix",
        "sender",
    )

    def __init__(self, codec: Codec, sender: NodeAddress | None) -> None:
        self.codec = codec
        self.sender = sender
        self._tagged = codec.tagged
        self._value_tags = codec.value_tags
        self._encode_body = codec.encode_body
        self._encode = codec.encoder.encode
        #: The bytes every frame of this sender begins with.
        self.prefix: bytes = b"\x93" + self._encode(VERSION) + self._encode(sender)

    def frame(self, envelopes: list[bytes]) -> bytes:
        """One frame holding ``envelopes`` (already encoded), in order."""
        return b"".join((self.prefix, array_header(len(envelopes)), *envelopes))

    def max_envelope(self, max_payload: int) -> int:
        """The largest envelope that fits a frame of ``max_payload`` bytes."""
        return max_payload - len(self.prefix) - MAX_FRAME_HEADER

    # Messages: one tag lookup and one encode call each (the hot path).

    def tell(self, path: str, message: object, trace: str | None = None) -> bytes:
        """A ``Tell`` of ``message`` to ``path``.

        Raises:
            TypeError: the codec cannot encode ``message``.
        """
        # The hot path: one dict lookup and one encode call, no helper call
        # (the gate in tests/remote/test_remote_call_counts.py counts them).
        tag = self._value_tags.get(type(message))
        if tag is None:
            tag, body = self._tagged(message)  # an exception, or TypeError
        else:
            body = message
        try:
            if trace is None:
                return self._encode((TELL, path, tag, body))
            return self._encode((TELL, path, tag, body, trace))
        except (TypeError, ValueError, OverflowError) as exc:
            raise self.codec.encode_failure(message, exc) from exc

    def ask(
        self, path: str, ask_id: int, message: object, trace: str | None = None
    ) -> bytes:
        """An ``Ask`` of ``message`` to ``path``.

        Raises:
            TypeError: the codec cannot encode ``message``.
        """
        tag = self._value_tags.get(type(message))
        if tag is None:
            tag, body = self._tagged(message)  # an exception, or TypeError
        else:
            body = message
        try:
            if trace is None:
                return self._encode((ASK, path, ask_id, tag, body))
            return self._encode((ASK, path, ask_id, tag, body, trace))
        except (TypeError, ValueError, OverflowError) as exc:
            raise self.codec.encode_failure(message, exc) from exc

    def reply(self, ask_id: int, value: object) -> bytes:
        """A ``Reply`` with ``value``.

        Raises:
            TypeError: the codec cannot encode ``value`` (send
                ``failure`` with that error instead).
        """
        tag, body = self._tagged(value)
        return self._encode_body(value, (REPLY, ask_id, tag, body))

    def failure(self, ask_id: int, error: BaseException) -> bytes:
        """A ``Failure`` with ``error`` (as itself when the codec knows
        its type, else as a RemoteActorError). Never raises."""
        tag, body = self.codec.encode_error(error)
        return self._encode((FAILURE, ask_id, tag, msgspec.Raw(body)))

    def death(self, path: str, reason: object) -> bytes:
        """A ``Death`` of ``path`` with ``reason``: an exception (encoded
        as by ``failure``) or a value of a registered type.

        Raises:
            TypeError: ``reason`` is not an exception and not encodable.
        """
        if isinstance(reason, BaseException):
            tag, body = self.codec.encode_error(reason)
            return self._encode((DEATH, path, tag, msgspec.Raw(body)))
        tag, value = self._tagged(reason)
        return self._encode_body(reason, (DEATH, path, tag, value))

    def watch(self, path: str) -> bytes:
        """A ``Watch`` of ``path``."""
        return self._encode((WATCH, path))

    def unwatch(self, path: str) -> bytes:
        """An ``Unwatch`` of ``path``."""
        return self._encode((UNWATCH, path))

    def heartbeat(self, seq: int) -> bytes:
        """A ``Heartbeat`` numbered ``seq``."""
        return self._encode((HEARTBEAT, seq))

    def heartbeat_ack(self, seq: int) -> bytes:
        """A ``HeartbeatAck`` of heartbeat ``seq``."""
        return self._encode((HEARTBEAT_ACK, seq))

    def lookup(self, ask_id: int, path: str) -> bytes:
        """A ``Lookup`` of ``path``."""
        return self._encode((LOOKUP, ask_id, path))

    def stop(self, path: str) -> bytes:
        """A ``Stop`` of ``path``."""
        return self._encode((STOP, path))

    def ack(self, seq: int) -> bytes:
        """An ``Ack`` of the frames up to number ``seq``."""
        return self._encode((ACK, seq))

    def lookup_reply(self, ask_id: int, found: bool) -> bytes:
        """A ``LookupReply``."""
        return self._encode((LOOKUP_REPLY, ask_id, bool(found)))
