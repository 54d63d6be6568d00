"""One peer node incarnation as this node knows it: what it sent us
(``Received``), its state (``Peer``: buffer, suspicion, frame numbers, the
share it advertised) and its counters (``PeerStatistics``). The table of
them is ``_peers``."""

from __future__ import annotations

from typing import NamedTuple

import anyio

from ._node import NodeAddress
from ._outbound import Outbound

__all__ = ["Peer", "PeerStatistics", "Received", "Retired"]


class Received:
    """What this node received from one peer: the highest frame number,
    bytes not yet acked, and the totals (see ``_inbound``)."""

    __slots__ = ("bytes", "envelopes", "frames", "oob", "seq", "unacked")

    def __init__(self, seq: int = 0, oob: int = 0) -> None:
        self.seq = seq  #: the highest frame number received
        self.oob = oob  #: the highest out-of-band frame number received
        self.unacked = 0  #: bytes received since the last ack
        self.frames = 0  #: numbered frames received
        self.bytes = 0  #: their bytes
        self.envelopes = 0  #: the envelopes in them


#: A retired peer: its frame numbers, when it is forgotten, its traffic.
Retired = tuple[tuple[int, int, int, int], float, int]


class Peer:
    """One peer node incarnation, as this node knows it.

    Attributes:
        address: the peer.
        outbound: the buffer to it and its writer (None until something is
            sent to it).
        received: what came from it (None until a numbered frame did).
        suspect: NATS said nobody listens on it, and it has not answered a
            heartbeat since.
    """

    __slots__ = (
        "address",
        "earlier",
        "heard",
        "marks",
        "numbers",
        "outbound",
        "quiet",
        "received",
        "share",
        "suspect",
    )

    def __init__(self, address: NodeAddress) -> None:
        self.address = address
        self.outbound: Outbound | None = None
        self.received: Received | None = None
        self.suspect = False
        #: The share it advertised (None: not heard yet; see ``Peers.shared``).
        self.share: int | None = None
        #: Set when it advertises its share (made by ``Peers.handshake``).
        self.heard: anyio.Event | None = None
        #: The frame numbers (both lanes) last used to it (see Outbound).
        self.numbers = (0, 0)
        #: Its frame numbers both ways at the last pruning round, and since
        #: when they have not moved (None: they moved at that round).
        self.marks: tuple[int, int, int, int] = (0, 0, 0, 0)
        self.quiet: float | None = None
        #: Frames both ways before it was last retired.
        self.earlier = 0

    def traffic(self) -> int:
        """How many frames went both ways (counts, not numbers: a sender
        picks its numbers, not how many frames it got through)."""
        outbound = self.outbound
        received = self.received
        return (
            self.earlier
            + (0 if outbound is None else outbound.frames_sent)
            + (0 if received is None else received.frames)
        )

    def activity(self) -> tuple[int, int, int, int]:
        """Its frame numbers both ways now (they move with any frame)."""
        outbound = self.outbound
        sent = self.numbers if outbound is None else outbound.numbers
        received = self.received
        if received is None:
            return (*sent, 0, 0)
        return (*sent, received.seq, received.oob)


class PeerStatistics(NamedTuple):
    """Counters of one peer (``Remote.peer_statistics``)."""

    #: NATS messages (frames) published to it
    frames_sent: int
    #: their payload bytes
    bytes_sent: int
    #: the envelopes in them
    envelopes_sent: int
    #: the writer's wakes, each publishing what it took in one go
    batches: int
    #: frames NATS returned (nobody listened on the peer)
    frames_returned: int
    #: numbered frames received from it
    frames_received: int
    #: their payload bytes
    bytes_received: int
    #: the envelopes in them
    envelopes_received: int
    #: whether something was sent to it (an outbound buffer exists)
    sending: bool
    #: whether numbered frames came from it
    receiving: bool
    #: its actors this node has tells outstanding to (sent, not yet taken)
    credit_lanes: int = 0
    #: those tells
    credit_outstanding: int = 0
    #: senders here waiting for a credit to one of its actors
    credit_waiting: int = 0
    #: tells refused here because an actor's share was used up
    credit_refused: int = 0
    #: its tells to this node's actors not yet taken by them
    share_outstanding: int = 0
    #: of those, tells waiting for room in a full mailbox
    share_held: int = 0
    #: the share its actors take from this node: the one it advertised
    #: (0 while not heard; this node's own is counted against meanwhile)
    share_advertised: int = 0
