"""The envelopes of the wire format as decoded, and their decoders (see
docs/remote-wire-format.md).

Each NATS message to a node is a *frame*: a MessagePack array
``[version, sender, [envelope, ...]]``. An envelope is a MessagePack array
whose first element is its kind (a small int); message bodies stay encoded
(``msgspec.Raw``) until the codec decodes them by their type tag. One struct
per kind, each the whole shape of its envelope: ``decode_frame`` turns bytes
from the network into these or raises ``DecodeError``, and nothing else
(``_inbound`` is the one caller for bytes from the network).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from ._errors import DecodeError
from ._node import NodeAddress, Path

__all__ = [
    "ACK",
    "ASK",
    "DEATH",
    "FAILURE",
    "HEARTBEAT",
    "HEARTBEAT_ACK",
    "LOOKUP",
    "LOOKUP_REPLY",
    "REPLY",
    "STOP",
    "TELL",
    "UNWATCH",
    "VERSION",
    "WATCH",
    "CREDIT",
    "CREDIT_QUERY",
    "CREDIT_STATE",
    "SHARE",
    "AckEnvelope",
    "AskEnvelope",
    "CreditEnvelope",
    "CreditQueryEnvelope",
    "CreditStateEnvelope",
    "DeathEnvelope",
    "Envelope",
    "FailureEnvelope",
    "Frame",
    "HeartbeatAckEnvelope",
    "HeartbeatEnvelope",
    "LookupEnvelope",
    "LookupReplyEnvelope",
    "ReplyEnvelope",
    "ShareEnvelope",
    "StopEnvelope",
    "TellEnvelope",
    "UnwatchEnvelope",
    "WatchEnvelope",
    "decode_envelope",
    "decode_frame",
]

#: The wire format's version, the first element of every frame.
VERSION: Final = 1

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
CREDIT: Final = 13
CREDIT_QUERY: Final = 14
CREDIT_STATE: Final = 15
SHARE: Final = 16

# Envelopes and frames are ``gc=False``: their fields are strings, numbers,
# raw bytes and (a frame's) a list of envelopes, so they cannot be part of a
# reference cycle, and a decoded frame adds nothing to the cyclic garbage
# collector's count (fewer collections per frame read).
Tag = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
Trace = Annotated[str, msgspec.Meta(max_length=512)]
Id = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class TellEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=TELL):
    """``[0, path, tag, body, trace?]``: deliver a message to ``path``."""

    path: Path
    tag: Tag
    body: msgspec.Raw
    trace: Trace | None = None


class AskEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=ASK):
    """``[1, path, ask_id, tag, body, trace?]``: deliver a message to ``path``
    and reply to the frame's sender (or, when it has none, to the NATS
    message's reply subject) with a ``ReplyEnvelope`` or ``FailureEnvelope``
    carrying ``ask_id``."""

    path: Path
    ask_id: Id
    tag: Tag
    body: msgspec.Raw
    trace: Trace | None = None


class ReplyEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=REPLY):
    """``[2, ask_id, tag, body]``: the handler's return value."""

    ask_id: Id
    tag: Tag
    body: msgspec.Raw


class FailureEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=FAILURE
):
    """``[3, ask_id, tag, body]``: the ask failed with this exception (the
    handler's, or the runtime's, e.g. the actor was not found or stopped)."""

    ask_id: Id
    tag: Tag
    body: msgspec.Raw


class WatchEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=WATCH):
    """``[4, path]``: the sending node watches the actor at ``path``."""

    path: Path


class UnwatchEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=UNWATCH
):
    """``[5, path]``: the sending node no longer watches ``path``."""

    path: Path


class DeathEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=DEATH):
    """``[6, path, tag, body]``: the actor at ``path``, watched by the
    receiving node, terminated; the reason is a tagged value."""

    path: Path
    tag: Tag
    body: msgspec.Raw


class HeartbeatEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=HEARTBEAT
):
    """``[7, seq]``: answer with a ``HeartbeatAckEnvelope`` of the same ``seq``."""

    seq: Id


class HeartbeatAckEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=HEARTBEAT_ACK
):
    """``[8, seq]``: the answer to a ``HeartbeatEnvelope``."""

    seq: Id


class LookupEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=LOOKUP
):
    """``[9, ask_id, path]``: does an actor live at ``path``? Answered with a
    ``LookupReplyEnvelope``."""

    ask_id: Id
    path: Path


class LookupReplyEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=LOOKUP_REPLY
):
    """``[10, ask_id, found]``: the answer to a ``LookupEnvelope``."""

    ask_id: Id
    found: bool


class StopEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=STOP):
    """``[11, path]``: stop the actor at ``path`` (as ``ref.stop()``)."""

    path: Path


class AckEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=ACK):
    """``[12, seq]``: the sending node received every numbered frame from
    the receiving node up to number ``seq`` that it will ever receive."""

    seq: Id


class CreditEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=CREDIT
):
    """``[13, path, count]``: the actor at ``path`` on the sending node took
    ``count`` more of the receiving node's tells to it (or they ended as
    dead letters there): that many credits back (out of band)."""

    path: Path
    count: Annotated[int, msgspec.Meta(ge=1, le=2**31)]


class CreditQueryEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=CREDIT_QUERY
):
    """``[14, path, query]``: how many of my tells to ``path`` do you hold?
    Sent in FIFO order after the tells; answered with kind 15."""

    path: Path
    query: Id


class CreditStateEnvelope(
    msgspec.Struct, array_like=True, frozen=True, gc=False, tag=CREDIT_STATE
):
    """``[15, path, query, held]``: the answer to credit query ``query``:
    the sending node holds ``held`` of the receiving node's tells to
    ``path`` (sent before the query and not yet taken)."""

    path: Path
    query: Id
    held: Id


class ShareEnvelope(msgspec.Struct, array_like=True, frozen=True, gc=False, tag=SHARE):
    """``[16, share, ask]``: the sending node's share (``Remote(share=...)``):
    the most of the receiving node's tells to one of its actors it holds;
    the receiving node keeps that many outstanding to each, at most. Sent
    out of band when a node first sends to a peer (``ask`` true: answer with
    your own, ``ask`` false). The receiving node checks ``share`` is within
    1 and ``MAX_SHARE`` before it uses it."""

    share: Id
    ask: bool


Envelope = (
    TellEnvelope
    | AskEnvelope
    | ReplyEnvelope
    | FailureEnvelope
    | WatchEnvelope
    | UnwatchEnvelope
    | DeathEnvelope
    | HeartbeatEnvelope
    | HeartbeatAckEnvelope
    | LookupEnvelope
    | LookupReplyEnvelope
    | StopEnvelope
    | AckEnvelope
    | CreditEnvelope
    | CreditQueryEnvelope
    | CreditStateEnvelope
    | ShareEnvelope
)


class Frame(msgspec.Struct, array_like=True, frozen=True, gc=False):
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
