"""A started node's parts, wired to each other, and its life from connected
to stopped (``Remote`` is the façade over them; see docs/architecture.md).

The parts, each one concept: ``Local`` (this node's actors, names, dead
letters), ``HeartbeatMonitor`` (who is depended on, who is down), ``Peers``
(the peer table and its outbound buffers), ``Asks`` (outgoing asks and
lookups), ``Serving`` (inbound asks), ``Watch`` (remote death watch) and
``Inbound`` (where bytes from the network become actions). A part calls
another directly when it is made after it, and through one of the
callbacks here when it is made before it (a peer lost, an ask dropped, bad
input).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from .. import SystemNotRunning
from ..channel.lowlevel import current_backend
from ..extension import RemoteHost
from ..nats import Client, Subscription
from ._asks import Asks
from ._codec import Codec
from ._errors import NodeDown, NodeUnreachable
from ._failure_detector import PhiAccrualFailureDetector
from ._heartbeat import HeartbeatMonitor
from ._inbound import Inbound
from ._local import Local
from ._node import NodeAddress, RefAddress
from ._peers import Peers
from ._ref import Owner, RemoteRef
from ._secret import Secret
from ._serving import Serving
from ._shares import Shares
from ._subjects import Subjects
from ._watch import Watch
from ._wire import Wire

__all__ = ["Parts"]


class Config(Owner, Protocol):
    """The node's configuration (``Remote``'s attributes), and the owner of
    the remote refs made here."""

    codec: Codec
    node_name: str
    system_name: str
    prefix: str
    #: of each peer's outbound buffer
    capacity: int
    window: int
    #: messages outstanding per remote actor (``_credits``, ``_shares``)
    share: int
    #: of the heartbeat monitor
    heartbeat_interval: float
    failure_detector: Callable[[], PhiAccrualFailureDetector]
    #: of inbound asks (None: as long as the actor takes)
    serve_timeout: float | None
    #: the cluster secret's keys (None: the trusted-broker mode)
    secret: tuple[bytes, ...] | None
    #: of the peer table
    max_peers: int
    gone_ttl: float
    idle_timeout: float


class Parts:
    """The parts of one started node (see the module doc).

    Args:
        config: the façade (its configuration; the owner of the remote refs
            made here).
        host: the system the node joined.
    """

    def __init__(self, config: Config, host: RemoteHost) -> None:
        self._owner = config
        codec = config.codec
        node_name, system_name = config.node_name, config.system_name
        prefix, serve_timeout = config.prefix, config.serve_timeout
        capacity, window = config.capacity, config.window
        heartbeat_interval = config.heartbeat_interval
        failure_detector = config.failure_detector
        self.host = host
        self.client: Client | None = None
        #: The node's inbox subscriptions (set by ``subscribe``).
        self.inboxes: tuple[Subscription, ...] = ()
        self.address = address = NodeAddress.new(node_name)
        self.subjects = subjects = Subjects(system_name, address, prefix=prefix)
        keys = config.secret
        secret = None if keys is None else Secret(keys)
        self.wire = wire = Wire(codec, address, secret)
        self.local = local = Local(host, address, self.remote_ref)
        self.monitor = monitor = HeartbeatMonitor(
            self._send_heartbeat,
            self._on_down,
            interval=heartbeat_interval,
            detector=failure_detector,
        )
        self.peers = peers = Peers(
            wire,
            subjects,
            codec,
            monitor,
            capacity=capacity,
            window=window,
            share=config.share,
            max_peers=config.max_peers,
            gone_ttl=config.gone_ttl,
            idle_timeout=config.idle_timeout,
            fail_ask=self._fail_ask,
            dead_letter=local.dead_letter,
            remote_ref=self.remote_ref,
        )
        self.asks = asks = Asks(
            wire,
            Wire(codec, None, secret),
            peers,
            monitor,
            local,
            subjects,
            system_name,
            current_backend(),
            host.answer_deadlines(),
        )
        self.serving = serving = Serving(
            wire, peers, local, host, serve_timeout, self._bad
        )
        self.shares = shares = Shares(host, local, config.share, peers.grant)
        peers.held_from = shares.held_from
        self.watch = watch = Watch(wire, peers, monitor, local, host, self.remote_ref)
        self.inbound = Inbound(
            address,
            codec,
            wire,
            peers,
            local,
            serving,
            asks,
            watch,
            shares,
            secret,
        )
        self._prune_interval = min(heartbeat_interval, config.idle_timeout)
        peers.evict = self._evict

    def remote_ref(self, address: RefAddress) -> RemoteRef[Any]:
        """The remote ref of ``address``."""
        return RemoteRef(self._owner, address)

    def max_payload(self) -> int:
        """The server's ``max_payload`` now, in bytes.

        Raises:
            SystemNotRunning: the node is not connected.
        """
        client = self.client
        if client is None:
            raise SystemNotRunning("the remote layer is not connected")
        return client.max_payload

    # -- the callbacks of the parts made first -------------------------------------

    def _bad(self, peer: object, cause: str, error: BaseException) -> None:
        self.inbound.bad(peer, cause, error)

    def _send_heartbeat(self, peer: NodeAddress, seq: int) -> None:
        self.peers.send_heartbeat(peer, seq)

    def _fail_ask(self, ask_id: int, error: NodeUnreachable) -> None:
        self.asks.fail(ask_id, error)

    def _on_down(self, event: NodeDown) -> None:
        """The failure detector declared ``event.node`` down: it is gone for
        good. Its buffer is dropped, its asks fail, the watchers of its
        actors get ``Terminated(ref, event)``."""
        error = NodeUnreachable(f"node {event.node} was declared down")
        error.__cause__ = event
        self.peers.lose(event.node, error)
        self.shares.peer_lost(event.node)
        self.asks.peer_lost(event.node, error)
        self.watch.peer_lost(event.node, event)

    def _evict(self, peer: NodeAddress) -> None:
        """A suspect declared down to make room in a full peer table."""
        self._on_down(NodeDown(peer, math.inf))

    # -- life ----------------------------------------------------------------------

    async def subscribe(self, client: Client) -> None:
        """Subscribe the node's inboxes (its incarnation's, its name's queue
        group) and the returns of its frames, then flush (the server has
        them all)."""
        subjects = self.subjects
        on_frame = self.inbound.on_frame
        self.inboxes = (
            await client.subscribe(subjects.inbox, callback=on_frame),
            await client.subscribe(subjects.name, subjects.queue, callback=on_frame),
        )
        await client.subscribe(subjects.returns, callback=self.peers.returned)
        await client.flush()

    def connected(self, client: Client, tg: Any) -> None:
        """The node is connected through ``client``; its tasks run in
        ``tg``: frames are accepted from now on."""
        self.client = client
        self.peers.attach(client, tg)
        self.asks.attach(client)
        self.serving.attach(client, tg)
        self.shares.attach(tg)
        self.inbound.attach(client)
        tg.start_soon(self.monitor.run)
        tg.start_soon(self.peers.run_pruning, self._prune_interval)

    async def leave(self) -> None:
        """Deliver no more frames (their tells are dead letters, their asks
        fail), wait until the answers of the asks being served are sent
        (the actors have stopped: those asks have failed), then drain the
        inboxes."""
        self.inbound.leaving()
        await self.serving.wait_idle()
        # What the server routed here comes (dead letters, failed asks);
        # a frame sent later returns to its sender as no-responders, which
        # counts it there (its asks fail at once): nothing lost unseen.
        for inbox in self.inboxes:
            await inbox.drain()

    async def flush(self) -> None:
        """Take no more envelopes; wait until the writers have published
        what is buffered."""
        await self.peers.close()

    def stopped(self) -> None:
        """The node has stopped: what is still buffered is dropped, the asks
        in flight fail."""
        self.inbound.accepting = False
        error = SystemNotRunning("the remote layer has stopped")
        self.peers.abort(error)
        self.asks.stopped(error)
