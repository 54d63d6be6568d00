"""The writer of one outbound buffer: takes what is buffered with
drain-many and publishes it in numbered frames that fit the server's
``max_payload`` (see ``_outbound`` for the buffer, ``_window`` for the frames
in flight).

A batch is usually all plain envelopes (one scan, no copy); system
envelopes (``BufferedSystem``) and traced ones (``BufferedTraced``, whose
frames carry the W3C trace headers of the context they were sent from) are
published as runs of envelopes with the same headers. A batch over one
frame is split; an envelope that no longer fits (the server's
``max_payload`` shrank after it was checked) is dropped with
``FrameTooLarge``; a frame the client refuses is dropped and not counted as
published; what a cancelled writer had taken and not handed to the client
is dropped. Every drop goes to the buffer's ``on_dropped``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..mailbox import EndOfMailbox, Mailbox, Signal
from ._errors import FrameTooLarge
from ._node import NodeAddress
from ._window import Sent, Window
from ._wire import Wire

__all__ = [
    "HEADER_ALLOWANCE",
    "BufferedSystem",
    "BufferedTraced",
    "Writer",
]

#: Bytes a frame leaves for trace headers (``traceparent``, ``tracestate``).
HEADER_ALLOWANCE = 768


class BufferedSystem(Signal):
    """A system envelope in the buffer: uncounted, in FIFO place."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class BufferedTraced:
    """A counted envelope with the W3C trace headers of the context it was
    sent from (a traced system only): its frame carries them."""

    __slots__ = ("data", "headers")

    def __init__(self, data: bytes, headers: dict[str, str]) -> None:
        self.data = data
        self.headers = headers


def data_of(item: object) -> bytes:
    """The envelope of a buffered item."""
    return item if type(item) is bytes else item.data  # type: ignore[attr-defined]


def _headers(item: object) -> dict[str, str] | None:
    return item.headers if type(item) is BufferedTraced else None


class Writer:
    """Publishes one peer's buffered envelopes (see the module doc).

    Args:
        peer: the peer node (named in errors).
        wire: the sender's encoder (frames).
        client: the NATS client (``publish``, ``max_payload``).
        subject: the peer's inbox subject.
        reply: the return subject (frame ``n``'s reply is ``<reply>.<n>``),
            or None.
        window: the frames in flight.
        drop: ``(envelopes, error)``: envelopes that were not published.
    """

    __slots__ = (
        "_client",
        "_drop",
        "_reply",
        "_subject",
        "_wire",
        "batches",
        "busy",
        "bytes",
        "envelopes",
        "frames",
        "idle",
        "limit",
        "peer",
        "window",
    )

    def __init__(
        self,
        peer: NodeAddress,
        wire: Wire,
        client: Any,
        subject: str,
        reply: str | None,
        window: Window,
        drop: Callable[[list[bytes], BaseException], None],
    ) -> None:
        self.peer = peer
        self._wire = wire
        self._client = client
        self._subject = subject
        self._reply = reply
        self.window = window
        self._drop = drop
        #: The largest envelope that fits a frame, as of the last look at the
        #: server's max_payload (the senders' check reads it too).
        self.limit = wire.max_envelope(client.max_payload)
        #: It holds envelopes it has not yet handed to the client.
        self.busy = False
        #: Nothing is buffered and it holds nothing (it has not started, or
        #: it waits for envelopes): set before it waits with the buffer
        #: empty, cleared when it wakes and by whatever buffers an envelope
        #: (``Outbound``), so while it is set an envelope published at once
        #: keeps its FIFO place.
        self.idle = True
        self.frames = 0  #: NATS messages published
        self.envelopes = 0  #: envelopes in them
        self.bytes = 0  #: their payload bytes
        self.batches = 0  #: wakes, each taking a batch

    def send_frame(
        self,
        envelopes: list[bytes],
        publish: Callable[..., object],
        headers: dict[str, str] | None = None,
    ) -> object:
        """Number a frame of ``envelopes``, account for it, and hand it to
        ``publish`` (its result returned: an awaitable for ``publish``)."""
        window = self.window
        seq = window.number()
        reply = self._reply
        subject = self._subject
        number = None if reply is None else f"{reply}.{seq}"
        frame = self._wire.sealed(subject, number, envelopes)
        if headers is None:
            result = publish(subject, frame, reply=number)
        else:
            result = publish(subject, frame, reply=number, headers=headers)
        size = len(frame)
        window.sent(seq, size, envelopes)
        self.frames += 1
        self.envelopes += len(envelopes)
        self.bytes += size
        return result

    async def run(
        self,
        buffer: Mailbox[Any],
        batch: int,
        closed: Callable[[], bool],
        ask_for_ack: Callable[[], None],
    ) -> None:
        """Publish what ``buffer`` holds, up to ``batch`` envelopes per wake,
        until it is closed and empty; with the window full, wait for room
        (``closed`` and ``ask_for_ack`` as ``Window.wait_for_room``)."""
        receive = buffer.receive_many_unchecked  # the limit is checked once
        window = self.window
        while True:
            if window.in_flight >= window.limit:
                # Wait with nothing in hand: the buffer stays full meanwhile.
                await window.wait_for_room(closed, ask_for_ack)
            # Only with nothing buffered: the take checkpoints first, also
            # with envelopes queued, and those must not be overtaken.
            self.idle = not len(buffer)
            try:
                items = await receive(batch)
            except EndOfMailbox:
                return
            finally:
                self.idle = False
            self.batches += 1
            self.busy = True
            try:
                # The kinds of item in C (map, set): no Python step per item.
                kinds = set(map(type, items))
                if BufferedTraced in kinds:
                    await self._publish_mixed(items)
                elif len(kinds) == 1 and bytes in kinds:
                    # All envelopes (the usual case): no copy.
                    await self._publish(items)  # type: ignore[arg-type]
                else:
                    # System envelopes (replies) among them, no headers.
                    await self._publish(
                        [
                            item if type(item) is bytes else item.data  # type: ignore[union-attr]
                            for item in items
                        ]
                    )
            finally:
                self.busy = False

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
                await self._publish(
                    [data_of(item) for item in items[start:end]], headers
                )
            except BaseException as exc:
                if end < total:
                    self._drop([data_of(item) for item in items[end:]], exc)
                raise
            start = end

    async def _publish(
        self, envelopes: list[bytes], headers: dict[str, str] | None = None
    ) -> None:
        client = self._client
        publish = client.publish
        self.limit = limit = self._wire.max_envelope(client.max_payload)
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
                    await self.send_frame(part, publish, headers)  # type: ignore[misc]
                except Exception as exc:
                    self._forget(self.window.forget_last())
                    self._drop(part, exc)
                start = end
        except BaseException as exc:
            # Cancelled mid-batch: what was not handed to the client is lost.
            if start < total:
                self._drop(envelopes[start:], exc)
            raise

    def _forget(self, sent: Sent | None) -> None:
        # The frame the client refused is not counted as published.
        if sent is not None:
            self.frames -= 1
            self.envelopes -= len(sent.envelopes)
            self.bytes -= sent.size
