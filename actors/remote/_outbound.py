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
NATS message per frame, so a burst of small tells costs one NATS message; a
frame never exceeds the server's ``max_payload`` (a batch that would is
split). One writer per peer and one NATS connection keep envelopes FIFO per
sender-receiver pair. When the writer is idle, nothing is buffered and the
client has written everything, an ask or an answer is published at once by
its caller (``Outbound.put_now``): a lone ask does not wait for the
writer's wake.

The window bounds the bytes in flight: frames are numbered (the number is the
last token of their reply subject), the peer acks what it received, and the
writer takes no more envelopes while ``window`` bytes of frames are published
and not yet acked (so at most the window plus one batch). With the
window full the writer waits and the buffer fills: ``tell`` raises
``MailboxFull``, ``send`` and ``ask`` wait. A slow peer therefore slows its
senders instead of being disconnected by the server as a slow consumer. A
frame NATS returns (no responders) is known by its number: its asks fail and
its tells are dead letters (``Outbound.returned``).

Delivery is at-most-once: envelopes that cannot be published (the client
failed, the peer's buffer was aborted) or came back are handed to
``on_dropped`` with the reason, so the caller counts them as dead letters and
fails their asks.

Its size: one concept, the buffer to one peer, whose senders' side, window
and writer share its state (a split would expose it).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import NamedTuple

import anyio

from ..mailbox import EndOfMailbox, Mailbox, MailboxClosed, MailboxFull, Signal
from ._errors import FrameTooLarge, NodeUnreachable
from ._node import NodeAddress
from ._publisher import Publisher
from ._wire import Wire

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
#: Seconds a writer waits on a full window before it asks the peer for an
#: ack (a heartbeat, answered with an ack too): an ack lost on the way, or
#: frames lost at the tail, never stall it.
ACK_TIMEOUT = 1.0


class _System(Signal):
    """A system envelope in the buffer: uncounted, in FIFO place."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _Traced:
    """A counted envelope with the W3C trace headers of the context it was
    sent from (a traced system only): its frame carries them."""

    __slots__ = ("data", "headers")

    def __init__(self, data: bytes, headers: dict[str, str]) -> None:
        self.data = data
        self.headers = headers


#: Bytes a frame leaves for trace headers (``traceparent``, ``tracestate``).
HEADER_ALLOWANCE = 768


def _data(item: object) -> bytes:
    return item if type(item) is bytes else item.data  # type: ignore[attr-defined]


def _headers(item: object) -> dict[str, str] | None:
    return item.headers if type(item) is _Traced else None


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


def _log_dropped(envelopes: list[bytes], error: BaseException) -> None:
    logger.warning("%d envelopes to a peer dropped: %s", len(envelopes), error)


class _Sent:
    """A frame published and not yet acked: its number, size and envelopes
    (kept so that a frame NATS returns is known envelope by envelope)."""

    __slots__ = ("envelopes", "seq", "size")

    def __init__(self, seq: int, size: int, envelopes: list[bytes]) -> None:
        self.seq = seq
        self.size = size
        self.envelopes = envelopes


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
        "_acked",
        "_batches",
        "_buffer",
        "_busy",
        "_bytes",
        "_client",
        "_direct",
        "_dropped",
        "_envelopes",
        "_error",
        "_frames",
        "_in_flight",
        "_limit",
        "_on_dropped",
        "_oob",
        "_reply",
        "_returned",
        "_room",
        "_seq",
        "_subject",
        "_try_send",
        "_unacked",
        "_wire",
        "batch",
        "peer",
        "window",
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
        self.window = window
        self._wire = wire
        self._client = client
        self._subject = subject
        self._reply = reply
        self._on_dropped = on_dropped or _log_dropped
        self._buffer: Mailbox[bytes | _Traced] = Mailbox(capacity)
        self._try_send = self._buffer.try_send
        self._error: BaseException | None = None  #: why it was aborted
        #: The largest envelope that fits a frame, as of the last look at the
        #: server's max_payload (on a miss, and by the writer per batch).
        self._limit = wire.max_envelope(client.max_payload)
        #: The writer holds envelopes it has not yet handed to the client.
        self._busy = False
        #: The number of the last numbered frame, and of the last
        #: out-of-band one (a lane of its own: ``put_urgent``).
        self._seq, self._oob = numbers
        self._acked = 0  #: the highest frame number the peer acked
        self._unacked: deque[_Sent] = deque()
        self._in_flight = 0  #: bytes of the frames in _unacked
        self._room: anyio.Event | None = None  #: set when an ack opens the window
        self._frames = 0
        self._envelopes = 0
        self._bytes = 0
        self._dropped = 0
        self._returned = 0
        self._direct = 0
        self._batches = 0

    # -- the senders' side ---------------------------------------------------

    def _check_size(self, envelope: bytes, headers: int = 0) -> None:
        # Called only when the envelope is over the cached limit: re-read the
        # server's max_payload (a reconnection may have raised it).
        self._limit = limit = self._wire.max_envelope(self._client.max_payload)
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
        item: bytes | _Traced
        if headers is None:
            if len(envelope) > self._limit:  # cached: no property read
                self._check_size(envelope)
            item = envelope
        else:
            if len(envelope) > self._limit - HEADER_ALLOWANCE:
                self._check_size(envelope, HEADER_ALLOWANCE)
            item = _Traced(envelope, headers)
        try:
            self._try_send(item)
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
        item: bytes | _Traced
        if headers is None:
            if len(envelope) > self._limit:  # cached: no property read
                self._check_size(envelope)
            item = envelope
        else:
            if len(envelope) > self._limit - HEADER_ALLOWANCE:
                self._check_size(envelope, HEADER_ALLOWANCE)
            item = _Traced(envelope, headers)
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
        if len(envelope) > self._limit:  # cached: the hot path reads no property
            self._check_size(envelope)
        try:
            self._buffer.send_signal(_System(envelope))
        except MailboxClosed:
            raise self._unreachable()  # noqa: B904 - its cause is set

    def put_now(self, envelope: bytes, headers: dict[str, str] | None = None) -> bool:
        """Publish ``envelope`` in a frame of its own at once, if that keeps
        FIFO and the window: nothing is buffered, the writer holds nothing,
        the window has room and the client has written everything (so
        nothing is batching right now). Never waits, never a checkpoint.

        Returns:
            True when it was published; False when nothing was done (then
            buffer it with ``put`` or ``put_system``).

        Raises:
            FrameTooLarge: it does not fit one NATS message.
            NodeUnreachable: the buffer was closed or aborted.
        """
        if len(envelope) > self._limit - (0 if headers is None else HEADER_ALLOWANCE):
            self._check_size(envelope, 0 if headers is None else HEADER_ALLOWANCE)
        buffer = self._buffer
        if (
            self._busy
            or len(buffer)
            or self._in_flight >= self.window
            or self._client.pending_bytes
        ):
            return False
        if buffer.closed:
            raise self._unreachable()
        try:
            self._send_frame([envelope], self._client.publish_nowait, headers)
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
        self._buffer.close()
        self._open_window()

    def abort(self, error: BaseException) -> None:
        """Close and drop what is buffered (handed to ``on_dropped`` with
        ``error``): the peer is gone. Waiting senders get ``NodeUnreachable``
        with ``error`` as its cause. Idempotent."""
        self._error = error
        self._buffer.close()
        items = self._buffer.take_all()
        if items:
            self._drop([_data(item) for item in items], error)
        self._unacked.clear()
        self._in_flight = 0
        self._open_window()

    def _drop(self, envelopes: list[bytes], error: BaseException) -> None:
        self._dropped += len(envelopes)
        try:
            self._on_dropped(envelopes, error)
        except Exception:
            logger.exception("on_dropped raised")

    # -- acks and returns ------------------------------------------------------

    def acked(self, seq: int) -> bool:
        """The peer received every frame up to number ``seq`` that it will
        ever receive: they leave the window.

        Returns:
            False when ``seq`` is beyond the last frame sent (a forged or
            corrupt ack: ignored, the window stays as it is), else True.
        """
        if seq > self._seq:
            return False
        if seq <= self._acked:
            return True
        self._acked = seq
        unacked = self._unacked
        freed = 0
        while unacked and unacked[0].seq <= seq:
            freed += unacked.popleft().size
        if freed:
            self._in_flight -= freed
            if self._in_flight < self.window:
                self._open_window()
        return True

    def returned(self, seq: int, error: BaseException) -> bool:
        """NATS returned frame ``seq`` (nobody listened): it leaves the
        window and its envelopes go to ``on_dropped`` with ``error``.

        Returns:
            Whether that frame was still in flight here.
        """
        for index, sent in enumerate(self._unacked):
            if sent.seq == seq:
                del self._unacked[index]
                self._in_flight -= sent.size
                self._returned += 1
                self._drop(sent.envelopes, error)
                if self._in_flight < self.window:
                    self._open_window()
                return True
            if sent.seq > seq:
                break
        return False

    def _open_window(self) -> None:
        room = self._room
        if room is not None:
            self._room = None
            room.set()

    # -- the writer ----------------------------------------------------------

    def _send_frame(
        self,
        envelopes: list[bytes],
        publish: Callable[..., object],
        headers: dict[str, str] | None = None,
    ) -> object:
        """Number a frame of ``envelopes``, account for it, and hand it to
        ``publish`` (its result returned: an awaitable for ``publish``)."""
        self._seq = seq = self._seq + 1
        reply = self._reply
        subject = self._subject
        number = None if reply is None else f"{reply}.{seq}"
        frame = self._wire.sealed(subject, number, envelopes)
        if headers is None:
            result = publish(subject, frame, reply=number)
        else:
            result = publish(subject, frame, reply=number, headers=headers)
        size = len(frame)
        self._unacked.append(_Sent(seq, size, envelopes))
        self._in_flight += size
        self._frames += 1
        self._envelopes += len(envelopes)
        self._bytes += size
        return result

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
            if self._in_flight >= self.window:
                # Wait with nothing in hand: the buffer stays full meanwhile.
                await self._wait_for_room()
            try:
                items = await receive(batch)
            except EndOfMailbox:
                return
            self._batches += 1
            self._busy = True
            try:
                # Usually all bytes: one scan, no copy.
                if any(type(item) is not bytes for item in items):
                    await self._publish_mixed(items)
                else:
                    await self._publish(items)  # type: ignore[arg-type]
            finally:
                self._busy = False

    async def _publish_mixed(self, items: Sequence[object]) -> None:
        # System envelopes and traced ones among them: each run of envelopes
        # with the same trace headers (None: none) is published with them.
        start = 0
        total = len(items)
        while start < total:
            headers = _headers(items[start])
            end = start + 1
            while end < total and _headers(items[end]) is headers:
                end += 1
            try:
                await self._publish([_data(item) for item in items[start:end]], headers)
            except BaseException as exc:
                if end < total:
                    self._drop([_data(item) for item in items[end:]], exc)
                raise
            start = end

    async def _wait_for_room(self) -> None:
        """Wait until the window has room; ask the peer for an ack (a
        heartbeat) each ``ACK_TIMEOUT`` seconds it stays full."""
        while self._in_flight >= self.window and not self._buffer.closed:
            room = self._room = anyio.Event()
            with anyio.move_on_after(ACK_TIMEOUT):
                await room.wait()
            if not room.is_set():
                with suppress(NodeUnreachable):
                    self.put_urgent(self._wire.heartbeat(0))

    async def _publish(
        self, envelopes: list[bytes], headers: dict[str, str] | None = None
    ) -> None:
        wire = self._wire
        client = self._client
        publish = client.publish
        self._limit = limit = wire.max_envelope(client.max_payload)
        if headers is not None:
            limit -= HEADER_ALLOWANCE
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
                part = envelopes[start:end]
                try:
                    await self._send_frame(part, publish, headers)  # type: ignore[misc]
                except Exception as exc:
                    self._forget_last()
                    self._drop(part, exc)
                start = end
        except BaseException as exc:
            # Cancelled mid-batch: what was not handed to the client is lost.
            if start < total:
                self._drop(envelopes[start:], exc)
            raise

    def _forget_last(self) -> None:
        # The frame just numbered was refused by the client: not in flight
        # (unless an abort meanwhile forgot every frame already).
        unacked = self._unacked
        if not unacked or unacked[-1].seq != self._seq:
            return
        sent = unacked.pop()
        self._in_flight -= sent.size
        self._frames -= 1
        self._envelopes -= len(sent.envelopes)
        self._bytes -= sent.size

    # -- observation ---------------------------------------------------------

    @property
    def numbers(self) -> tuple[int, int]:
        """The last frame numbers used on the two lanes (numbered,
        out-of-band): a later buffer to the same peer goes on from them."""
        return self._seq, self._oob

    @property
    def frames_sent(self) -> int:
        """Numbered frames published (``statistics().frames``, read
        without making the statistics)."""
        return self._frames

    @property
    def idle(self) -> bool:
        """Nothing buffered, nothing in flight, no sender waiting, and the
        writer holds nothing."""
        return not (len(self._buffer) or self._unacked or self._busy)

    @property
    def closed(self) -> bool:
        """Whether ``close`` or ``abort`` was called."""
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
            self._in_flight,
            self.window,
            self._returned,
            self._direct,
            self._batches,
        )
