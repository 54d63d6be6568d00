"""Outbound buffers: envelopes to one peer node, batched into frames.

Senders put encoded envelopes into the peer's bounded buffer, a
:class:`~actors.mailbox.Mailbox`: ``try_put`` never waits and raises
``MailboxFull`` when the buffer is full (``tell``), ``put`` waits for room
(``send``, ``ask``: backpressure across the wire). System envelopes (replies,
watch, unwatch, death notices, heartbeats, lookups) go in with
``put_system``: never counted against the capacity nor refused for it (a
burst of tells must not cost a reply or a heartbeat, which would make a busy
peer look dead), yet in their FIFO place among the messages, so a death
notice never overtakes the messages sent before it.

One writer task per peer drains the buffer with drain-many and publishes one
NATS message per frame, so a burst of small tells costs one NATS message; a
frame never exceeds the server's ``max_payload`` (a batch that would is
split). One writer per peer and one NATS connection keep envelopes FIFO per
sender-receiver pair.

Delivery is at-most-once: envelopes that cannot be published (the client
failed, the peer's buffer was aborted) are handed to ``on_dropped`` with the
reason, so the caller counts them as dead letters and fails their asks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol

from ..mailbox import EndOfMailbox, Mailbox, MailboxClosed, MailboxFull, Signal
from ._errors import FrameTooLarge, NodeUnreachable
from ._node import NodeAddress
from ._wire import Wire

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_CAPACITY",
    "Outbound",
    "OutboundStatistics",
    "Publisher",
]

logger = logging.getLogger("actors.remote")

#: Envelopes an outbound buffer holds by default (system envelopes aside).
DEFAULT_CAPACITY = 4096
#: The most envelopes the writer takes per wake (one or more frames).
DEFAULT_BATCH = 1024


class _System(Signal):
    """A system envelope in the buffer: uncounted, in FIFO place."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def _data(item: bytes | Signal) -> bytes:
    return item.data if type(item) is _System else item  # type: ignore[return-value]


class Publisher(Protocol):
    """What an outbound buffer publishes with: the NATS client's API."""

    @property
    def max_payload(self) -> int:
        """The server's ``max_payload`` in bytes (it may change on reconnect)."""
        ...

    def publish(
        self, subject: str, payload: bytes = ..., *, reply: str | None = ...
    ) -> Awaitable[None]:
        """Queue a NATS message, waiting while the client's buffer is full."""
        ...


class OutboundStatistics(NamedTuple):
    """Counters of one :class:`Outbound`."""

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


def _log_dropped(envelopes: list[bytes], error: BaseException) -> None:
    logger.warning("%d envelopes to a peer dropped: %s", len(envelopes), error)


