"""Remote death watch, both ways, and ``RemoteRef.join``.

Watching a remote actor sends a watch envelope to its node, once per actor
however many local watchers it has, and depends on that node (heartbeats): a
node declared down (or gone) gives every watcher ``Terminated(ref, NodeDown)``.
The watched node remembers which peers watch which of its actors (by the path
they used) and sends each a death envelope when the actor terminates, after
what the actor sent them before (FIFO per pair): one ``Terminated`` per watcher,
with the actor's reason transported by the codec. A watch of an actor that is
not there is answered at once with a death (``ActorNotFound``).

A pool across processes (``RemotePoolRef``) is watched through its
coordinator, a local actor: its watchers get ``Terminated(pool, reason)``
when the coordinator terminates (the pool stopped).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import anyio

from .. import ActorRef
from ..extension import RemoteHost
from ._errors import ActorNotFound, FrameTooLarge, NodeDown, NodeUnreachable
from ._heartbeat import HeartbeatMonitor
from ._local import Local
from ._node import NodeAddress, RefAddress
from ._peers import Peers
from ._ref import RemoteRef
from ._wire import Wire

__all__ = ["MAX_REMOTE_WATCHES", "Watch"]

#: The most watches of local actors by other nodes a node keeps.
MAX_REMOTE_WATCHES = 65536


class _Joiner:
    """A ``RemoteRef.join()`` waiting, watching like an actor would."""

    __slots__ = ("event", "reason")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.reason: object = None

    def terminated(self, reason: object) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()


class Watch:
    """The remote death watch of one node (see the module doc).

    Args:
        wire: the node's encoder.
        peers: the peer table.
        monitor: the heartbeat monitor (watched nodes are depended on).
        local: this node's actors.
        host: the system the node joined (its watchers, its actors' deaths).
        remote_ref: makes the remote ref of an address.
    """

    def __init__(
        self,
        wire: Wire,
        peers: Peers,
        monitor: HeartbeatMonitor,
        local: Local,
        host: RemoteHost,
        remote_ref: Callable[[RefAddress], RemoteRef[Any]],
    ) -> None:
        self._wire = wire
        self._peers = peers
        self._monitor = monitor
        self._local = local
        self._host = host
        self._remote_ref = remote_ref
        #: Local watchers (actor tokens, joiners) of other nodes' actors.
        self.watchers: dict[RefAddress, set[object]] = {}
        #: Local actors other nodes watch: by the path they used, the peers.
        self.watched: dict[ActorRef[Any], dict[str, set[NodeAddress]]] = {}
        #: How many (peer, actor) watches ``watched`` holds: at most
        #: ``MAX_REMOTE_WATCHES`` (a watch beyond is refused, counted).
        self.remote_watches = 0
        #: Pools watched here: by their coordinator, the pool's ref and its
        #: watchers.
        self.pools: dict[ActorRef[Any], tuple[ActorRef[Any], set[object]]] = {}

    # -- this node watches ---------------------------------------------------------

    def watch(self, watcher: object, ref: RemoteRef[Any]) -> None:
        """``watcher`` (an actor's token, or a joiner) watches ``ref``."""
        address = ref.address
        peer = ref.node
        watchers = self.watchers.get(address)
        if watchers is None:
            outbound = None
            if self._peers.open:
                outbound = self._peers.outbound(peer)
            if outbound is None:
                self._notify(watcher, ref, NodeDown(peer, math.inf))
                return
            outbound.put_system(self._wire.watch(address.path))
            watchers = self.watchers[address] = set()
            self._monitor.depend(peer)  # heartbeats: a silent node is down
        watchers.add(watcher)

    def unwatch(self, watcher: object, ref: RemoteRef[Any]) -> None:
        """``watcher`` no longer watches ``ref`` (nothing if it did not)."""
        address = ref.address
        watchers = self.watchers.get(address)
        if watchers is None:
            return
        watchers.discard(watcher)
        if not watchers:
            del self.watchers[address]
            peer = ref.node
            self._monitor.undepend(peer)
            outbound = self._peers.outbounds.get(peer)
            if outbound is not None:
                with suppress(NodeUnreachable):
                    outbound.put_system(self._wire.unwatch(address.path))

    async def join(self, ref: RemoteRef[Any]) -> object:
        """Wait until ``ref``'s actor has terminated; its reason."""
        joiner = _Joiner()
        self.watch(joiner, ref)
        try:
            await joiner.event.wait()
        finally:
            if not joiner.event.is_set():
                self.unwatch(joiner, ref)
        return joiner.reason

    def watch_pool(
        self, watcher: object, pool: ActorRef[Any], coordinator: ActorRef[Any]
    ) -> None:
        """``watcher`` watches the pool across processes ``pool``, whose
        coordinator is the local actor ``coordinator``."""
        entry = self.pools.get(coordinator)
        if entry is None:
            alive, reason = self._host.watch_local(coordinator)
            if not alive:
                self._host.terminated(watcher, pool, reason)
                return
            entry = self.pools[coordinator] = (pool, set())
        entry[1].add(watcher)

    def unwatch_pool(self, watcher: object, coordinator: ActorRef[Any]) -> None:
        """``watcher`` no longer watches the pool of ``coordinator``."""
        entry = self.pools.get(coordinator)
        if entry is not None:
            entry[1].discard(watcher)

    def _notify(self, watcher: object, ref: ActorRef[Any], reason: object) -> None:
        if type(watcher) is _Joiner:
            watcher.terminated(reason)
        else:
            self._host.terminated(watcher, ref, reason)

    def dying(self, sender: NodeAddress, path: str) -> set[object] | None:
        """A death of ``path`` came from ``sender``: its watchers (no longer
        watching), or None when nobody here watched it."""
        watchers = self.watchers.pop(
            RefAddress(sender.node, sender.incarnation, path), None
        )
        if watchers is not None:
            self._monitor.undepend(sender)
        return watchers

    def died(
        self, sender: NodeAddress, path: str, watchers: set[object], reason: object
    ) -> None:
        """Tell ``watchers`` (from ``dying``) that ``path`` on ``sender``
        terminated with ``reason``."""
        ref = self._remote_ref(RefAddress(sender.node, sender.incarnation, path))
        for watcher in watchers:
            self._notify(watcher, ref, reason)

    def peer_lost(self, peer: NodeAddress, down: NodeDown) -> None:
        """``peer`` is gone: every watcher of its actors gets ``down``."""
        for address in [a for a in self.watchers if a.node_address == peer]:
            watchers = self.watchers.pop(address)
            self._monitor.undepend(peer)
            ref = self._remote_ref(address)
            for watcher in watchers:
                self._notify(watcher, ref, down)

    # -- other nodes watch this node's actors ------------------------------------

    def watched_by(self, peer: NodeAddress, path: str) -> None:
        """``peer`` watches the local actor at ``path``."""
        ref = self._local.find(path)
        if ref is None:
            error = ActorNotFound(f"no actor {path!r} on node {self._local.address}")
            self._send_death(peer, path, error)
            return
        alive, reason = self._host.watch_local(ref)
        if not alive:
            self._send_death(peer, path, reason)
            return
        peers = self.watched.setdefault(ref, {}).setdefault(path, set())
        if peer not in peers:
            peers.add(peer)
            self.remote_watches += 1

    def unwatched_by(self, peer: NodeAddress, path: str) -> None:
        """``peer`` no longer watches the local actor at ``path``."""
        ref = self._local.find(path)
        if ref is not None:
            peers = self.watched.get(ref, {}).get(path)
            if peers is not None and peer in peers:
                peers.discard(peer)
                self.remote_watches -= 1

    def local_terminated(self, ref: ActorRef[Any], reason: object) -> None:
        """A local actor other nodes (or local watchers of its pool) watch
        terminated: each node gets one death notice, after what the actor
        sent it before; each watcher of its pool a ``Terminated``."""
        pool = self.pools.pop(ref, None)
        if pool is not None:
            pool_ref, watchers = pool
            for watcher in watchers:
                self._host.terminated(watcher, pool_ref, reason)
        paths = self.watched.pop(ref, None)
        if paths is None:
            return
        self.remote_watches -= sum(len(peers) for peers in paths.values())
        if not self._peers.open:
            return
        for path, peers in paths.items():
            for peer in peers:
                self._send_death(peer, path, reason)

    def _send_death(self, peer: NodeAddress, path: str, reason: object) -> None:
        outbound = self._peers.outbound(peer)
        if outbound is None:
            return
        try:
            envelope = self._wire.death(path, reason)
        except TypeError:  # a reason the codec does not know
            envelope = self._wire.death(path, RuntimeError(repr(reason)))
        with suppress(NodeUnreachable, FrameTooLarge):
            outbound.put_system(envelope)
