"""Encoding the wire format: one builder per envelope kind, and frames (see
docs/remote-wire-format.md).

The senders encode each envelope once, when it is sent (so an unencodable
message fails at the call), and a frame is the sender's prefix
(``[version, sender, ...``), an array header and the envelopes' bytes joined.
The decoding side is ``_envelopes``.
"""

from __future__ import annotations

from typing import Final

import msgspec

from ._codec import Codec
from ._envelopes import (
    ACK,
    ASK,
    CREDIT,
    CREDIT_QUERY,
    CREDIT_STATE,
    DEATH,
    FAILURE,
    HEARTBEAT,
    HEARTBEAT_ACK,
    LOOKUP,
    LOOKUP_REPLY,
    REPLY,
    SHARE,
    STOP,
    TELL,
    UNWATCH,
    VERSION,
    WATCH,
)
from ._node import NodeAddress
from ._secret import MAC_SIZE, Secret

__all__ = ["MAX_FRAME_HEADER", "Wire", "array_header"]

#: The most bytes an envelope count's array header takes.
MAX_FRAME_HEADER: Final = 5


def array_header(n: int) -> bytes:
    """The MessagePack header of an array of ``n`` elements."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 0x10000:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


#: The headers of arrays of 0 to 15 elements (a frame's usual envelope
#: counts), looked up where ``array_header`` would be a call per frame.
_SMALL_ARRAY_HEADERS = tuple(array_header(n) for n in range(16))


class Wire:
    """Encodes envelopes and frames for one sender.

    Each ``encode_*`` method returns one envelope's bytes; ``frame`` joins
    envelopes into one NATS payload. Message-carrying methods raise
    ``TypeError`` (naming the type) for a message the codec cannot encode.

    Args:
        codec: the node's codec.
        sender: the sending node, or ``None`` for a program that is not one.
        secret: the cluster secret frames are sealed with (``seal``), or
            None (the trusted-broker mode: frames go as they are).
    """

    __slots__ = (
        "_encode",
        "_encode_body",
        "_tagged",
        "_value_tags",
        "codec",
        "prefix",
        "secret",
        "sender",
    )

    def __init__(
        self, codec: Codec, sender: NodeAddress | None, secret: Secret | None = None
    ) -> None:
        self.codec = codec
        self.sender = sender
        self.secret = secret
        self._tagged = codec.tagged
        self._value_tags = codec.value_tags
        self._encode_body = codec.encode_body
        self._encode = codec.encoder.encode
        #: The bytes every frame of this sender begins with.
        self.prefix: bytes = b"\x93" + self._encode(VERSION) + self._encode(sender)

    def frame(self, envelopes: list[bytes]) -> bytes:
        """One frame holding ``envelopes`` (already encoded), in order."""
        return b"".join((self.prefix, array_header(len(envelopes)), *envelopes))

    def sealed(self, subject: str, reply: str | None, envelopes: list[bytes]) -> bytes:
        """The payload of a frame of ``envelopes`` published on ``subject``
        with the numbered reply subject ``reply`` (or None): the frame,
        followed by its tag when there is a cluster secret (see
        ``_secret``)."""
        count = len(envelopes)
        header = _SMALL_ARRAY_HEADERS[count] if count < 16 else array_header(count)
        frame = b"".join((self.prefix, header, *envelopes))
        secret = self.secret
        return frame if secret is None else secret.seal(subject, reply, frame)

    def max_envelope(self, max_payload: int) -> int:
        """The largest envelope that fits a frame of ``max_payload`` bytes
        (its tag, with a cluster secret, included)."""
        tag = 0 if self.secret is None else MAC_SIZE
        return max_payload - len(self.prefix) - MAX_FRAME_HEADER - tag

    # Messages: one tag lookup and one encode call each (the hot path).

    def tell(self, path: str, message: object, trace: str | None = None) -> bytes:
        """A ``TellEnvelope`` of ``message`` to ``path``.

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
        """An ``AskEnvelope`` of ``message`` to ``path``.

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
        """A ``ReplyEnvelope`` with ``value``.

        Raises:
            TypeError: the codec cannot encode ``value`` (send
                ``failure`` with that error instead).
        """
        # As tell and ask: one dict lookup and one encode call for a message.
        tag = self._value_tags.get(type(value))
        if tag is None:
            tag, body = self._tagged(value)  # an exception, or TypeError
            return self._encode_body(value, (REPLY, ask_id, tag, body))
        try:
            return self._encode((REPLY, ask_id, tag, value))
        except (TypeError, ValueError, OverflowError) as exc:
            raise self.codec.encode_failure(value, exc) from exc

    def failure(self, ask_id: int, error: BaseException) -> bytes:
        """A ``FailureEnvelope`` with ``error`` (as itself when the codec knows
        its type, else as a RemoteActorError). Never raises."""
        tag, body = self.codec.encode_error(error)
        return self._encode((FAILURE, ask_id, tag, msgspec.Raw(body)))

    def death(self, path: str, reason: object) -> bytes:
        """A ``DeathEnvelope`` of ``path`` with ``reason``: an exception (encoded
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
        """A ``WatchEnvelope`` of ``path``."""
        return self._encode((WATCH, path))

    def unwatch(self, path: str) -> bytes:
        """An ``UnwatchEnvelope`` of ``path``."""
        return self._encode((UNWATCH, path))

    def heartbeat(self, seq: int) -> bytes:
        """A ``HeartbeatEnvelope`` numbered ``seq``."""
        return self._encode((HEARTBEAT, seq))

    def heartbeat_ack(self, seq: int) -> bytes:
        """A ``HeartbeatAckEnvelope`` of heartbeat ``seq``."""
        return self._encode((HEARTBEAT_ACK, seq))

    def lookup(self, ask_id: int, path: str) -> bytes:
        """A ``LookupEnvelope`` of ``path``."""
        return self._encode((LOOKUP, ask_id, path))

    def stop(self, path: str) -> bytes:
        """A ``StopEnvelope`` of ``path``."""
        return self._encode((STOP, path))

    def ack(self, seq: int) -> bytes:
        """An ``AckEnvelope`` of the frames up to number ``seq``."""
        return self._encode((ACK, seq))

    def credit(self, path: str, count: int) -> bytes:
        """A ``CreditEnvelope``: ``count`` tells to ``path`` were taken."""
        return self._encode((CREDIT, path, count))

    def credit_query(self, path: str, query: int) -> bytes:
        """A ``CreditQueryEnvelope`` numbered ``query``."""
        return self._encode((CREDIT_QUERY, path, query))

    def credit_state(self, path: str, query: int, held: int) -> bytes:
        """A ``CreditStateEnvelope``: the answer to query ``query``."""
        return self._encode((CREDIT_STATE, path, query, held))

    def share(self, share: int, ask: bool) -> bytes:
        """A ``ShareEnvelope``: this node holds ``share`` tells per peer and
        actor; ``ask``: answer with yours."""
        return self._encode((SHARE, share, ask))

    def lookup_reply(self, ask_id: int, found: bool) -> bytes:
        """A ``LookupReplyEnvelope``."""
        return self._encode((LOOKUP_REPLY, ask_id, bool(found)))