class Outbound:
    """The bounded outbound buffer to one peer node, and its writer.

    Run :meth:`run` in a task (the writer); stop it with :meth:`close` (what
    is buffered is still published) or :meth:`abort` (it is dropped).

    Args:
        peer: the peer node.
        wire: the sender's wire encoder (its frames' prefix).
        client: the NATS client (``publish`` and ``max_payload``).
        subject: the peer's inbox subject.
        reply: the reply subject of each frame (the no-responders return
            subject for this peer), or ``None``.
        capacity: the most envelopes buffered by ``try_put`` / ``put`` (at
            least 1).
        batch: the most envelopes the writer takes per wake (at least 1).
        on_dropped: called with envelopes that were not published and why (a
            sync function; an exception it raises is logged). Default: a
            warning is logged.

    Raises:
        TypeError / ValueError: a bad ``capacity`` or ``batch``, naming it.
    """

    __slots__ = (
        "_buffer",
        "_bytes",
        "_client",
        "_dropped",
        "_envelopes",
        "_error",
        "_frames",
        "_limit",
        "_on_dropped",
        "_reply",
        "_subject",
        "_try_send",
        "_wire",
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
        on_dropped: Callable[[list[bytes], BaseException], None] | None = None,
    ) -> None:
        for name, value in (("capacity", capacity), ("batch", batch)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            if value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")
        self.peer = peer
        self.batch = batch
        self._wire = wire
        self._client = client
        self._subject = subject
        self._reply = reply
        self._on_dropped = on_dropped or _log_dropped
        self._buffer: Mailbox[bytes] = Mailbox(capacity)
        self._try_send = self._buffer.try_send
        self._error: BaseException | None = None  #: why it was aborted
        #: The largest envelope that fits a frame, as of the last look at the
        #: server's max_payload (on a miss, and by the writer per batch).
        self._limit = wire.max_envelope(client.max_payload)
        self._frames = 0
        self._envelopes = 0
        self._bytes = 0
        self._dropped = 0

    # -- the senders' side ---------------------------------------------------

    def _check_size(self, envelope: bytes) -> None:
        # Called only when the envelope is over the cached limit: re-read the
        # server's max_payload (a reconnection may have raised it).
        self._limit = limit = self._wire.max_envelope(self._client.max_payload)
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

    def try_put(self, envelope: bytes) -> None:
        """Buffer ``envelope`` without waiting. Never a checkpoint.

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            MailboxFull: the buffer is full (or senders are waiting for room).
            NodeUnreachable: the buffer was closed or aborted.
        """
        if len(envelope) > self._limit:  # cached: the hot path reads no property
            self._check_size(envelope)
        try:
            self._try_send(envelope)
        except MailboxFull:
            raise MailboxFull(
                f"the outbound buffer to {self.peer} is full "
                f"({self._buffer.capacity} envelopes)"
            ) from None
        except MailboxClosed:
            raise self._unreachable()  # noqa: B904 - its cause is set

    async def put(self, envelope: bytes) -> None:
        """Buffer ``envelope``, waiting for room (FIFO among waiting senders).

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
        if len(envelope) > self._limit:  # cached: the hot path reads no property
            self._check_size(envelope)
        try:
            await self._buffer.send(envelope)
        except MailboxClosed:
            raise self._unreachable()  # noqa: B904 - its cause is set

    def put_system(self, envelope: bytes) -> None:
        """Buffer a system envelope: never refused for capacity, never waits,
        in its FIFO place among the others.

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            NodeUnreachable: the buffer was closed or aborted.
        """
        if len(envelope) > self._limit:  # cached: the hot path reads no property
            self._check_size(envelope)
        try:
            self._buffer.send_signal(_System(envelope))
        except MailboxClosed:
            raise self._unreachable()  # noqa: B904 - its cause is set

    def close(self) -> None:
        """Take no more envelopes; the writer publishes what is buffered and
        returns. Senders waiting for room get ``NodeUnreachable``. Idempotent."""
        self._buffer.close()

    def abort(self, error: BaseException) -> None:
        """Close and drop what is buffered (handed to ``on_dropped`` with
        ``error``): the peer is gone. Waiting senders get ``NodeUnreachable``
        with ``error`` as its cause. Idempotent."""
        self._error = error
        self._buffer.close()
        items = self._buffer.take_all()
        if items:
            self._drop([_data(item) for item in items], error)

    def _drop(self, envelopes: list[bytes], error: BaseException) -> None:
        self._dropped += len(envelopes)
        try:
            self._on_dropped(envelopes, error)
        except Exception:
            logger.exception("on_dropped raised")

    # -- the writer ----------------------------------------------------------

    async def run(self) -> None:
        """The writer: publish buffered envelopes in frames until the buffer
        is closed and empty (or aborted).

        Envelopes whose frame cannot be published (the client raised) go to
        ``on_dropped`` and the writer goes on. If the writer is cancelled, the
        envelopes it had taken and not yet published go to ``on_dropped``.
        """
        receive = self._buffer.receive_many_unchecked  # the limit is checked once
        batch = self.batch
        while True:
            try:
                items = await receive(batch)
            except EndOfMailbox:
                return
            # Usually all bytes: one scan, no copy.
            if any(type(item) is _System for item in items):
                envelopes = [_data(item) for item in items]
            else:
                envelopes = items  # type: ignore[assignment]
            await self._publish(envelopes)

    async def _publish(self, envelopes: list[bytes]) -> None:
        wire = self._wire
        client = self._client
        publish = client.publish
        subject = self._subject
        reply = self._reply
        self._limit = limit = wire.max_envelope(client.max_payload)
        start = 0
        total = len(envelopes)
        try:
            while start < total:
                # The longest run from `start` that fits one frame.
                end = start
                size = 0
                while end < total:
                    n = len(envelopes[end])
                    if size + n > limit:
                        break
                    size += n
                    end += 1
                if end == start:
                    # The server's max_payload shrank after it was checked.
                    too_large = envelopes[start]
                    start += 1
                    self._drop(
                        [too_large],
                        FrameTooLarge(
                            f"an envelope of {len(too_large)} bytes to {self.peer} "
                            f"no longer fits one NATS message (limit {limit})"
                        ),
                    )
                    continue
                frame = wire.frame(envelopes[start:end])
                try:
                    await publish(subject, frame, reply=reply)
                except Exception as exc:
                    self._drop(envelopes[start:end], exc)
                else:
                    self._frames += 1
                    self._envelopes += end - start
                    self._bytes += len(frame)
                start = end
        except BaseException as exc:
            # Cancelled mid-batch: what was not handed to the client is lost.
            if start < total:
                self._drop(envelopes[start:], exc)
            raise

    # -- observation ---------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` or :meth:`abort` was called."""
        return self._buffer.closed

    def statistics(self) -> OutboundStatistics:
        """The counters now."""
        buffer = self._buffer.statistics()
        return OutboundStatistics(
            buffer.queued_messages,
            buffer.queued_signals,
            self._buffer.capacity or 0,
            buffer.waiting_senders,
            self._frames,
            self._envelopes,
            self._bytes,
            self._dropped,
        )
