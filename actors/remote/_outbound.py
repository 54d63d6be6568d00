"""Outbound buffers: envelopes to one peer node, batched into frames.

Senders put encoded envelopes into the peer's bounded buffer (an
``actors.channel`` stream): ``try_put`` never waits and raises ``MailboxFull``
when the buffer is full (``tell``), ``put`` waits for room (``send``, ``ask``:
backpressure across the wire). One writer task per peer drains the buffer with
``receive_many`` and publishes one NATS message per frame, so a burst of small
tells costs one NATS message; a frame never exceeds the server's
``max_payload`` (a batch that would is split). One writer per peer and one
NATS connection keep envelopes FIFO per sender-receiver pair.

Delivery is at-most-once: envelopes that cannot be published (the client
failed, the peer's buffer was aborted) are handed to ``on_dropped`` with the
reason, so the caller counts them as dead letters and fails their asks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol

from ..channel import (
    BrokenResourceError,
    ClosedResourceError,
    EndOfStream,
    WouldBlock,
    create_memory_object_stream,
)
from ..mailbox import MailboxFull
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

#: Envelopes an outbound buffer holds by default.
DEFAULT_CAPACITY = 4096
#: The most envelopes the writer takes per wake (one or more frames).
DEFAULT_BATCH = 1024


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

    #: envelopes in the buffer now
    queued: int
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
        capacity: the most envelopes buffered (at least 1).
        batch: the most envelopes the writer takes per wake (at least 1).
        on_dropped: called with envelopes that were not published and why (a
            sync function; it must not raise). Default: a warning is logged.

    Raises:
        TypeError / ValueError: a bad ``capacity`` or ``batch``, naming it.
    """

    __slots__ = (
        "_bytes",
        "_capacity",
        "_client",
        "_closing",
        "_dropped",
        "_envelopes",
        "_error",
        "_frames",
        "_on_dropped",
        "_reply",
        "_rx",
        "_send_nowait",
        "_subject",
        "_tx",
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
        self._capacity = capacity
        self._on_dropped = on_dropped or _log_dropped
        self._tx, self._rx = create_memory_object_stream[bytes](capacity)
        self._send_nowait = self._tx.send_nowait
        self._error: BaseException | None = None  #: why it was aborted
        self._closing = False
        self._frames = 0
        self._envelopes = 0
        self._bytes = 0
        self._dropped = 0

    # -- the senders' side ---------------------------------------------------

    def _check_size(self, envelope: bytes) -> None:
        limit = self._wire.max_envelope(self._client.max_payload)
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
        """Buffer ``envelope`` without waiting.

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            MailboxFull: the buffer is full (or senders are waiting for room).
            NodeUnreachable: the buffer was closed or aborted.
        """
        self._check_size(envelope)
        try:
            self._send_nowait(envelope)
        except WouldBlock:
            raise MailboxFull(
                f"the outbound buffer to {self.peer} is full "
                f"({self._capacity} envelopes)"
            ) from None
        except (ClosedResourceError, BrokenResourceError):
            raise self._unreachable()  # noqa: B904 - its cause is set

    async def put(self, envelope: bytes) -> None:
        """Buffer ``envelope``, waiting for room (FIFO among waiting senders).

        Not a checkpoint when the buffer has room, as the NATS client's
        ``publish``: a burst of puts then goes out in few frames (a checkpoint
        per put would wake the writer for each envelope). Cancelled while
        waiting, it buffers nothing.

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            NodeUnreachable: the buffer was (or, while waiting, became) closed
                or aborted.
        """
        self._check_size(envelope)
        try:
            try:
                self._send_nowait(envelope)
            except WouldBlock:
                await self._tx.send(envelope)
        except (ClosedResourceError, BrokenResourceError):
            raise self._unreachable()  # noqa: B904 - its cause is set

    def close(self) -> None:
        """Take no more envelopes; the writer publishes what is buffered and
        returns. Senders waiting for room get ``NodeUnreachable``. Idempotent."""
        self._closing = True
        self._tx.close()

    def abort(self, error: BaseException) -> None:
        """Close and drop what is buffered (handed to ``on_dropped`` with
        ``error``): the peer is gone. Idempotent."""
        self._closing = True
        self._error = error
        self._tx.close()
        self._drop_buffered(error)
        self._rx.close()

    def _drop_buffered(self, error: BaseException) -> None:
        try:
            while True:
                self._drop(self._rx.receive_nowait_many(self.batch), error)
        except (WouldBlock, EndOfStream, ClosedResourceError):
            pass

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
        receive_many = self._rx.receive_many
        batch = self.batch
        while True:
            try:
                envelopes = await receive_many(batch)
            except (EndOfStream, ClosedResourceError):
                return
            await self._publish(envelopes)

    async def _publish(self, envelopes: list[bytes]) -> None:
        wire = self._wire
        client = self._client
        publish = client.publish
        subject = self._subject
        reply = self._reply
        limit = wire.max_envelope(client.max_payload)
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
        return self._closing

    def statistics(self) -> OutboundStatistics:
        """The counters now."""
        channel = self._rx.statistics()
        return OutboundStatistics(
            channel.current_buffer_used,
            self._capacity,
            channel.tasks_waiting_send,
            self._frames,
            self._envelopes,
            self._bytes,
            self._dropped,
        )
