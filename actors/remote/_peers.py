"""The peer table: one state object per peer node incarnation (``_peer``),
its outbound buffer and writer, the suspects, the incarnations known to be
gone, and what happens when a peer is lost.

A peer gets a [``Peer``][actors.remote._peer.Peer] the first time this node
sends to it or receives a numbered frame from it; its outbound buffer (and
the writer task that drains it) is made when something is first sent to it.
A peer NATS reports nobody listens on (a frame came back with the
no-responders status) is a *suspect*: monitored by heartbeats until it
answers one (alive after all: it was between connections) or is declared
down. A peer declared down is *gone*: its buffer is aborted, its state
dropped, and nothing is sent to that incarnation again (nor is anything
from it taken) for ``gone_ttl`` seconds.

Every table here is bounded: at most ``max_peers`` peers (a frame from one
more is dropped, counted by the caller; a send to one more fails as to a
node that is unreachable; a suspect is declared down to make room first),
and as many gone and retired incarnations each.
A peer quiet for ``idle_timeout`` seconds is *retired* (``_peer_pruning``:
its buffer goes, its frame numbers are kept).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from contextlib import suppress
from typing import Any, NamedTuple

import anyio
from anyio.abc import TaskGroup

from .. import ActorRef, SystemNotRunning
from ..nats import Client, Msg
from ._codec import Codec
from ._credits import Credits
from ._envelopes import AskEnvelope, TellEnvelope, decode_envelope
from ._errors import DecodeError, NodeUnreachable
from ._heartbeat import HeartbeatMonitor
from ._node import NodeAddress, RefAddress
from ._outbound import Outbound
from ._peer import Peer, PeerStatistics, Received, Retired
from ._peer_pruning import PeerPruning
from ._subjects import Subjects
from ._wire import Wire

__all__ = [
    "DEFAULT_GONE_TTL",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_PEERS",
    "Peer",
    "PeerStatistics",
    "Peers",
    "Received",
    "RemoteStatistics",
]

#: Peer node incarnations a node keeps state for at once, by default.
DEFAULT_MAX_PEERS = 1024
#: Seconds a gone or retired incarnation is remembered, by default.
DEFAULT_GONE_TTL = 3600.0
#: Seconds a quiet peer keeps its buffer and writer, by default.
DEFAULT_IDLE_TIMEOUT = 60.0


class RemoteStatistics(NamedTuple):
    """Counters of one node (``Remote.statistics()``)."""

    #: reconnections of the node's NATS client
    reconnects: int
    #: each peer's counters, by peer
    peers: dict[NodeAddress, PeerStatistics]
    #: frames that never arrived from each peer (gaps in their numbers)
    frames_lost: dict[NodeAddress, int]
    #: dead letters the remote layer made, by (peer node name, reason)
    dead_letters: dict[tuple[str, str], int]


class Peers(PeerPruning):
    """The peer table of one node (see the module doc).

    Args:
        wire: the node's encoder.
        subjects: the node's subjects.
        codec: the node's codec (to describe what was dropped).
        monitor: the heartbeat monitor (suspects are depended on).
        capacity, window: of each outbound buffer (see ``Outbound``).
        share: messages outstanding per remote actor (see ``Credits``).
        max_peers: the most peers kept at once (and gone, and retired).
        gone_ttl: seconds a gone or retired incarnation is remembered.
        idle_timeout: seconds a quiet peer keeps its buffer and writer.
        fail_ask: fails the ask with this id (an envelope of it was dropped).
        dead_letter: ``(recipient, message, reason, peer)``: a tell that
            could not be sent.
        remote_ref: the remote ref of an address (a dead letter's recipient).
    """

    def __init__(
        self,
        wire: Wire,
        subjects: Subjects,
        codec: Codec,
        monitor: HeartbeatMonitor,
        *,
        capacity: int,
        window: int,
        share: int,
        max_peers: int = DEFAULT_MAX_PEERS,
        gone_ttl: float = DEFAULT_GONE_TTL,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        fail_ask: Callable[[int, NodeUnreachable], None],
        dead_letter: Callable[[ActorRef[Any], object, str, object], None],
        remote_ref: Callable[[RefAddress], ActorRef[Any]],
    ) -> None:
        self._wire = wire
        self._subjects = subjects
        self._codec = codec
        self._monitor = monitor
        self._capacity = capacity
        self._window = window
        self._share = share
        #: What this node holds of each peer's tells, ``(outstanding,
        #: held)`` (set by the node: the receiving side's shares).
        self.held_from: Callable[[NodeAddress], tuple[int, int]] = lambda _: (0, 0)
        self.max_peers = max_peers
        self._gone_ttl = gone_ttl
        self._idle_timeout = idle_timeout
        self._fail_ask = fail_ask
        self._dead_letter = dead_letter
        self._remote_ref = remote_ref
        self._client: Client | None = None
        self._tg: TaskGroup | None = None
        #: Sending is allowed (cleared when the node begins to stop).
        self.open = False
        self.peers: dict[NodeAddress, Peer] = {}
        #: Each peer's outbound buffer, by peer: the senders' fast path (one
        #: dict lookup per tell).
        self.outbounds: dict[NodeAddress, Outbound] = {}
        #: Each peer's credits (and its buffer), by peer: the tells' fast path.
        self.credits: dict[NodeAddress, Credits] = {}
        #: Peer incarnations declared down, to when they are forgotten:
        #: nothing is sent to them or taken from them meanwhile.
        self.gone: dict[NodeAddress, float] = {}
        #: Peers retired while quiet: their frame numbers (sent on both
        #: lanes, received on both), when they are forgotten, and how many
        #: frames went both ways (their standing in a full table).
        self.retired: OrderedDict[NodeAddress, Retired] = OrderedDict()
        #: Frames that never arrived from each peer (see ``_inbound``),
        #: kept after the peer is gone, for the latest ``max_peers`` peers.
        self.lost_frames: dict[NodeAddress, int] = {}
        #: Declares a suspect down to make room in a full table (set by the
        #: node: its asks fail, its watchers get NodeDown).
        self.evict: Callable[[NodeAddress], None] | None = None
        #: One event per writer task running, set when it ends.
        self._writers: set[anyio.Event] = set()

    def attach(self, client: Client, tg: TaskGroup) -> None:
        """The node is connected: outbound buffers publish with ``client``,
        their writers run in ``tg``."""
        self._client = client
        self._tg = tg
        self.open = True

    # -- the table ---------------------------------------------------------------

    def peer(self, address: NodeAddress) -> Peer | None:
        """The state of ``address`` (made at first use), or None when it is
        gone or the table is full (``max_peers``, after pruning)."""
        peer = self.peers.get(address)
        if peer is None:
            if address in self.gone:
                return None
            peers = self.peers
            if len(peers) >= self.max_peers and not self._make_room(
                address, anyio.current_time()
            ):
                return None
            peer = peers[address] = Peer(address)
            retired = self.retired.pop(address, None)
            if retired is not None:
                marks = retired[0]
                peer.numbers = marks[:2]
                peer.received = Received(marks[2], marks[3])
                peer.earlier = retired[2]
        return peer

    def outbound(self, address: NodeAddress) -> Outbound | None:
        """The outbound buffer to ``address`` (made, with its writer, at first
        use), or None when ``address`` is gone.

        Raises:
            SystemNotRunning: the node is not connected, or stopping.
        """
        outbound = self.outbounds.get(address)
        if outbound is not None:
            return outbound
        peer = self.peer(address)
        if peer is None:
            return None
        tg = self._tg
        client = self._client
        if tg is None or client is None or not self.open:
            raise SystemNotRunning("the remote layer has stopped")
        subjects = self._subjects
        outbound = peer.outbound = Outbound(
            address,
            self._wire,
            client,
            subject=subjects.inbox_of(address),
            reply=subjects.return_for(address),
            capacity=self._capacity,
            window=self._window,
            on_dropped=lambda envelopes, error: self._dropped(
                address, envelopes, error
            ),
            numbers=peer.numbers,
        )
        self.outbounds[address] = outbound
        wire = self._wire
        self.credits[address] = Credits(
            self._share if peer.share is None else peer.share,
            outbound.try_put,
            outbound.put,
            lambda path, query: outbound.put_system(wire.credit_query(path, query)),
        )
        written = anyio.Event()
        self._writers.add(written)
        tg.start_soon(_write, outbound, written, self._writers)
        # The share handshake: ours, out of band, ahead of anything buffered
        # (asking for the peer's when it has not told us yet).
        with suppress(NodeUnreachable):
            outbound.put_urgent(wire.share(self._share, peer.share is None))
        return outbound

    def shared(self, address: NodeAddress, share: int, ask: bool) -> None:
        """``address`` advertised its ``share`` (checked by the caller to be
        within 1 and ``MAX_SHARE``): the credits to it count against it from
        now on; ``ask``: answer with ours (making its buffer, which sends
        ours by itself, or out of band on the buffer there is)."""
        peer = self.peers.get(address)
        if peer is None:
            return
        peer.share = share
        if peer.heard is not None:
            peer.heard.set()
        credits = self.credits.get(address)
        if credits is not None:
            credits.reshare(share)
        if ask and self.open:
            had = address in self.outbounds
            outbound = self.outbound(address)
            if had and outbound is not None:
                with suppress(NodeUnreachable):
                    outbound.put_urgent(self._wire.share(self._share, False))

    async def handshake(self, address: NodeAddress, timeout: float) -> None:
        """Start the share handshake with ``address`` (making its buffer,
        which sends this node's share) and wait at most ``timeout`` seconds
        for its answer (a lookup does, so the tells that follow it count
        against the peer's share from the first). Returns either way: until
        it is heard, the credits count against this node's own share."""
        try:
            outbound = self.outbound(address)
        except SystemNotRunning:
            return
        peer = self.peers.get(address)
        if outbound is None or peer is None or peer.share is not None:
            return
        heard = peer.heard
        if heard is None:
            heard = peer.heard = anyio.Event()
        with anyio.move_on_after(timeout):
            await heard.wait()

    def credits_of(self, address: NodeAddress) -> Credits | None:
        """The credits of ``address`` (made with its buffer), or None when it
        is gone.

        Raises:
            SystemNotRunning: the node is not connected, or stopping.
        """
        if self.outbound(address) is None:
            return None
        return self.credits[address]

    def grant(self, address: NodeAddress, path: str, count: int) -> None:
        """Give ``address`` back ``count`` credits for ``path`` (out of band)."""
        outbound = self.outbound(address) if self.open else None
        if outbound is not None:
            with suppress(NodeUnreachable):
                outbound.put_urgent(self._wire.credit(path, count))

    def is_reachable(self, address: NodeAddress) -> bool:
        """Whether ``address`` is not known to be gone, nor suspected."""
        if not self.open or address in self.gone:
            return False
        peer = self.peers.get(address)
        return peer is None or not peer.suspect

    def statistics(self) -> dict[NodeAddress, PeerStatistics]:
        """Each known peer's counters now."""
        stats = {}
        for address, peer in list(self.peers.items()):
            sent = None if peer.outbound is None else peer.outbound.statistics()
            received = peer.received
            credits = self.credits.get(address)
            lanes = None if credits is None else credits.statistics()
            outstanding, held = self.held_from(address)
            stats[address] = PeerStatistics(
                0 if sent is None else sent.frames,
                0 if sent is None else sent.bytes,
                0 if sent is None else sent.envelopes,
                0 if sent is None else sent.batches,
                0 if sent is None else sent.returned,
                0 if received is None else received.frames,
                0 if received is None else received.bytes,
                0 if received is None else received.envelopes,
                sent is not None,
                received is not None,
                0 if lanes is None else lanes.lanes,
                0 if lanes is None else lanes.outstanding,
                0 if lanes is None else lanes.waiting,
                0 if lanes is None else lanes.refused,
                outstanding,
                held,
                0 if peer.share is None else peer.share,
            )
        return stats

    # -- what did not go out -------------------------------------------------------

    def _dropped(
        self, address: NodeAddress, envelopes: list[bytes], error: BaseException
    ) -> None:
        """Envelopes to ``address`` that were not published (our own bytes,
        decoded to know what they were): asks fail, tells are dead letters."""
        for data in envelopes:
            try:
                envelope = decode_envelope(data)
            except DecodeError:
                continue
            kind = type(envelope)
            if kind is AskEnvelope:
                assert isinstance(envelope, AskEnvelope)
                self._fail_ask(envelope.ask_id, _unreachable(address, error))
            elif kind is TellEnvelope:
                assert isinstance(envelope, TellEnvelope)
                message: object
                try:
                    message = self._codec.decode(envelope.tag, envelope.body)
                except DecodeError:
                    message = bytes(envelope.body)
                ref = self._remote_ref(
                    RefAddress(address.node, address.incarnation, envelope.path)
                )
                self._dead_letter(ref, message, "node unreachable", address)

    # -- suspects and loss ---------------------------------------------------------

    def returned(self, msg: Msg) -> None:
        """NATS's no-responders status for a frame to a peer: nobody listened
        on the peer's inbox when it arrived. The peer stopped, or it is
        between connections (a broker restart): the frame's asks fail and
        its tells are dead letters, and the peer is monitored until it
        answers a heartbeat or the failure detector declares it down."""
        if msg.status != 503 or not self.open:
            return
        returned = self._subjects.returned_frame(msg.subject)
        if returned is None:
            return
        address, seq = returned
        peer = self.peers.get(address)
        if peer is None:
            return  # gone, retired, or never sent to: nothing of ours came back
        outbound = peer.outbound
        if outbound is not None and seq is not None:
            outbound.returned(
                seq,
                NodeUnreachable(
                    f"nobody listened on node {address} when a frame arrived (it "
                    "stopped, or was between connections)"
                ),
            )
        if not peer.suspect:
            peer.suspect = True
            self._monitor.depend(address)

    def alive(self, address: NodeAddress) -> None:
        """``address`` answered a heartbeat: no longer a suspect."""
        self._monitor.acked(address)
        peer = self.peers.get(address)
        if peer is not None and peer.suspect:
            peer.suspect = False
            self._monitor.undepend(address)

    def lose(self, address: NodeAddress, error: NodeUnreachable) -> None:
        """``address`` is gone for good: drop its state, abort its buffer
        (what it held goes to the dead letters and failed asks)."""
        gone = self.gone
        gone[address] = anyio.current_time() + self._gone_ttl
        if len(gone) > self.max_peers:
            del gone[next(iter(gone))]  # the oldest
        self.retired.pop(address, None)
        self._monitor.unmonitor(address)
        self.peers.pop(address, None)
        outbound = self.outbounds.pop(address, None)
        if outbound is not None:
            outbound.abort(error)
        credits = self.credits.pop(address, None)
        if credits is not None:
            credits.close(error)

    def send_heartbeat(self, address: NodeAddress, seq: int) -> None:
        """The monitor's ``send``: a heartbeat to ``address``, out of band
        (none once the node is stopping: its buffers are closed)."""
        if not self.open:
            return
        outbound = self.outbound(address)
        if outbound is not None:
            with suppress(NodeUnreachable):  # aborted meanwhile: gone
                outbound.put_urgent(self._wire.heartbeat(seq))

    def ack(self, address: NodeAddress, received: Received) -> None:
        """Ack what came from ``address`` so far (out of band)."""
        received.unacked = 0
        outbound = self.outbound(address)
        if outbound is not None:
            with suppress(NodeUnreachable):
                outbound.put_urgent(self._wire.ack(received.seq))

    # -- stopping ------------------------------------------------------------------

    async def close(self) -> None:
        """Stop taking envelopes, and wait until every writer has published
        what it holds."""
        self.open = False
        for outbound in self.outbounds.values():
            outbound.close()
        for credits in self.credits.values():
            credits.close(NodeUnreachable("the remote layer is stopping"))
        for written in list(self._writers):
            await written.wait()

    def abort(self, error: BaseException) -> None:
        """Drop whatever is still buffered (the node has stopped)."""
        self.open = False
        for outbound in self.outbounds.values():
            outbound.abort(error)
        for credits in self.credits.values():
            credits.close(error)


async def _write(
    outbound: Outbound, written: anyio.Event, writers: set[anyio.Event]
) -> None:
    try:
        await outbound.run()
    finally:
        writers.discard(written)
        written.set()


def _unreachable(peer: NodeAddress, cause: BaseException) -> NodeUnreachable:
    if isinstance(cause, NodeUnreachable):
        return cause
    error = NodeUnreachable(f"node {peer} is unreachable: {cause}")
    error.__cause__ = cause
    return error
