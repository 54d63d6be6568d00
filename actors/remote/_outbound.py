"""Outbound buffers: envelopes to one peer node, batched into frames.

Senders put encoded envelopes into the peer's bounded buffer, a
[``Mailbox``][actors.mailbox.Mailbox]: ``try_put`` never waits and raises
``MailboxFull`` when the buffer is full (``tell``), ``put`` waits for room
(``send``, ``ask``: backpressure across the wire). System envelopes (replies,
watch, unwatch, death notices, lookups) go in with ``put_system``: never
counted against the capacity nor refused for it, yet in their FIFO place
among the messages, so a death notice never overtakes the messages sent
before it. Heartbeats and acks are out of band (``Outbound.put_urgent``):
published at once, outside the buffer and the window, so a full window never
delays the signs of life nor the acks that open it.

One writer task per peer drains the buffer with drain-many and publishes one
NATS message per frame (``_writer``), so a burst of small tells costs one
NATS message; a frame never exceeds the server's ``max_payload``. One writer
per peer and one NATS connection keep envelopes FIFO per sender-receiver
pair. When the writer is idle, nothing is buffered and the client has
written everything, an ask or an answer is published at once by its caller
(``Outbound.put_now``): a lone ask does not wait for the writer's wake.

The window (``_window``) bounds the bytes in flight: frames are numbered, the
peer acks what it received, and the writer takes no more envelopes while
``window`` bytes of frames are published and not yet acked (so at most the
window plus one batch). With the window full the writer waits and the
buffer fills: ``tell`` raises ``MailboxFull``, ``send`` and ``ask`` wait. A
slow peer node therefore slows its senders instead of being disconnected by
the server as a slow consumer; a slow *actor* is the credits' business
(``_credits``, ``_shares``): its peer acks frames on arrival. A frame NATS
returns (no responders) is known by its number: its asks fail and its tells
are dead letters (``Outbound.returned``).

Delivery is at-most-once: envelopes that cannot be published (the client
failed, the peer's buffer was aborted) or came back are handed to
``on_dropped`` with the reason, so the caller counts them as dead letters and
fails their asks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress
from typing import NamedTuple

from ..mailbox import Mailbox, MailboxClosed, MailboxFull
from ._errors import FrameTooLarge, NodeUnreachable
from ._node import NodeAddress
from ._publisher import Publisher
from ._window import Window
from ._wire import Wire
from ._writer import HEADER_ALLOWANCE, BufferedSystem, BufferedTraced, Writer, data_of

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_CAPACITY",
    "DEFAULT_WINDOW",
    "MIN_WINDOW",
    "Outbound",
    "OutboundStatistics",
    "Publisher",
]

logger = logging.getLogger("actors.remote")

#: Envelopes an outbound buffer holds by default (system envelopes aside).
DEFAULT_CAPACITY = 4096
#: The most envelopes the writer takes per wake (one or more frames).
DEFAULT_BATCH = 1024
#: The most bytes of frames published to a peer and not yet acked, by default
#: (the server closes a connection with 64 MiB pending as a slow consumer).
DEFAULT_WINDOW = 4 * 1024 * 1024
#: The smallest window: above what a receiver leaves unacked (``ACK_BYTES``).
MIN_WINDOW = 256 * 1024


class OutboundStatistics(NamedTuple):
    """Counters of one ``Outbound``."""

    #: envelopes counted against the capacity in the buffer now
    queued: int
    #: system envelopes in the buffer now (never counted)
    queued_system: int
    #: the buffer's capacity in envelopes
    capacity: int
    #: senders waiting in ``put`` for room
    waiting_senders: int
    #: NATS messages published
    frames: int
    #: envelopes published
    envelopes: int
    #: payload bytes published
    bytes: int
    #: envelopes handed to ``on_dropped``
    dropped: int
    #: bytes of frames published and not yet acked
    in_flight: int
    #: the most bytes in flight (the window)
    window: int
    #: frames NATS returned (nobody listened); their envelopes are in dropped
    returned: int
    #: frames whose envelopes were published at once by their caller
    direct: int
    #: the writer's wakes (each takes a batch: one or more frames)
    batches: int
    #: acks beyond the last frame sent (impossible: ignored)
    acks_beyond: int = 0


def _log_dropped(envelopes: list[bytes], error: BaseException) -> None:
    logger.warning("%d envelopes to a peer dropped: %s", len(envelopes), error)


class Outbound:
    """The bounded outbound buffer to one peer node, and its writer.

    Run ``run`` in a task (the writer); stop it with ``close`` (what
    is buffered is still published) or ``abort`` (it is dropped).

    Args:
        peer: the peer node.
        wire: the sender's wire encoder (its frames' prefix).
        client: the NATS client (``publish``, ``publish_nowait``,
            ``pending_bytes`` and ``max_payload``).
        subject: the peer's inbox subject.
        reply: the return subject for this peer (NATS's no-responders status
            comes back there), or ``None``; each frame's reply subject is
            ``<reply>.<frame number>`` (out-of-band frames: ``reply`` itself).
        capacity: the most envelopes buffered by ``try_put`` / ``put`` (at
            least 1).
        batch: the most envelopes the writer takes per wake (at least 1).
        window: the most bytes of frames published and not yet acked (at
            least ``MIN_WINDOW``).
        on_dropped: called with envelopes that were not published (or came
            back) and why (a sync function; an exception it raises is
            logged). Default: a warning is logged.
        numbers: the last frame numbers used before on the two lanes
            (numbered, out-of-band) to this peer, by an earlier buffer to
            it: numbers go on from there (the receiver refuses a number at
            or below one it accepted).

    Raises:
        TypeError / ValueError: a bad ``capacity``, ``batch`` or ``window``,
            naming it.
    """

    __slots__ = (
        "_buffer",
        "_client",
        "_direct",
        "_dropped",
        "_error",
        "_on_dropped",
        "_oob",
        "_reply",
        "_returned",
        "_subject",
        "_try_send",
        "_window",
        "_wire",
        "_writer",
        "batch",
        "peer",
    )

    def __init__(
        self,
        peer: NodeAddress,
        wire: Wire,
        client: Publisher,
        *,
        subject: str,
        reply: str | None = None,
        capacity: int = DEFAULT_CAPACITY,
        batch: int = DEFAULT_BATCH,
        window: int = DEFAULT_WINDOW,
        on_dropped: Callable[[list[bytes], BaseException], None] | None = None,
        numbers: tuple[int, int] = (0, 0),
    ) -> None:
        for name, value, least in (
            ("capacity", capacity, 1),
            ("batch", batch, 1),
            ("window", window, MIN_WINDOW),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            if value < least:
                raise ValueError(f"{name} must be at least {least}, not {value}")
        self.peer = peer
        self.batch = batch
        self._window = Window(window)
        #: The number of the last numbered frame (the window's), and of the
        #: last out-of-band one (a lane of its own: ``put_urgent``).
        self._window.seq, self._oob = numbers
        self._wire = wire
        self._client = client
        self._subject = subject
        self._reply = reply
        self._on_dropped = on_dropped or _log_dropped
        self._buffer: Mailbox[bytes | BufferedTraced] = Mailbox(capacity)
        self._try_send = self._buffer.try_send
        self._error: BaseException | None = None  #: why it was aborted
        self._writer = Writer(
            peer, wire, client, subject, reply, self._window, self._drop
        )
        self._dropped = 0
        self._returned = 0
        self._direct = 0

    # -- the senders' side ---------------------------------------------------

    def _check_size(self, envelope: bytes, headers: int = 0) -> None:
        # Called only when the envelope is over the cached limit: re-read the
        # server's max_payload (a reconnection may have raised it).
        self._writer.limit = limit = self._wire.max_envelope(self._client.max_payload)
        limit -= headers
        if len(envelope) > limit:
            raise FrameTooLarge(
                f"an envelope of {len(envelope)} bytes to {self.peer} does not fit "
                f"one NATS message (at most {limit} bytes with the server's "
                f"max_payload of {self._client.max_payload} bytes)"
            )

    def _unreachable(self) -> NodeUnreachable:
        error = NodeUnreachable(f"the outbound buffer to {self.peer} is closed")
        error.__cause__ = self._error  # why it was aborted, if it was
        error.__suppress_context__ = True
        return error

    def try_put(self, envelope: bytes, headers: dict[str, str] | None = None) -> None:
        """Buffer ``envelope`` without waiting. Never a checkpoint.

        ``headers``: NATS headers its frame carries (the W3C trace context
        of a traced system); consecutive envelopes with the same headers
        dict share frames.

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            MailboxFull: the buffer is full (or senders are waiting for room).
            NodeUnreachable: the buffer was closed or aborted.
        """
        item: bytes | BufferedTraced
        if headers is None:
            if len(envelope) > self._writer.limit:  # cached: no property read
                self._check_size(envelope)
            item = envelope
        else:
            if len(envelope) > self._writer.limit - HEADER_ALLOWANCE:
                self._check_size(envelope, HEADER_ALLOWANCE)
            item = BufferedTraced(envelope, headers)
        try:
            self._try_send(item)
            self._writer.idle = False  # it has one to take now
        except MailboxFull:
            raise MailboxFull(
                f"the outbound buffer to {self.peer} is full "
                f"({self._buffer.capacity} envelopes)"
            ) from None
        except MailboxClosed:
            raise self._unreachable()  # noqa: B904 - its cause is set

    async def put(self, envelope: bytes, headers: dict[str, str] | None = None) -> None:
        """Buffer ``envelope``, waiting for room (FIFO among waiting senders);
        ``headers`` as for ``try_put``.

        Not a checkpoint when the buffer has room (as ``Mailbox.send`` and the
        NATS client's ``publish``): a burst of puts goes out in few frames,
        where a checkpoint per put would wake the writer for each envelope.
        Cancelled while waiting, it buffers nothing (as ``Mailbox.send``: on
        asyncio, a native ``Task.cancel()`` landing after the envelope moved
        in leaves it buffered and still raises ``CancelledError``).

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            NodeUnreachable: the buffer was (or, while waiting, became) closed
                or aborted.
        """
        item: bytes | BufferedTraced
        if headers is None:
            if len(envelope) > self._writer.limit:  # cached: no property read
                self._check_size(envelope)
            item = envelope
        else:
            if len(envelope) > self._writer.limit - HEADER_ALLOWANCE:
                self._check_size(envelope, HEADER_ALLOWANCE)
            item = BufferedTraced(envelope, headers)
        self._writer.idle = False  # one to take, or a sender waiting
        try:
            await self._buffer.send(item)
        except MailboxClosed:
            raise self._unreachable()  # noqa: B904 - its cause is set

    def put_system(self, envelope: bytes) -> None:
        """Buffer a system envelope: never refused for capacity, never waits,
        in its FIFO place among the others.

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            NodeUnreachable: the buffer was closed or aborted.
        """
        if len(envelope) > self._writer.limit:  # cached: no property read
            self._check_size(envelope)
        try:
            self._buffer.send_signal(BufferedSystem(envelope))
            self._writer.idle = False  # it has one to take now
        except MailboxClosed:
            raise self._unreachable()  # noqa: B904 - its cause is set

    def put_now(self, envelope: bytes, headers: dict[str, str] | None = None) -> bool:
        """Publish ``envelope`` in a frame of its own at once, if that keeps
        FIFO and the window: nothing is buffered and the writer holds
        nothing (``Writer.idle``), the window has room and the client has written
        everything (so nothing is batching right now). Never waits, never a
        checkpoint.

        Returns:
            True when it was published; False when nothing was done (then
            buffer it with ``put`` or ``put_system``, which raise
            ``NodeUnreachable`` when the buffer is closed).

        Raises:
            FrameTooLarge: it does not fit one NATS message.
        """
        writer = self._writer
        # Cheapest first (an ask or answer among many in flight fails here):
        # attributes only, no call.
        if not writer.idle:
            return False
        window = self._window
        if window.in_flight >= window.limit:
            return False
        allowance = 0 if headers is None else HEADER_ALLOWANCE
        if len(envelope) > writer.limit - allowance:
            self._check_size(envelope, allowance)
        if self._client.pending_bytes:
            return False
        try:
            writer.send_frame([envelope], self._client.publish_nowait, headers)
        except Exception as exc:  # the client is closed: dropped, as the writer
            self._drop([envelope], exc)
            return True
        self._direct += 1
        return True

    def put_urgent(self, envelope: bytes) -> None:
        """Publish an out-of-band envelope (heartbeat, heartbeat ack, ack) in
        a frame of its own, at once: outside the buffer, the FIFO order and
        the window. Best effort: dropped (and logged) if the client cannot
        take it.

        Raises:
            NodeUnreachable: the buffer was closed or aborted.
        """
        if self._buffer.closed:
            raise self._unreachable()
        reply = self._reply
        if reply is not None:
            # Numbered on the out-of-band lane ("o<n>"): the receiver
            # refuses a number seen before (a replayed heartbeat or ack).
            self._oob = oob = self._oob + 1
            reply = f"{reply}.o{oob}"
        subject = self._subject
        try:
            self._client.publish_nowait(
                subject, self._wire.sealed(subject, reply, [envelope]), reply=reply
            )
        except Exception as exc:
            logger.debug("an out-of-band envelope to %s dropped: %s", self.peer, exc)

    def close(self) -> None:
        """Take no more envelopes; the writer publishes what is buffered and
        returns. Senders waiting for room get ``NodeUnreachable``. Idempotent."""
        self._writer.idle = False  # nothing is published at once any more
        self._buffer.close()
        self._window.open()

    def abort(self, error: BaseException) -> None:
        """Close and drop what is buffered (handed to ``on_dropped`` with
        ``error``): the peer is gone. Waiting senders get ``NodeUnreachable``
        with ``error`` as its cause. Idempotent."""
        self._error = error
        self._writer.idle = False  # nothing is published at once any more
        self._buffer.close()
        items = self._buffer.take_all()
        if items:
            self._drop([data_of(item) for item in items], error)
        self._window.clear()

    def _drop(self, envelopes: list[bytes], error: BaseException) -> None:
        self._dropped += len(envelopes)
        try:
            self._on_dropped(envelopes, error)
        except Exception:
            logger.exception("on_dropped raised")

    # -- acks and returns ------------------------------------------------------

    @property
    def window(self) -> int:
        """The most bytes of frames published and not yet acked."""
        return self._window.limit

    def acked(self, seq: int) -> bool:
        """The peer received every frame up to number ``seq`` that it will
        ever receive: they leave the window.

        Returns:
            False when ``seq`` is beyond the last frame sent (a forged or
            corrupt ack: ignored and counted, the window stays as it is),
            else True.
        """
        return self._window.acked(seq)

    def returned(self, seq: int, error: BaseException) -> bool:
        """NATS returned frame ``seq`` (nobody listened): it leaves the
        window and its envelopes go to ``on_dropped`` with ``error``.

        Returns:
            Whether that frame was still in flight here.
        """
        sent = self._window.returned(seq)
        if sent is None:
            return False
        self._returned += 1
        self._drop(sent.envelopes, error)
        return True

    # -- the writer ----------------------------------------------------------

    async def run(self) -> None:
        """The writer (see ``_writer``): publish buffered envelopes in frames
        until the buffer is closed and empty (or aborted).

        Envelopes whose frame cannot be published (the client raised) go to
        ``on_dropped`` and the writer goes on. If the writer is cancelled, the
        envelopes it had taken and not yet published go to ``on_dropped``.
        """
        await self._writer.run(
            self._buffer, self.batch, self._is_closed, self._ask_for_ack
        )

    def _is_closed(self) -> bool:
        return self._buffer.closed

    def _ask_for_ack(self) -> None:
        with suppress(NodeUnreachable):
            self.put_urgent(self._wire.heartbeat(0))

    # -- observation ---------------------------------------------------------

    @property
    def numbers(self) -> tuple[int, int]:
        """The last frame numbers used on the two lanes (numbered,
        out-of-band): a later buffer to the same peer goes on from them."""
        return self._window.seq, self._oob

    @property
    def frames_sent(self) -> int:
        """Numbered frames published (``statistics().frames``, read
        without making the statistics)."""
        return self._writer.frames

    @property
    def idle(self) -> bool:
        """Nothing buffered, nothing in flight, no sender waiting, and the
        writer holds nothing."""
        return not (len(self._buffer) or self._window.in_flight or self._writer.busy)

    @property
    def closed(self) -> bool:
        """Whether ``close`` or ``abort`` was called."""
        return self._buffer.closed

    def statistics(self) -> OutboundStatistics:
        """The counters now."""
        buffer = self._buffer.statistics()
        writer = self._writer
        return OutboundStatistics(
            buffer.queued_messages,
            buffer.queued_signals,
            self._buffer.capacity or 0,
            buffer.waiting_senders,
            writer.frames,
            writer.envelopes,
            writer.bytes,
            self._dropped,
            self._window.in_flight,
            self._window.limit,
            self._returned,
            self._direct,
            writer.batches,
            self._window.beyond,
        )
