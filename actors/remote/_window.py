"""The window of one outbound buffer: the frames published to a peer and not
yet acked by it, their numbers and sizes, and the wait for room.

Frames are numbered 1, 2, 3, ... per peer (the number is the last token of
their reply subject, see ``_outbound``). The peer acks the highest number it
received (``_inbound``); an ack frees every frame up to it. The writer takes
no more envelopes while ``limit`` bytes of frames are unacked. A frame NATS
returns (no responders) leaves the window by its number, its envelopes
handed back so their asks fail and their tells are dead letters. An ack
beyond the last number sent cannot be true (a forged or corrupted frame):
it is ignored and counted, so it can neither open the window early nor
wedge it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import anyio

__all__ = ["ACK_TIMEOUT", "Sent", "Window"]

#: Seconds a writer waits on a full window before it asks the peer for an
#: ack (a heartbeat, answered with an ack too): an ack lost on the way, or
#: frames lost at the tail, never stall it.
ACK_TIMEOUT = 1.0


class Sent:
    """A frame published and not yet acked: its number, size and envelopes
    (kept so that a frame NATS returns is known envelope by envelope)."""

    __slots__ = ("envelopes", "seq", "size")

    def __init__(self, seq: int, size: int, envelopes: list[bytes]) -> None:
        self.seq = seq
        self.size = size
        self.envelopes = envelopes


class Window:
    """The frames to one peer in flight (see the module doc).

    Args:
        limit: the most bytes of frames published and not yet acked.
    """

    __slots__ = (
        "_room",
        "_unacked",
        "acked_seq",
        "beyond",
        "in_flight",
        "limit",
        "seq",
    )

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seq = 0  #: the number of the last numbered frame
        self.acked_seq = 0  #: the highest frame number the peer acked
        self.in_flight = 0  #: bytes of the frames unacked
        self.beyond = 0  #: acks beyond the last frame sent (ignored)
        self._unacked: deque[Sent] = deque()
        self._room: anyio.Event | None = None  #: set when the window opens

    @property
    def full(self) -> bool:
        """Whether ``limit`` bytes or more are in flight."""
        return self.in_flight >= self.limit

    def number(self) -> int:
        """The next frame's number."""
        self.seq += 1
        return self.seq

    def sent(self, seq: int, size: int, envelopes: list[bytes]) -> None:
        """Frame ``seq`` of ``size`` bytes was handed to the client."""
        self._unacked.append(Sent(seq, size, envelopes))
        self.in_flight += size

    def forget_last(self) -> Sent | None:
        """The frame just numbered was refused by the client: not in flight
        (None if an abort meanwhile forgot every frame already)."""
        unacked = self._unacked
        if not unacked or unacked[-1].seq != self.seq:
            return None
        sent = unacked.pop()
        self.in_flight -= sent.size
        return sent

    def acked(self, seq: int) -> bool:
        """The peer received every frame up to number ``seq`` that it will
        ever receive: they leave the window.

        Returns:
            False for an ack beyond the last frame sent (ignored and counted
            in ``beyond``), else True.
        """
        if seq > self.seq:
            self.beyond += 1
            return False
        if seq <= self.acked_seq:
            return True
        self.acked_seq = seq
        unacked = self._unacked
        freed = 0
        while unacked and unacked[0].seq <= seq:
            freed += unacked.popleft().size
        if freed:
            self.in_flight -= freed
            if self.in_flight < self.limit:
                self.open()
        return True

    def returned(self, seq: int) -> Sent | None:
        """NATS returned frame ``seq``: it leaves the window.

        Returns:
            The frame, or None when it was not in flight any more.
        """
        for index, sent in enumerate(self._unacked):
            if sent.seq == seq:
                del self._unacked[index]
                self.in_flight -= sent.size
                if self.in_flight < self.limit:
                    self.open()
                return sent
            if sent.seq > seq:
                break
        return None

    def clear(self) -> None:
        """Forget every frame in flight (the peer is gone) and open."""
        self._unacked.clear()
        self.in_flight = 0
        self.open()

    def open(self) -> None:
        """Wake the writer waiting for room (if it waits)."""
        room = self._room
        if room is not None:
            self._room = None
            room.set()

    async def wait_for_room(
        self, closed: Callable[[], bool], ask_for_ack: Callable[[], None]
    ) -> None:
        """Wait until the window has room (or ``closed()``); call
        ``ask_for_ack`` each ``ACK_TIMEOUT`` seconds it stays full."""
        while self.in_flight >= self.limit and not closed():
            room = self._room = anyio.Event()
            with anyio.move_on_after(ACK_TIMEOUT):
                await room.wait()
            if not room.is_set():
                ask_for_ack()
